//! The result of a run: one typed, serialisable model that every part
//! fills (the cycle runner, the verdict, the diagnosis, the snapshot
//! engine) and every report format reads. It is the bottom layer: it
//! imports nothing from the crate, so any part may depend on it. Its JSON
//! form is versioned by `schema_version` and documented in `schema.json`;
//! bytes are integers, kinds are enums serialised as the strings users'
//! scripts match on.

mod bisect;
mod diagnosis;
mod isolate;
mod known;
mod load_report;
mod loop_stats;
mod memory;
mod native;
mod outcome;
mod routes;
mod rss_parts;
mod sample;
mod sequential;
mod soak;
mod verdict;
mod watch;

use serde::{Deserialize, Serialize};

pub use bisect::*;
pub use diagnosis::{
    AllocationSite, ClassDiff, Collection, CollectionState, Diagnosis, ElementGrowth,
    FrameworkHolder, Holder, HolderKind, ListenerGrowth, Owner, PathStep, SourceLocation,
    is_engine_class,
};
pub use isolate::{IsolateKind, IsolateResult, IsolateSample};
pub use known::KnownLeak;
pub use load_report::{LatencySummary, LoadReport, StatusCounts, is_zero, is_zero_u32};
pub use loop_stats::{EventLoopStats, GcByKind, GcStats, LoopStats};
pub use memory::{Exhaustion, ExhaustionCause, Limits, Peak};
pub use native::{
    AllocatorSetting, AllocatorTrial, JsFrame, NativeDiagnosis, NativeFrame, NativeSite,
};
pub use outcome::{ExitStatus, Outcome, OutcomeStatus, Stopped};
pub use routes::{FoundRoute, RouteDiscovery, ShardInfo, SkippedRoute};
pub use rss_parts::{RssPart, RssParts};
pub use sample::{Metric, Quantity, RESOURCE_PREFIXES, Resource, ResourceFamily, Sample, Series};
pub use sequential::{SequentialResult, SequentialSettings, SequentialStop};
pub use soak::{SoakResult, SoakSettings, TimeDecision, TimeFit};
pub use verdict::{
    Figure, Finding, FindingKind, MetricFit, RetainedPerRequest, Trend, Verdict, VerdictKind,
};
pub use watch::{Detached, LimitReach, WatchExit, WatchResult, WatchSettings, WatchSnapshot};

/// Bumped when a field changes meaning or disappears (not when one is added).
/// 2: `outcome.target_stopped` is an object (`how`, `exit_code`, `signal`)
/// instead of Rust's debug text.
pub const SCHEMA_VERSION: u32 = 2;
/// Versions whose files `--baseline` and `leakcheck report` still read.
pub const READABLE_SCHEMA_VERSIONS: [u32; 2] = [1, 2];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub leakcheck_version: String,
    /// Seconds since the Unix epoch when the run started.
    pub started_at_unix_s: u64,
    pub target: TargetInfo,
    pub settings: Settings,
    pub routes: Vec<RouteResult>,
    pub outcome: Outcome,
    /// The comparison with a previous result (`--baseline`), when asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
}

impl RunResult {
    /// A run's result as it starts: this schema and version, the clock now,
    /// what is known of the target and the settings; routes and outcome
    /// come as the run goes.
    pub fn starting(target: TargetInfo, settings: Settings) -> RunResult {
        RunResult {
            schema_version: SCHEMA_VERSION,
            leakcheck_version: env!("CARGO_PKG_VERSION").to_string(),
            started_at_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            target,
            settings,
            ..RunResult::default()
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    /// The command leakcheck launched; empty when it attached.
    pub command: Vec<String>,
    pub pid: Option<u32>,
    /// How memory was read; absent when the run stopped before a probe connected.
    pub probe: Option<ProbeKind>,
    pub node_version: Option<String>,
    /// The runtime when it is not Node: `Deno 2.9.6`, `Bun 1.4.5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// What that runtime does not report and what stands in for it, said
    /// instead of a silent zero.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runtime_gaps: Vec<String>,
    pub url: String,
    /// The target's working directory (`process.cwd()`): reports print
    /// script paths under it relative to it (`examples/demo-server.mjs:46`),
    /// as editors and terminals link them; the JSON keeps the URLs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub cycles: u32,
    pub requests_per_cycle: u64,
    /// Each cycle's time target (`--cycle-time`, 5 s by default without a
    /// cycle size): its work ends at `requests_per_cycle` or at this time,
    /// whichever comes first. Absent: every cycle sends its count whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle_time_s: Option<f64>,
    pub connections: usize,
    pub routes: Vec<String>,
    pub method: String,
    /// Whether the target was restarted before each route.
    pub fresh: bool,
    /// The `--max-retained` gate, bytes per request.
    pub max_retained_bytes_per_request: Option<f64>,
    /// What `requests_per_cycle` counts and the fit divides by.
    #[serde(default)]
    pub unit: Unit,
    /// The scenario file (`--scenario`), the external driver
    /// (`--load-cmd`) and the share of hung-up requests (`--abort`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_cmd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort: Option<f64>,
    /// The schedule of `leakcheck soak` (absent for `run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<SoakSettings>,
    /// The schedule of `leakcheck watch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchSettings>,
    /// `--cycles auto`: small cycles until the verdict is decided (absent
    /// for a fixed number of cycles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<SequentialSettings>,
    /// Where the routes came from when none was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovery: Option<RouteDiscovery>,
    /// `--shard I/N`: this result holds one shard's routes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// The leakcheck command line that ran this check, quoted for a shell,
    /// with header values, bodies and secret-looking values hidden as `***`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation: Option<String>,
}

impl Settings {
    /// What runs the JavaScript: `Node`, or for `leakcheck page` `browser`
    /// (whose version `target.node_version` then holds).
    pub fn runtime(&self) -> &'static str {
        if self.method == "page" {
            "browser"
        } else {
            "Node"
        }
    }

    /// "3 cycles × 20000 requests", or for a soak "a 20 s soak at 1000
    /// requests/s, a settled reading every 5 s".
    pub fn schedule(&self) -> String {
        if let Some(watch) = &self.watch {
            return watch.schedule();
        }
        match &self.soak {
            Some(soak) => format!(
                "a {:.0} s soak at {}, a settled reading every {:.0} s",
                soak.duration_s,
                soak.rate.map_or("full speed".to_string(), |r| format!(
                    "{r:.0} {}s/s",
                    self.unit.name()
                )),
                soak.every_s
            ),
            None => {
                let within = self
                    .cycle_time_s
                    .map_or(String::new(), |t| format!(" or {t:.0} s"));
                match &self.sequential {
                    Some(seq) => format!(
                        "cycles of {} {unit}s{within} until decided (at most {} {unit}s; \
                         resolution {:.1} B per {unit}, or what fills the headroom in a week \
                         at a slower route's pace)",
                        seq.cycle_requests,
                        seq.max_requests,
                        seq.resolution_bytes_per_request,
                        unit = self.unit.name()
                    ),
                    None => format!(
                        "{} cycles × {} {}s{within}",
                        self.cycles,
                        self.requests_per_cycle,
                        self.unit.name()
                    ),
                }
            }
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RouteResult {
    pub route: String,
    /// The target process this route was measured in (a fresh one per
    /// route unless `--no-fresh`); absent when attached through endpoints.
    pub pid: Option<u32>,
    /// Settled after-GC reading before the first cycle.
    pub baseline: Option<Sample>,
    pub cycles: Vec<CycleResult>,
    /// Slopes of the after-GC series, bytes per request (absent with fewer
    /// than two readings).
    pub retained_bytes_per_request: Option<RetainedPerRequest>,
    pub verdict: Option<Verdict>,
    /// The holder of the retention (inspector targets; `--no-diagnose` skips it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<Diagnosis>,
    /// Off-heap retention in malloc'd memory: the native stacks that keep
    /// it, recorded in a fresh process of the target (`crate::diagnosis::native`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native: Option<NativeDiagnosis>,
    /// A page's collections that grew by at least one entry per iteration
    /// in each interval of the collection check (`collection-growth`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub collections: Vec<Collection>,
    /// A page's event listeners that grew by half a listener per iteration
    /// or more, by event type and target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listeners: Vec<ListenerGrowth>,
    /// The target's worker threads and child Node processes, each judged
    /// on its own after-GC heap (absent when it has none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub isolates: Vec<IsolateResult>,
    /// Growth over time and the projection to the heap limit (`soak`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<SoakResult>,
    /// How `--cycles auto` decided this route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<SequentialResult>,
    /// The memory limits in force for the target, read at the baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// The target died of memory during this route (`memory-exhausted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exhaustion: Option<Exhaustion>,
    /// The idle interval `run` adds when the heap may grow with time
    /// rather than with requests (`cycle/time_check.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<IdleCheck>,
    /// What `leakcheck watch` measured on the live process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchResult>,
}

/// An interval without load between two settled readings: growth there is
/// growth with time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IdleCheck {
    /// Seconds between the two readings.
    pub seconds: f64,
    pub heap_used_before: u64,
    pub heap_used_after: u64,
    /// After-GC heapUsed growth per second without load, and under load
    /// (the cycles' trend with time).
    pub idle_bytes_per_second: f64,
    pub loaded_bytes_per_second: f64,
    /// The growth tracks time, not requests.
    pub time_driven: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CycleResult {
    /// 1-based.
    pub cycle: u32,
    /// Requests that ended (responses and errors).
    pub requests: u64,
    pub responses: u64,
    pub errors: u64,
    pub non_2xx: u64,
    pub duration_s: f64,
    pub after_load: Sample,
    pub after_gc: Sample,
    pub load: LoadReport,
    /// Units of work the fit divides by (`settings.unit`): responses,
    /// scenario iterations that ran every step, or with `--load-cmd` the
    /// requests the target served.
    #[serde(default)]
    pub units: u64,
    /// HTTP requests the target began serving during the cycle, counted
    /// inside it (inspector targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<u64>,
    /// The external driver of the cycle (`--load-cmd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<DriverRun>,
    /// Event-loop delay and utilisation during the load (inspector
    /// targets, unless `--no-loop-stats`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_loop: Option<EventLoopStats>,
    /// Garbage collections during the load (same condition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc: Option<GcStats>,
    /// Seconds from the route's baseline reading to this cycle's after-GC
    /// reading: the clock the time trend is fitted on (settling included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_at_s: Option<f64>,
    /// The highest heap and rss sampled during the load (the peak sampler;
    /// absent with `--no-peak` or a probe that reads neither).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak: Option<Peak>,
}

impl CycleResult {
    /// The cycle did no work a verdict can stand on: the built-in load got
    /// no 2xx answer, no iteration of a scenario or a page ran every step,
    /// or the external driver failed or the target served none of it.
    pub fn did_no_work(&self) -> bool {
        match &self.driver {
            Some(driver) => !driver.succeeded() || self.served == Some(0),
            None => self.load.successes() == 0 || self.load.iterations == Some(0),
        }
    }

    /// With `--load-cmd`: the target served less than the driver was asked
    /// for, beyond `SHORT_DRIVER_TOLERANCE` — the fit would divide a
    /// cycle's growth by work that mostly did not happen. `None` when the
    /// target cannot count (not Node) or the driver served enough.
    pub fn driver_short(&self) -> Option<(u64, u64)> {
        let asked = self.driver.as_ref()?.requests_asked?;
        let served = self.served?;
        ((served as f64) < asked as f64 * (1.0 - SHORT_DRIVER_TOLERANCE)).then_some((served, asked))
    }

    /// The requests the target counted as begun, when they can be held
    /// against the built-in load's counts (an external driver's requests
    /// are its own business).
    pub fn served_by_builtin_load(&self) -> Option<u64> {
        self.served.filter(|_| self.driver.is_none())
    }
}

/// The share of `LEAKCHECK_REQUESTS` a driver may leave unserved (a k6
/// script ending a few iterations early, a retry budget): beyond it the
/// cycle measured too little to be divided by.
pub const SHORT_DRIVER_TOLERANCE: f64 = 0.1;

/// One run of `--load-cmd`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriverRun {
    /// The command as given, with secrets in it redacted.
    pub command: String,
    /// `LEAKCHECK_REQUESTS`: what the driver was asked to send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_asked: Option<u64>,
    /// Where its stdout and stderr went (removed after the run unless
    /// `log_kept`: `--driver-logs DIR`).
    pub log: String,
    #[serde(default)]
    pub log_kept: bool,
    /// The last lines of its output (stdout and stderr).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_tail: Vec<String>,
    pub exit: ExitStatus,
    pub duration_s: f64,
    /// Processes of the driver still running when it ended (started with
    /// `setsid`, or double-forked, out of its process group): leakcheck
    /// stopped them so they could not load the next reading.
    #[serde(default, skip_serializing_if = "crate::model::load_report::is_zero")]
    pub outlived: u64,
}

impl DriverRun {
    pub fn succeeded(&self) -> bool {
        self.exit.exit_code == Some(0)
    }
}

/// What one unit of work is: the fit is bytes per unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// One request (the built-in generator, or `--load-cmd`'s served requests).
    #[default]
    Request,
    /// One pass over a scenario's steps.
    Iteration,
    /// One call of a function (`leakcheck fn`).
    Call,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::Request => "request",
            Unit::Iteration => "iteration",
            Unit::Call => "call",
        }
    }
}

impl RouteResult {
    /// The figure that made this route's verdict.
    pub fn figure(&self) -> Option<&Figure> {
        self.verdict.as_ref().map(|v| &v.figure)
    }

    /// Whether this route's verdict is a leak (after the gate).
    pub fn is_leak(&self) -> bool {
        self.verdict.as_ref().is_some_and(|v| v.fails_gate)
    }

    /// Errors and non-2xx responses over every cycle.
    pub fn failed_requests(&self) -> (u64, u64) {
        self.cycles
            .iter()
            .fold((0, 0), |(e, n), c| (e + c.errors, n + c.non_2xx))
    }

    /// The after-GC readings: the baseline, then one per cycle.
    pub fn after_gc_series(&self) -> impl Iterator<Item = &Sample> {
        self.baseline
            .iter()
            .chain(self.cycles.iter().map(|c| &c.after_gc))
    }
}

impl RunResult {
    /// "no route keeps memory", "1 route keeps memory", "2 routes keep memory".
    pub fn headline(&self) -> String {
        let leaks = self.routes.iter().filter(|r| r.is_leak()).count();
        match leaks {
            0 => "no route keeps memory".to_string(),
            1 => "1 route keeps memory".to_string(),
            n => format!("{n} routes keep memory"),
        }
    }

    /// True when a route's verdict says memory is retained.
    pub fn any_leak(&self) -> bool {
        self.routes.iter().any(RouteResult::is_leak)
    }
}

/// A run compared with the previous release's result (`--baseline`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Where the previous result came from (its path).
    pub baseline: String,
    pub tolerance: f64,
    pub routes: Vec<RouteComparison>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteComparison {
    pub route: String,
    /// The series compared: the one whose figure made the new verdict.
    #[serde(default = "heap_used")]
    pub metric: Series,
    /// Retained bytes per request of `metric`, before and now.
    pub old_retained_per_request: Option<f64>,
    pub new_retained_per_request: Option<f64>,
    /// Last after-GC heapUsed, bytes, before and now.
    pub old_after_gc_heap_used: Option<u64>,
    pub new_after_gc_heap_used: Option<u64>,
    pub old_verdict: Option<VerdictKind>,
    pub new_verdict: Option<VerdictKind>,
    pub regressed: bool,
    /// One sentence with both figures.
    pub message: String,
}

fn heap_used() -> Series {
    Series::HEAP_USED
}

impl Comparison {
    pub fn regressions(&self) -> impl Iterator<Item = &RouteComparison> {
        self.routes.iter().filter(|r| r.regressed)
    }
}

/// How memory is read from the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProbeKind {
    /// The Node inspector (Chrome DevTools Protocol): forced collections.
    Inspector,
    /// The app's own `/gc` and `/mem` endpoints.
    Endpoints,
    /// /proc/PID/status: rss only, no forced collections.
    Proc,
}

impl ProbeKind {
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Inspector => "inspector",
            ProbeKind::Endpoints => "endpoints",
            ProbeKind::Proc => "proc",
        }
    }
}

impl std::fmt::Display for ProbeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
