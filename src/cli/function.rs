//! `leakcheck fn MODULE#EXPORT`: a function as the unit of work.

use std::time::Duration;

use clap::Args;

use super::OutputArgs;
use crate::report::OutputTarget;
use crate::units::{parse_bytes, parse_count, parse_duration};

#[derive(Debug, Args)]
pub struct FnArgs {
    /// The module and its exported function: `./lib/cache.mjs#get`,
    /// `my-package#parse`, `./dist/index.js` (the default export).
    #[arg(value_name = "MODULE#EXPORT")]
    pub function: String,
    /// An export run once before the check; what it returns (awaited) is
    /// the argument of every call (a client, a fixture).
    #[arg(long, value_name = "EXPORT")]
    pub setup: Option<String>,
    /// An export run once after the check, given the setup's value.
    #[arg(long, value_name = "EXPORT")]
    pub teardown: Option<String>,
    /// Cycles of calls, each followed by a forced collection; `auto`
    /// repeats small cycles until the verdict is decided [default: auto,
    /// or 3 when -n is given].
    #[arg(long, value_name = "N|auto")]
    pub cycles: Option<crate::verdict::budget::Cycles>,
    /// Calls per cycle [default: 20000, or 2500 with --cycles auto].
    #[arg(short = 'n', long = "calls", value_parser = parse_count)]
    pub calls: Option<u64>,
    /// With --cycles auto: the most calls; when they run out, the verdict
    /// is the fixed method's over the same readings.
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub max_calls: Option<u64>,
    /// The smallest leak per call that must not pass as clean [default:
    /// what 3 × 20000 calls resolve, 15.7 B].
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub resolution: Option<f64>,
    /// Each cycle ends at its calls or after this long, whichever comes
    /// first, and the fit divides by the calls completed: slow work still
    /// gives a reading every few seconds [default: 5s with --cycles auto; none with
    /// --calls or a fixed --cycles N, which send their count whole].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub cycle_time: Option<Duration>,
    /// Calls in flight at once (for code that leaks only under overlap).
    #[arg(short = 'c', long, default_value_t = 1)]
    pub concurrency: u64,
    /// How long one call may take before it counts as failed.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// How long one reading (forced collections included) may take.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub inspector_timeout: Duration,
    /// How long the module may take to load and --setup to run.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub ready_timeout: Duration,
    /// How long the harness has to exit after SIGTERM before SIGKILL.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub grace: Duration,
    /// CI gate: retention at or below this much per call is reported, not failed.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub max_retained: Option<f64>,
    /// Do not take heap snapshots to name the holder of a retention.
    #[arg(long)]
    pub no_diagnose: bool,
    /// Also write the diagnosis' two heap snapshots here (mode 0600).
    #[arg(long, value_name = "DIR")]
    pub snapshots: Option<std::path::PathBuf>,
    /// Write the JSON result to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE", value_parser = OutputTarget::parse)]
    pub json: Option<OutputTarget>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// No progress output on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// The runtime that loads the module: `node` (or `LEAKCHECK_NODE`),
    /// `deno` (`deno run -A`: the harness reads the environment and the
    /// module) or `bun`; a TypeScript module runs directly on the last two.
    #[arg(long, value_enum, default_value = "node")]
    pub runtime: FnRuntime,
    /// Node flags for the harness's process, after `--`: a TypeScript
    /// loader (`--import tsx`), `--conditions`, `--expose-gc` is not needed.
    #[arg(last = true, value_name = "NODE_FLAGS")]
    pub node_flags: Vec<String>,
}

/// The runtimes `leakcheck fn` can load a module in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FnRuntime {
    Node,
    Deno,
    Bun,
}
