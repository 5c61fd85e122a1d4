//! The files written after the reports, for a leak that is to be taken
//! upstream: issue drafts (`--issue-draft DIR`, or beside `--html` when a
//! dependency or Node holds the leak) and the redacted evidence bundle
//! (`--evidence DIR`). Shared by every measuring command and `report`.

use crate::model::RunResult;
use crate::report::{OutputProps, OutputTarget};

/// Writes the drafts and the bundle the output asks for; `say` reports
/// each on the progress line.
pub fn write_exports(
    result: &RunResult,
    output: &OutputProps,
    say: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let written = drafts_and_bundle(result, output, say);
    // The unredacted snapshots written only for the bundle go, whatever
    // happened to it.
    crate::evidence::forget_raw_snapshots(result);
    written
}

fn drafts_and_bundle(
    result: &RunResult,
    output: &OutputProps,
    say: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let html = match &output.html {
        Some(OutputTarget::File(path)) => Some(path.as_path()),
        _ => None,
    };
    let drafts = crate::report::issue_draft::write(result, output.issue_draft.as_deref(), html)?;
    for path in drafts {
        say(&format!("issue draft: {}", path.display()));
    }
    let Some(dir) = &output.evidence else {
        return Ok(());
    };
    let files = crate::evidence::write(result, dir)?;
    let snapshots = files
        .iter()
        .filter(|f| f.ends_with(".heapsnapshot"))
        .count();
    say(&format!(
        "evidence: {} files in {} ({snapshots} redacted snapshots, manifest.json)",
        files.len() + 1,
        dir.display()
    ));
    if snapshots == 0 {
        say("evidence: no snapshots: no route was diagnosed (the reports are in the bundle)");
    }
    Ok(())
}

/// The command line that runs this check, for a report that says how to
/// reproduce it: leakcheck's own arguments with secrets hidden.
pub fn invocation() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut words = vec!["leakcheck".to_string()];
    words.extend(crate::redact::arguments(&args));
    crate::report::issue_draft::shell_line(&words)
}
