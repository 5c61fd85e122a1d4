//! Report files, the release baseline, and `leakcheck report`.

use clap::Args;

pub use crate::report::OutputProps;
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
}

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
        })
    }
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result written by `leakcheck run --json FILE`.
    pub result: String,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Write the (compared) result as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE", value_parser = OutputTarget::parse)]
    pub json: Option<OutputTarget>,
}

/// `leakcheck report`, free of clap.
#[derive(Debug, Clone)]
pub struct ReportProps {
    pub result: String,
    pub output: OutputProps,
}

impl ReportArgs {
    pub fn into_props(self) -> anyhow::Result<ReportProps> {
        let output = self.output.into_props(self.json)?;
        if output.json.is_none()
            && output.html.is_none()
            && output.markdown.is_none()
            && output.baseline.is_none()
        {
            anyhow::bail!(
                "say what to render: --html FILE, --markdown FILE, --json FILE or --baseline FILE"
            );
        }
        Ok(ReportProps {
            result: self.result,
            output,
        })
    }
}
