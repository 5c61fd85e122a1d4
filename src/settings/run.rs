//! `leakcheck run`'s and `leakcheck soak`'s settings, in the four groups
//! every part of a run reads: what the target is and how it is reached,
//! what load a cycle sends, how the method judges and diagnoses, and where
//! the results go. Resolved once from the command line
//! (`commands/resolve/run.rs`); nothing below reads a flag.

use std::path::PathBuf;
use std::time::Duration;

use super::Attach;
use crate::report::OutputProps;
use crate::verdict::sequential::SequentialPlan;

/// Everything `leakcheck run` and `leakcheck soak` need, free of clap.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub target: TargetSettings,
    pub load: LoadSettings,
    pub method: MethodSettings,
    /// JSON, HTML and Markdown files, and the baseline to compare with.
    pub output: OutputProps,
    /// No progress on stderr.
    pub quiet: bool,
}

/// The target: its URL, the command that starts it (empty when attaching),
/// how it is reached and read, and how long it is waited for.
#[derive(Debug, Clone)]
pub struct TargetSettings {
    pub url: String,
    /// Empty when attaching to a running server.
    pub command: Vec<String>,
    /// How memory is read when not through the launched target's inspector.
    pub attach: Option<Attach>,
    pub allow_remote: bool,
    pub allow_remote_inspector: bool,
    pub ready_timeout: Duration,
    /// How long one reading may take.
    pub inspector_timeout: Duration,
    /// How long the target has to exit after SIGTERM before SIGKILL.
    pub grace: Duration,
    pub counters: Vec<crate::probe::Counter>,
    /// Restart the target before each route.
    pub fresh: bool,
    /// `--heap-limit`: a launched Node target's old space, in bytes
    /// (through `NODE_OPTIONS`, so launchers pass it on).
    pub heap_limit: Option<u64>,
    /// More environment for the launched command (`PORT` of a `-j`
    /// worker's target).
    pub env: Vec<(String, String)>,
}

impl TargetSettings {
    /// leakcheck starts (and stops) the target itself.
    pub fn launched(&self) -> bool {
        !self.command.is_empty()
    }
}

/// The work: routes, the schedule of cycles (or a soak's), and what one
/// unit of work is (a request, a scenario's iteration, an external driver).
#[derive(Debug, Clone)]
pub struct LoadSettings {
    pub routes: Vec<String>,
    /// Cycles per route; with `sequential`, the most small cycles the
    /// budget allows.
    pub cycles: u32,
    pub requests: u64,
    /// `--cycles auto`: stop when the verdict is decided.
    pub sequential: Option<SequentialPlan>,
    /// The smallest retention per request that must not pass as clean.
    pub resolution: f64,
    /// Each cycle ends at its units or at this time, whichever comes first.
    pub cycle_time: Option<Duration>,
    pub connections: usize,
    pub request: RequestProps,
    /// A soak's schedule (`leakcheck soak`) instead of cycles.
    pub soak: Option<SoakProps>,
    pub load_cmd: Option<String>,
    /// Where --load-cmd's logs are kept; `None`: a temporary folder.
    pub driver_logs: Option<PathBuf>,
    /// Find the routes (`crate::routes`) instead of a given list: `None`
    /// when routes are given, a scenario or a driver sends its own, or a
    /// soak (one route).
    pub discovery: Option<DiscoverySettings>,
    /// `--shard I/N`: check only this runner's part of the routes.
    pub shard: Option<crate::routes::shard::Shard>,
    /// `--max-time`: the whole run's time, shared among the routes.
    pub max_time: Option<Duration>,
    /// `-j`: routes checked side by side, each in its own target.
    pub jobs: usize,
}

/// Where the routes come from when none is given, and what is sent (the
/// routes module's own settings, so that it reads nothing above it).
pub use crate::routes::Discovery as DiscoverySettings;

/// How the method judges and explains: the CI gate, the diagnosis, the
/// loop statistics.
#[derive(Debug, Clone)]
pub struct MethodSettings {
    pub max_retained: Option<f64>,
    /// Name the holder of a retention with heap snapshots.
    pub diagnose: bool,
    /// Observe event-loop delay and collections during each cycle's load.
    pub loop_stats: bool,
    pub snapshots: Option<PathBuf>,
    /// Sample the heap and rss during each load (`--no-peak` turns it off).
    pub peak: bool,
    /// `--memory-limit`: the production container's limit, in bytes.
    pub memory_limit: Option<u64>,
    /// `--max-peak`: the CI gate on the load's peak, in bytes.
    pub max_peak: Option<u64>,
}

/// The schedule of `leakcheck soak`.
#[derive(Debug, Clone, PartialEq)]
pub struct SoakProps {
    pub duration: Duration,
    /// A settled reading this often.
    pub every: Duration,
    /// Requests per second; as fast as the connections go without.
    pub rate: Option<f64>,
}

/// The request options, as plain values.
#[derive(Debug, Clone)]
pub struct RequestProps {
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub timeout: Duration,
    pub scenario: Option<PathBuf>,
    pub abort: f64,
    /// No template in the method, headers or body (routes aside).
    pub fixed_headers_and_body: bool,
}

/// `leakcheck routes`: what `run` would be given, and where the list goes.
#[derive(Debug, Clone)]
pub struct RoutesProps {
    pub run: RunSettings,
    pub json: Option<crate::report::OutputTarget>,
}
