//! Report files, the release baseline, and `leakcheck report`.

use clap::Args;

use crate::report::OutputTarget;

/// Where results go besides the terminal, and what they are compared with.
#[derive(Debug, Args, Clone, Default)]
pub struct OutputArgs {
    /// Write a self-contained HTML report with charts to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE", value_parser = OutputTarget::parse)]
    pub html: Option<OutputTarget>,
    /// Write a Markdown summary to FILE (`-` for stdout), e.g. $GITHUB_STEP_SUMMARY.
    #[arg(long, value_name = "FILE", value_parser = OutputTarget::parse)]
    pub markdown: Option<OutputTarget>,
    /// Compare with a previous result (a `--json` file) and exit 1 when a route regresses.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<String>,
    /// How much growth against --baseline is tolerated, in percent.
    #[arg(long, value_name = "PERCENT", default_value_t = 20.0)]
    pub tolerance: f64,
    /// Write an issue draft per diagnosed leak to DIR (versions, retainer path,
    /// storing line, the command that reproduces it). Without it, a draft is
    /// written beside --html when a dependency or Node holds the leak.
    #[arg(long, value_name = "DIR")]
    pub issue_draft: Option<std::path::PathBuf>,
    /// Write a redacted evidence bundle to DIR: the diagnosis snapshots with
    /// every string value replaced by its length and a hash, the JSON and
    /// HTML reports, and a manifest; fit to attach to a public issue.
    #[arg(long, value_name = "DIR")]
    pub evidence: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result written by `leakcheck run --json FILE`.
    #[arg(required_unless_present = "merge")]
    pub result: Option<String>,
    /// Merge the JSON results of a run's shards (`run --shard I/N`), or a
    /// folder of them, into one result: one report, one baseline
    /// comparison, the exit code the whole run would have had.
    #[arg(long, value_name = "RESULT", num_args = 1.., conflicts_with = "result")]
    pub merge: Vec<String>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Write the (compared) result as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE", value_parser = OutputTarget::parse)]
    pub json: Option<OutputTarget>,
}
