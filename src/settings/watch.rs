//! `leakcheck watch`'s settings, free of clap.

use std::path::PathBuf;
use std::time::Duration;

use crate::report::OutputProps;

/// Which process is watched.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchTarget {
    /// `--pid`: a running Node process, its inspector opened with SIGUSR1
    /// (and closed again on exit when leakcheck opened it).
    Pid(u32),
    /// `--inspect HOST:PORT|ws://URL`: a running inspector.
    Inspect(String),
    /// A command leakcheck starts (and stops when the watch ends).
    Launch {
        command: Vec<String>,
        ready_timeout: Duration,
        grace: Duration,
    },
}

#[derive(Debug, Clone)]
pub struct WatchProps {
    pub target: WatchTarget,
    pub allow_remote_inspector: bool,
    /// `-d`; `None`: until Ctrl-C (or a decision with `until_decided`).
    pub duration: Option<Duration>,
    pub until_decided: bool,
    pub force_gc_every: Option<Duration>,
    pub max_pause: Duration,
    /// Bytes per sample of V8's sampling heap profiler.
    pub sample_interval: u64,
    /// Run the sampling heap profiler (`--no-sites` turns it off).
    pub sites: bool,
    /// `--snapshot`: take one heap snapshot at the end when the headroom allows.
    pub snapshot: bool,
    /// Where the snapshot goes (mode 0600); `None`: beside the checkpoint.
    pub snapshots: Option<PathBuf>,
    /// `--memory-limit`, bytes.
    pub memory_limit: Option<u64>,
    /// The NDJSON file appended to as readings arrive; `None`: the default
    /// name in the working directory, chosen once the PID is known.
    pub checkpoint: Option<PathBuf>,
    /// How long one call into the target may take.
    pub inspector_timeout: Duration,
    pub output: OutputProps,
    pub quiet: bool,
}

impl WatchProps {
    /// The checkpoint file for process `pid`.
    pub fn checkpoint_path(&self, pid: Option<u32>) -> PathBuf {
        self.checkpoint.clone().unwrap_or_else(|| {
            PathBuf::from(match pid {
                Some(pid) => format!("leakcheck-watch-{pid}.ndjson"),
                None => "leakcheck-watch.ndjson".to_string(),
            })
        })
    }
}
