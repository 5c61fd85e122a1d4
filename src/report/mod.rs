//! Rendering a `RunResult`. One renderer per format behind `Exporter`;
//! the progress display lives in `progress`.

pub mod baseline;
pub mod bisect;
mod diagnosis_view;
pub mod heap;
pub mod html;
pub mod issue_draft;
mod json;
pub mod load_view;
mod loop_view;
mod markdown;
pub mod merge;
pub mod output;
mod paths;
pub mod progress;
pub mod ranking;
mod schedule_view;
mod series_view;
mod svg;
mod target_view;
mod terminal;
mod watch_view;

pub use html::HtmlExporter;
pub use json::JsonExporter;
pub use markdown::MarkdownExporter;
pub use output::{OutputProps, OutputTarget, to_stderr, to_stdout};
pub use terminal::TerminalExporter;

use crate::model::RunResult;

/// Turns a result into one output format.
pub trait Exporter {
    fn render(&self, result: &RunResult) -> anyhow::Result<String>;
}

/// Prints a command's human summary and writes its JSON where asked: the
/// summary goes to stdout, or to stderr when the JSON takes stdout.
pub fn emit_summary(
    summary: &str,
    json: Option<&OutputTarget>,
    render_json: impl FnOnce() -> anyhow::Result<String>,
) -> anyhow::Result<()> {
    if json.is_some_and(OutputTarget::is_stdout) {
        to_stderr(summary);
    } else {
        to_stdout(summary)?;
    }
    if let Some(target) = json {
        target.write(&render_json()?)?;
    }
    Ok(())
}

/// Pretty JSON with a final newline, for `emit_summary`.
pub fn pretty_json(value: &impl serde::Serialize) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// Writes every report the user asked for: the terminal table on stdout
/// (on stderr when another format takes stdout), then the files.
pub fn emit_all(result: &RunResult, output: &OutputProps) -> anyhow::Result<()> {
    let table = TerminalExporter.render(result)?;
    let stdout_taken = [&output.json, &output.markdown]
        .into_iter()
        .any(|t| t.as_ref().is_some_and(OutputTarget::is_stdout));
    if stdout_taken {
        to_stderr(&table);
    } else if let Err(error) = to_stdout(&table)
        && !output::is_broken_pipe(&error)
    {
        // A closed stdout loses only the table: the files still follow.
        return Err(error);
    }
    if let Some(comparison) = &result.comparison {
        for route in &comparison.routes {
            to_stderr(&format!("baseline: {}\n", route.message));
        }
    }
    let files: [(&Option<OutputTarget>, &dyn Exporter); 3] = [
        (&output.json, &JsonExporter),
        (&output.html, &HtmlExporter),
        (&output.markdown, &MarkdownExporter),
    ];
    for (path, exporter) in files {
        if let Some(target) = path {
            target.write(&exporter.render(result)?)?;
        }
    }
    Ok(())
}

/// Adds the comparison with `--baseline`, if one was asked for.
pub fn attach_comparison(result: &mut RunResult, output: &OutputProps) -> anyhow::Result<()> {
    if let Some(path) = &output.baseline {
        let previous = baseline::load_result(path)?;
        result.comparison = Some(baseline::compare(&previous, result, path, output.tolerance));
    }
    Ok(())
}
