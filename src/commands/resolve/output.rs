//! The report files and baseline, and `report`'s settings.

use crate::cli::{OutputArgs, ReportArgs};
use crate::report::{OutputProps, OutputTarget};
use crate::settings::{ReportProps, ReportSource};

impl OutputArgs {
    pub fn into_props(self, json: Option<OutputTarget>) -> anyhow::Result<OutputProps> {
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            anyhow::bail!("--tolerance must be a percentage of zero or more");
        }
        let to_stdout = [&json, &self.html, &self.markdown]
            .into_iter()
            .filter(|t| t.as_ref().is_some_and(OutputTarget::is_stdout))
            .count();
        if to_stdout > 1 {
            anyhow::bail!(
                "only one of --json, --html and --markdown can write to stdout (`-`): give the \
                 others a file"
            );
        }
        Ok(OutputProps {
            json,
            html: self.html,
            markdown: self.markdown,
            baseline: self.baseline,
            tolerance: self.tolerance / 100.0,
            issue_draft: self.issue_draft,
            evidence: self.evidence,
        })
    }
}

impl ReportArgs {
    pub fn into_props(self) -> anyhow::Result<ReportProps> {
        let output = self.output.into_props(self.json)?;
        let source = match self.result {
            Some(result) => ReportSource::Result(result),
            None => ReportSource::Merge(self.merge),
        };
        // A merge is the whole run's report: its table alone is worth it.
        if matches!(source, ReportSource::Result(_))
            && output.json.is_none()
            && output.html.is_none()
            && output.markdown.is_none()
            && output.baseline.is_none()
            && output.issue_draft.is_none()
            && output.evidence.is_none()
        {
            anyhow::bail!(
                "say what to render: --html FILE, --markdown FILE, --json FILE, --baseline FILE, \
                 --issue-draft DIR or --evidence DIR"
            );
        }
        Ok(ReportProps { source, output })
    }
}

/// Where the diagnosis writes its snapshots: `--snapshots DIR`, or with
/// `--evidence` alone a private folder of the system's temp directory that
/// the evidence bundle reads and then empties (`crate::evidence`): the
/// unredacted snapshots never sit inside the folder meant to be shared.
pub fn snapshots_kept(
    snapshots: Option<std::path::PathBuf>,
    evidence: Option<&std::path::Path>,
) -> Option<std::path::PathBuf> {
    snapshots.or_else(|| evidence.map(|_| crate::evidence::raw_snapshots_dir()))
}
