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
    /// Many processes at once (`--pid P --pid Q`, `--all`, a primary with
    /// Node workers): one judgement per process, processes that start
    /// later picked up (`crate::watch::fleet`).
    Fleet(Selection),
    /// A command leakcheck starts (and stops when the watch ends).
    Launch {
        command: Vec<String>,
        ready_timeout: Duration,
        grace: Duration,
    },
}

/// Which processes a fleet watch takes, looked for again as it runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// `--pid`s given, each with its Node descendants (a cluster's or
    /// PM2's workers, found through their primary).
    pub pids: Vec<u32>,
    /// `--all`: every Node process this user may attach to.
    pub all: bool,
    /// `--match`: only processes whose command line contains it.
    pub pattern: Option<String>,
    /// `--cgroup-of PID`: only processes in that process's cgroup.
    pub cgroup_of: Option<u32>,
}

/// `--metrics`: where the Prometheus text endpoint listens.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsProps {
    pub addr: std::net::SocketAddr,
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
    /// The span an indefinite watch judges (`--window`): readings older
    /// than this leave the judgement (and memory), not the checkpoint.
    pub window: Option<Duration>,
    /// `--metrics HOST:PORT`.
    pub metrics: Option<MetricsProps>,
    pub output: OutputProps,
    pub quiet: bool,
}

impl WatchProps {
    /// The checkpoint file for process `pid`: `--checkpoint` when it names
    /// a file, else `leakcheck-watch-PID.ndjson` in its folder (or here).
    pub fn checkpoint_path(&self, pid: Option<u32>) -> PathBuf {
        let name = PathBuf::from(match pid {
            Some(pid) => format!("leakcheck-watch-{pid}.ndjson"),
            None => "leakcheck-watch.ndjson".to_string(),
        });
        match &self.checkpoint {
            Some(dir) if dir.is_dir() => dir.join(name),
            Some(file) => file.clone(),
            None => name,
        }
    }
}
