//! Reaching a target leakcheck did not start, and the `sample` and
//! `snapshot` commands that only attach.

use crate::report::OutputTarget;
use clap::Args;

use super::run::parse_counters;

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

/// The attach choice, as a plain value.
#[derive(Debug, Clone, PartialEq)]
pub enum Attach {
    Inspect(String),
    Pid(u32),
    Endpoints(String),
    Proc(u32),
}

impl AttachArgs {
    pub fn choice(&self) -> Option<Attach> {
        let this = &self.choice;
        if let Some(spec) = &this.inspect {
            Some(Attach::Inspect(spec.clone()))
        } else if let Some(pid) = this.pid {
            Some(Attach::Pid(pid))
        } else if let Some(base) = &this.endpoints {
            Some(Attach::Endpoints(base.clone()))
        } else {
            this.proc_pid.map(Attach::Proc)
        }
    }
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

/// `leakcheck sample`, free of clap.
#[derive(Debug, Clone)]
pub struct SampleProps {
    pub attach: Attach,
    pub url: Option<String>,
    pub gc: bool,
    pub counters: Vec<crate::probe::Counter>,
    pub json: Option<OutputTarget>,
    pub allow_remote_inspector: bool,
}

impl SampleArgs {
    pub fn into_props(self) -> anyhow::Result<SampleProps> {
        let attach = self.attach.choice().ok_or_else(|| {
            anyhow::anyhow!("say which process to read: --inspect HOST:PORT, --pid PID, --endpoints URL or --proc PID")
        })?;
        Ok(SampleProps {
            attach,
            url: self.url,
            gc: self.gc,
            counters: parse_counters(&self.counters)?,
            json: self.json,
            allow_remote_inspector: self.attach.allow_remote_inspector,
        })
    }
}

/// `leakcheck snapshot`, free of clap.
#[derive(Debug, Clone)]
pub struct SnapshotProps {
    pub attach: Attach,
    pub output: std::path::PathBuf,
    pub gc: bool,
    pub allow_remote_inspector: bool,
}

impl SnapshotArgs {
    pub fn into_props(self) -> anyhow::Result<SnapshotProps> {
        let attach = match self.attach.choice() {
            Some(a @ (Attach::Inspect(_) | Attach::Pid(_))) => a,
            _ => anyhow::bail!(
                "a snapshot needs the inspector: give --inspect HOST:PORT or --pid PID"
            ),
        };
        Ok(SnapshotProps {
            attach,
            output: self.output,
            gc: self.gc,
            allow_remote_inspector: self.attach.allow_remote_inspector,
        })
    }
}
