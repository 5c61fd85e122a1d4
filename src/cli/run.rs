//! `leakcheck run`, and the request options it shares with `load`.

use crate::report::OutputTarget;
use std::time::Duration;

use clap::Args;

use super::{AttachArgs, OutputArgs};
use crate::units::{parse_bytes, parse_count, parse_duration};

/// Options of the request each cycle sends.
#[derive(Debug, Args, Clone)]
pub struct RequestArgs {
    /// HTTP method (a scenario's steps name their own).
    #[arg(short = 'm', long, default_value = "GET", conflicts_with = "scenario")]
    pub method: String,
    /// Extra request header, `Name: value` (repeatable); with --scenario,
    /// sent by every step that does not set it.
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,
    /// Request body.
    #[arg(short = 'b', long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Request body read from a file.
    #[arg(long, value_name = "FILE")]
    pub body_file: Option<std::path::PathBuf>,
    /// How long one request may take before it counts as a timeout error.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Run the steps of a scenario file per virtual user instead of one
    /// request; `-a` then counts iterations (the book's "Traffic and scenarios" page).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["body", "body_file"])]
    pub scenario: Option<std::path::PathBuf>,
    /// This fraction of requests (0 to 1) is sent and the connection closed
    /// before the answer: clients that hang up.
    #[arg(
        long,
        value_name = "FRACTION",
        default_value_t = 0.0,
        conflicts_with = "scenario"
    )]
    pub abort: f64,
}

pub use crate::verdict::budget::Cycles;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Base URL the server listens on (loopback only unless --allow-remote).
    #[arg(long)]
    pub url: String,
    /// Route to check, in order (repeatable). Default: the URL's own path,
    /// or, when it has none, every route the app declares (--routes-from).
    #[arg(long = "route", value_name = "PATH")]
    pub routes: Vec<String>,
    #[command(flatten)]
    pub discovery: super::DiscoveryArgs,
    /// Check N routes side by side, each in a target of its own on a port
    /// of its own (the URL's port is replaced in the command and given as
    /// PORT) [default: half the cores, at most a GiB of free memory each].
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Check only shard I of N of the routes (`2/4`), for a CI job matrix;
    /// `leakcheck report --merge` joins the shards' JSON results.
    #[arg(long, value_name = "I/N", value_parser = crate::routes::shard::Shard::parse)]
    pub shard: Option<crate::routes::shard::Shard>,
    /// Load cycles per route, each followed by a forced collection; `auto`
    /// repeats small cycles until the verdict is decided (the book's
    /// "Sequential cycles" page) [default: auto, or 3 when -a is given].
    #[arg(long, value_name = "N|auto")]
    pub cycles: Option<Cycles>,
    /// Requests per cycle (exact; `20k` works) [default: 20000, or 2500
    /// with --cycles auto].
    #[arg(short = 'a', long = "requests", value_parser = parse_count)]
    pub requests: Option<u64>,
    /// Each cycle ends at its requests or after this long, whichever comes
    /// first, and the fit divides by the requests completed: slow work still
    /// gives a reading every few seconds [default: 5s with --cycles auto; none with
    /// -a or a fixed --cycles N, which send their count whole].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub cycle_time: Option<Duration>,
    /// The smallest leak per request that must not pass as clean: with
    /// --cycles auto a route bounded below it keeps nothing; fixed cycles
    /// too small to see it are inconclusive [default: what 3 × 20000
    /// requests resolve, 15.7 B].
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub resolution: Option<f64>,
    /// With --cycles auto: the most requests per route; when they run out,
    /// the verdict is the fixed method's over the same readings.
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub max_requests: Option<u64>,
    /// With --cycles auto: the whole run's time (`20m`): the time left is
    /// shared among the routes left by their estimates; a route its share
    /// cannot decide says so, and the end says how many shards would fit.
    #[arg(long, value_name = "DURATION", value_parser = crate::units::parse_duration)]
    pub max_time: Option<std::time::Duration>,
    /// Concurrent keep-alive connections.
    #[arg(short = 'c', long, default_value_t = 10)]
    pub connections: usize,
    #[command(flatten)]
    pub request: RequestArgs,
    /// Write the JSON result to FILE (`-` for stdout; the table then goes to stderr).
    #[arg(long, value_name = "FILE", value_parser = OutputTarget::parse)]
    pub json: Option<OutputTarget>,
    /// How long one reading of the target (forced collections, counters,
    /// loop statistics) may take before the run stops with the readings so
    /// far: a blocked event loop never answers.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub inspector_timeout: Duration,
    /// How long the server may take to accept connections after launch.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub ready_timeout: Duration,
    /// How long the target has to exit after SIGTERM before SIGKILL.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub grace: Duration,
    /// Allow a URL that is not on this machine.
    #[arg(long)]
    pub allow_remote: bool,
    /// No progress output on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// A counter read at every sample, `NAME=EXPRESSION` evaluated in the
    /// target (e.g. `sessions=globalThis.sessions.size`); repeatable.
    #[arg(long = "counter", value_name = "NAME=EXPR")]
    pub counters: Vec<String>,
    /// Keep one target process for all routes instead of restarting it
    /// before each route (the default restarts: each series starts clean).
    #[arg(long)]
    pub no_fresh: bool,
    /// CI gate: retention at or below this much per request (`0.1KB`, `64B`)
    /// is reported but does not fail the run.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub max_retained: Option<f64>,
    #[command(flatten)]
    pub attach: AttachArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Start a launched Node target with this heap (old space) limit, as a
    /// container of that size would (`512MB`): a leak then reaches its limit
    /// in minutes. Passed through NODE_OPTIONS, so npm, npx and framework
    /// launchers hand it on.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub heap_limit: Option<f64>,
    /// The production container's memory limit (`2GB`): the load's peak rss
    /// is held against it, and cycles keep the target below half of it.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub memory_limit: Option<f64>,
    /// CI gate: a load whose peak rss (the heap's, without rss) passes this
    /// fails the run (exit 1), leak or not.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub max_peak: Option<f64>,
    /// Do not sample the heap and rss during the load (the peak sampler, 4
    /// times a second; this measures what it costs).
    #[arg(long)]
    pub no_peak: bool,
    /// Do not take heap snapshots to name the holder of a retention.
    #[arg(long)]
    pub no_diagnose: bool,
    /// Do not observe event-loop delay and garbage collections during the
    /// load (they cost the target little; this measures how little).
    #[arg(long)]
    pub no_loop_stats: bool,
    /// Also write the diagnosis' two heap snapshots here (mode 0600: heaps
    /// hold request headers and secrets).
    #[arg(long, value_name = "DIR")]
    pub snapshots: Option<std::path::PathBuf>,
    /// Drive each cycle with this command (run by `sh -c`) instead of the
    /// built-in generator: k6, autocannon, Artillery or any script. It gets
    /// LEAKCHECK_URL, LEAKCHECK_ROUTE, LEAKCHECK_REQUESTS,
    /// LEAKCHECK_CONNECTIONS and LEAKCHECK_CYCLE; a non-zero exit fails the cycle.
    #[arg(long, value_name = "CMD", conflicts_with_all = ["scenario", "abort"])]
    pub load_cmd: Option<String>,
    /// Keep --load-cmd's logs in DIR (created with mode 0700); without it
    /// they go to a private temporary folder removed after the run, and the
    /// report keeps each cycle's last lines.
    #[arg(long, value_name = "DIR", requires = "load_cmd")]
    pub driver_logs: Option<std::path::PathBuf>,
    /// The command that starts the server, after `--`.
    #[arg(
        last = true,
        required_unless_present = "attach",
        value_name = "COMMAND"
    )]
    pub command: Vec<String>,
}
