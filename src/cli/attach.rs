//! Reaching a target leakcheck did not start, and the `sample` and
//! `snapshot` commands that only attach.

use crate::report::OutputTarget;
use clap::Args;

/// How to reach a target leakcheck did not start (or how to read one it did).
#[derive(Debug, Args, Clone, Default)]
pub struct AttachArgs {
    #[command(flatten)]
    pub choice: AttachChoice,
    /// Allow attaching to an inspector that is not on this machine.
    #[arg(long)]
    pub allow_remote_inspector: bool,
}

/// At most one way of reaching the target.
#[derive(Debug, Args, Clone, Default)]
#[group(id = "attach", multiple = false)]
pub struct AttachChoice {
    /// Attach to a running inspector: `HOST:PORT` (its /json/list is read) or a `ws://` URL.
    #[arg(long, value_name = "HOST:PORT|ws://URL")]
    pub inspect: Option<String>,
    /// Open the inspector of a running Node process with SIGUSR1 and attach on 127.0.0.1.
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
    /// Read memory through the app's own `/mem` and `/gc` endpoints under this
    /// path (`/` for a server like the method's demo) or URL.
    #[arg(long, value_name = "PATH|URL")]
    pub endpoints: Option<String>,
    /// Read rss from /proc/PID (any language; no forced collection).
    #[arg(long = "proc", value_name = "PID")]
    pub proc_pid: Option<u32>,
}

#[derive(Debug, Args)]
pub struct SampleArgs {
    #[command(flatten)]
    pub attach: AttachArgs,
    /// Base URL of the app, for `--endpoints PATH`.
    #[arg(long)]
    pub url: Option<String>,
    /// Settle a full collection first (repeated until heapUsed stops falling).
    #[arg(long)]
    pub gc: bool,
    /// A counter, `NAME=EXPRESSION` (inspector only; repeatable).
    #[arg(long = "counter", value_name = "NAME=EXPR")]
    pub counters: Vec<String>,
    /// Write the reading as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE", value_parser = OutputTarget::parse)]
    pub json: Option<OutputTarget>,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub attach: AttachArgs,
    /// Where to write the snapshot (created with mode 0600).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: std::path::PathBuf,
    /// Settle a full collection first, so the file holds live objects only.
    #[arg(long)]
    pub gc: bool,
}
