//! `leakcheck page`: the browser half of the question. A page, a list of
//! user actions repeated per cycle, the same readings, verdicts, diagnosis
//! and reports as `run`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::OutputArgs;
use crate::report::OutputTarget;
use crate::units::{parse_bytes, parse_count, parse_duration};
use crate::verdict::budget::Cycles;

#[derive(Debug, Args)]
pub struct PageArgs {
    /// The page to open (http://127.0.0.1:… for a page this machine serves).
    pub url: String,
    /// One user action of an iteration, in order (repeatable): click
    /// SELECTOR (its first visible match), type SELECTOR TEXT, press KEY,
    /// goto URL, back, wait MS, wait-for SELECTOR, wait-idle, eval JS.
    #[arg(
        long = "action",
        value_name = "ACTION",
        required_unless_present = "links",
        conflicts_with = "links"
    )]
    pub actions: Vec<String>,
    /// Follow every visible same-origin link of the page, each its own
    /// route: click it, wait-idle, back, wait-idle (fuite's default).
    #[arg(long)]
    pub links: bool,
    /// With --links: follow at most this many links (in page order).
    #[arg(long, value_name = "N", default_value = "30", value_parser = parse_count)]
    pub max_links: u64,
    /// With --links: check only shard I of N of the links (`2/4`), for a
    /// CI job matrix; `leakcheck report --merge` joins the shards.
    #[arg(long, value_name = "I/N", requires = "links",
          value_parser = crate::routes::shard::Shard::parse)]
    pub shard: Option<crate::routes::shard::Shard>,
    /// An action run once after the page opens, before the first reading
    /// (repeatable, in order): a login. With --links, before each link.
    #[arg(long = "setup", value_name = "ACTION")]
    pub setup: Vec<String>,
    /// An action run once after a route's last reading (repeatable).
    #[arg(long = "teardown", value_name = "ACTION")]
    pub teardown: Vec<String>,
    /// Cycles of iterations, each followed by a forced collection; `auto`
    /// repeats small cycles until the verdict is decided, as `run` does
    /// [default: auto, or 3 when -n is given].
    #[arg(long, value_name = "N|auto")]
    pub cycles: Option<Cycles>,
    /// Iterations of the action list per cycle [default: 50, or 25 with
    /// --cycles auto].
    #[arg(short = 'n', long = "iterations", value_parser = parse_count)]
    pub iterations: Option<u64>,
    /// The smallest leak per iteration that must not pass as clean: with
    /// --cycles auto a page bounded below it keeps nothing; fixed cycles
    /// too small to see it are inconclusive [default: what 3 × 200
    /// iterations resolve, 246 B].
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub resolution: Option<f64>,
    /// Each cycle ends at its iterations or after this long, whichever comes
    /// first, and the fit divides by the iterations completed: slow work still
    /// gives a reading every few seconds [default: 5s with --cycles auto; none with
    /// -n or a fixed --cycles N, which send their count whole].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub cycle_time: Option<Duration>,
    /// With --cycles auto: the most iterations; when they run out, the
    /// verdict is the fixed method's over the same readings [default: 600].
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub max_iterations: Option<u64>,
    /// How long every iteration may fail before the cycle is cut short
    /// and the page reported as no longer working.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// How long one reading of the page (forced collections, the heap, the
    /// DOM counts) may take before the run stops with the readings so far.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub inspector_timeout: Duration,
    /// Do not read the page's main-thread delay and busy share per cycle.
    #[arg(long)]
    pub no_loop_stats: bool,
    /// The browser to start (default: chromium, chromium-browser or
    /// google-chrome from the PATH).
    #[arg(long, value_name = "PATH", conflicts_with = "connect")]
    pub chrome: Option<PathBuf>,
    /// Drive a browser that already runs with remote debugging on
    /// loopback (its ws://127.0.0.1:PORT/devtools/browser/… URL); it is
    /// left running.
    #[arg(long, value_name = "WS_URL")]
    pub connect: Option<String>,
    /// Write the JSON result to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE", value_parser = OutputTarget::parse)]
    pub json: Option<OutputTarget>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Retention at or below this many bytes per iteration is reported, not failed.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub max_retained: Option<f64>,
    /// Do not take heap snapshots to name the holder of a retention.
    #[arg(long)]
    pub no_diagnose: bool,
    /// Skip the collection check (two more cycles between heap snapshots,
    /// counting the entries of every Array, Map, Set and Object) that a
    /// page whose bytes read clean gets.
    #[arg(long)]
    pub no_collections: bool,
    /// Also write the diagnosis' two heap snapshots here (mode 0600).
    #[arg(long, value_name = "DIR")]
    pub snapshots: Option<PathBuf>,
    /// How long the browser has after SIGTERM before SIGKILL.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub grace: Duration,
    /// Allow a page URL (or a `goto`) that is not on this machine.
    #[arg(long)]
    pub allow_remote: bool,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}
