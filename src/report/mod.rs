//! Rendering a `RunResult`. One renderer per format behind `Exporter`;
//! the progress display lives in `progress`.

pub mod baseline;
pub mod html;
mod json;
pub mod load;
mod markdown;
pub mod progress;
mod svg;
mod terminal;

pub use html::HtmlExporter;
pub use json::JsonExporter;
pub use markdown::MarkdownExporter;
pub use terminal::TerminalExporter;

use crate::model::RunResult;

/// Turns a result into one output format.
pub trait Exporter {
    fn render(&self, result: &RunResult) -> anyhow::Result<String>;
}

/// Writes `text` to `path`, or to stdout for `-`.
pub fn write_output(path: &str, text: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    if path == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
        Ok(())
    } else {
        std::fs::write(path, text)
            .with_context(|| format!("cannot write {path}; check the directory exists"))
    }
}

/// Prints a command's human summary and writes its JSON where asked: the
/// summary goes to stdout, or to stderr when the JSON takes stdout (`-`).
pub fn emit_summary(
    summary: &str,
    json_path: Option<&str>,
    json: impl FnOnce() -> anyhow::Result<String>,
) -> anyhow::Result<()> {
    if json_path == Some("-") {
        eprint!("{summary}");
    } else {
        print!("{summary}");
    }
    if let Some(path) = json_path {
        write_output(path, &json()?)?;
    }
    Ok(())
}

/// Pretty JSON with a final newline, for `emit_summary`.
pub fn pretty_json(value: &impl serde::Serialize) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// Writes every report the user asked for: the terminal table on stdout
/// (on stderr when another format takes stdout), then the files.
pub fn emit_all(result: &RunResult, output: &crate::cli::OutputProps) -> anyhow::Result<()> {
    let table = TerminalExporter.render(result)?;
    let stdout_taken =
        output.json.as_deref() == Some("-") || output.markdown.as_deref() == Some("-");
    if stdout_taken {
        eprint!("{table}");
    } else {
        print!("{table}");
    }
    if let Some(comparison) = &result.comparison {
        for route in &comparison.routes {
            eprintln!("baseline: {}", route.message);
        }
    }
    let files: [(&Option<String>, &dyn Exporter); 3] = [
        (&output.json, &JsonExporter),
        (&output.html, &HtmlExporter),
        (&output.markdown, &MarkdownExporter),
    ];
    for (path, exporter) in files {
        if let Some(path) = path {
            write_output(path, &exporter.render(result)?)?;
        }
    }
    Ok(())
}

/// Adds the comparison with `--baseline`, if one was asked for.
pub fn attach_comparison(
    result: &mut RunResult,
    output: &crate::cli::OutputProps,
) -> anyhow::Result<()> {
    if let Some(path) = &output.baseline {
        let previous = baseline::load_result(path)?;
        result.comparison = Some(baseline::compare(&previous, result, path, output.tolerance));
    }
    Ok(())
}
