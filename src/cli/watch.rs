//! `leakcheck watch`: judge a live process under its own traffic.

use std::time::Duration;

use clap::Args;

use super::OutputArgs;
use crate::report::OutputTarget;
use crate::units::{parse_bytes, parse_duration};

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Watch a running Node process: its inspector is opened with SIGUSR1
    /// on 127.0.0.1 (and closed again on exit if leakcheck opened it).
    /// Repeat it for several; a primary's Node workers are watched with it.
    #[arg(long, value_name = "PID", conflicts_with = "inspect")]
    pub pid: Vec<u32>,
    /// Watch every Node process this user may attach to, and those that
    /// start later (narrow it with --match or --cgroup-of).
    #[arg(long, conflicts_with = "inspect")]
    pub all: bool,
    /// With --all: only processes whose command line contains PATTERN.
    #[arg(long = "match", value_name = "PATTERN", requires = "all")]
    pub pattern: Option<String>,
    /// With --all: only processes in the same cgroup (container, systemd
    /// unit) as PID.
    #[arg(long, value_name = "PID", requires = "all")]
    pub cgroup_of: Option<u32>,
    /// Serve the verdicts in Prometheus's text format at
    /// http://HOST:PORT/metrics (`127.0.0.1:9464`; loopback unless
    /// --metrics-public), for Prometheus or an OpenTelemetry collector.
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics: Option<String>,
    /// Allow --metrics on an address other machines can reach.
    #[arg(long, requires = "metrics")]
    pub metrics_public: bool,
    /// The span a watch without -d judges: older readings leave the
    /// judgement and memory, not the checkpoint [default: 1h].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub window: Option<Duration>,
    /// Watch through a running inspector: `HOST:PORT` or a `ws://` URL.
    #[arg(long, value_name = "HOST:PORT|ws://URL")]
    pub inspect: Option<String>,
    /// Allow an inspector that is not on this machine.
    #[arg(long)]
    pub allow_remote_inspector: bool,
    /// How long to watch (`90s`, `30m`, `12h`); without it, until Ctrl-C
    /// (or a decision with --until-decided).
    #[arg(short = 'd', long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Stop as soon as the trend decides (a leak with its projection, or flat).
    #[arg(long)]
    pub until_decided: bool,
    /// Also force a full collection this often (`30s`), for a reading of
    /// a heap whose own major collections are rare; each is a pause of
    /// the target, skipped while the last one took longer than --max-pause.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub force_gc_every: Option<Duration>,
    /// The longest full-collection pause leakcheck may cause: no collection
    /// is forced (--force-gc-every, or a sampling profile's read) once the
    /// last full one paused the target longer.
    #[arg(long, default_value = "50ms", value_parser = parse_duration)]
    pub max_pause: Duration,
    /// Bytes per sample of V8's sampling heap profiler, which names the
    /// allocation sites that grew (`512KB`; smaller costs the target more).
    #[arg(long, default_value = "512KB", value_parser = parse_bytes)]
    pub sample_interval: f64,
    /// Do not run the sampling heap profiler: no allocation sites, and no
    /// collection forced by reading its profile (about 12 a watch).
    #[arg(long)]
    pub no_sites: bool,
    /// At the end, take one heap snapshot if the memory left under the
    /// tightest limit exceeds twice the heap (a snapshot pauses the target
    /// and costs about its heap again while written).
    #[arg(long)]
    pub snapshot: bool,
    /// Where --snapshot's file goes (mode 0600) [default: beside the checkpoint].
    #[arg(long, value_name = "DIR", requires = "snapshot")]
    pub snapshots: Option<std::path::PathBuf>,
    /// The production container's memory limit (`2GB`), projected against
    /// with V8's heap limit and the cgroup's memory.max.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub memory_limit: Option<f64>,
    /// Append every reading and status to FILE as NDJSON as it arrives, so
    /// a watch that is killed loses nothing [default: leakcheck-watch-PID.ndjson].
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<std::path::PathBuf>,
    /// How long one call into the target may take before it is given up on.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub inspector_timeout: Duration,
    /// How long a launched command may take to open its inspector.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub ready_timeout: Duration,
    /// How long a launched command has to exit after SIGTERM before SIGKILL.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub grace: Duration,
    /// Write the result as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE", value_parser = OutputTarget::parse)]
    pub json: Option<OutputTarget>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// No progress output on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// A Node command to start and watch, after `--` (instead of --pid or
    /// --inspect); it is stopped when the watch ends.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}
