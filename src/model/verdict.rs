//! A route's verdict as data: the row of the method's reading table, the
//! findings beside it, the per-series fits, and the one figure that made
//! the verdict (the gate, the headline and the baseline all read that one).

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};

use super::sample::{Quantity, Series};

/// The rows of the method's reading table (docs/src/method.md, "Reading the result").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    NoRetention,
    WorkingSet,
    Retention,
    OffHeapRetention,
    CounterGrowth,
    /// A collection gained entries in proportion to the work, cycle after
    /// cycle, below what the byte series resolve (a page's collection check).
    CollectionGrowth,
    /// rss grew in malloc's heap with no native allocation kept per unit,
    /// and stopped growing under another allocator setting: glibc's
    /// allocator holding freed memory (its arenas grow and level off), not
    /// a leak of the code. Not a leak (exit 0): the verdict names the
    /// setting that keeps rss flat.
    AllocatorFragmentation,
    /// The after-GC heap grew as much in an idle interval without load as
    /// under load: something on a timer keeps data, not the requests.
    TimeGrowth,
    /// The target died of memory while its after-GC readings grew: the
    /// leak the check exists for, measured until it killed the process.
    MemoryExhausted,
    /// Also what a route is before any reading decides anything.
    #[default]
    Inconclusive,
}

impl VerdictKind {
    pub fn name(self) -> &'static str {
        match self {
            VerdictKind::NoRetention => "no-retention",
            VerdictKind::WorkingSet => "working-set",
            VerdictKind::Retention => "retention",
            VerdictKind::OffHeapRetention => "off-heap-retention",
            VerdictKind::CounterGrowth => "counter-growth",
            VerdictKind::CollectionGrowth => "collection-growth",
            VerdictKind::AllocatorFragmentation => "allocator-fragmentation",
            VerdictKind::TimeGrowth => "time-growth",
            VerdictKind::MemoryExhausted => "memory-exhausted",
            VerdictKind::Inconclusive => "inconclusive",
        }
    }

    /// Whether this row is a leak (exit code 1).
    pub fn is_leak(self) -> bool {
        matches!(
            self,
            VerdictKind::Retention
                | VerdictKind::OffHeapRetention
                | VerdictKind::CounterGrowth
                | VerdictKind::CollectionGrowth
                | VerdictKind::TimeGrowth
                | VerdictKind::MemoryExhausted
        )
    }
}

impl std::fmt::Display for VerdictKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a finding beside a verdict is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// The first cycle grew once (JIT code, lazy initialisation).
    WarmUp,
    /// Only the after-load reading was high: garbage not yet collected.
    GarbagePending,
    /// arrayBuffers grew far more than rss: pages never written.
    UntouchedPages,
    /// Errors or non-2xx responses during load.
    LoadErrors,
    /// A series grew and levelled off.
    Converging,
    /// Retention at or under `--max-retained`.
    WithinGate,
    /// The run stopped before every cycle of the route completed.
    Partial,
    /// The probe could not force collections (`--proc`).
    NoForcedGc,
    /// Naming the holder failed; the measurements stand.
    DiagnosisFailed,
    /// A `--counter` expression threw or returned no number.
    CounterFailed,
    /// Every request was identical: what is keyed by request data cannot grow.
    FixedRequest,
    /// The target served a different number of requests than were sent.
    ServedMismatch,
    /// A worker thread or child process of the target retains per request.
    IsolateRetention,
    /// Handles or listeners of one type grow by half a handle per request or more.
    HandleGrowth,
    /// Collections paused the target long enough to queue requests.
    GcPauses,
    /// The pauses took far more wall time than CPU time: the target's
    /// thread waited for a core (a busy machine), not for the collector.
    BusyMachine,
    /// A page's iterations ended on another URL than the start URL.
    LeftStartUrl,
    /// The collection check found growth the byte series could not
    /// resolve: what the bytes alone read.
    BytesBelowResolution,
    /// Off-heap growth in malloc'd memory: what the native recorder named,
    /// or why it could not run.
    NativeAttribution,
    /// A soak's after-GC heapUsed against time: growth per hour, its
    /// interval and the floor.
    TimeTrend,
    /// The load's peak came within 80 % of a memory limit, or rss peaked
    /// far above what is retained: the process dies at its peak, not of a
    /// leak.
    PeakPressure,
    /// The cycles were shrunk (or ended early) to keep the target below
    /// half of its memory limit.
    Headroom,
    /// The load's peak passed `--max-peak`: the route fails the run,
    /// whatever its row.
    OverMaxPeak,
    /// A collection grew, then stopped at a cap when the collection check
    /// followed it: a bounded history or LRU, not a leak.
    CappedCollection,
    /// Time per unit of work rose cycle over cycle: each request or call
    /// does more work than the one before (listeners, middleware or hooks
    /// added per unit), with growth a leak's strongest companion.
    Slowdown,
    /// A watched process exited mid-watch: the verdict is on the readings
    /// taken before (a fleet watch reports it and goes on).
    TargetExited,
}

impl FindingKind {
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::WarmUp => "warm-up",
            FindingKind::GarbagePending => "garbage-pending",
            FindingKind::UntouchedPages => "untouched-pages",
            FindingKind::LoadErrors => "load-errors",
            FindingKind::Converging => "converging",
            FindingKind::WithinGate => "within-gate",
            FindingKind::Partial => "partial",
            FindingKind::NoForcedGc => "no-forced-gc",
            FindingKind::DiagnosisFailed => "diagnosis-failed",
            FindingKind::CounterFailed => "counter-failed",
            FindingKind::FixedRequest => "fixed-request",
            FindingKind::ServedMismatch => "served-mismatch",
            FindingKind::IsolateRetention => "isolate-retention",
            FindingKind::HandleGrowth => "handle-growth",
            FindingKind::GcPauses => "gc-pauses",
            FindingKind::BusyMachine => "busy-machine",
            FindingKind::LeftStartUrl => "left-start-url",
            FindingKind::BytesBelowResolution => "bytes-below-resolution",
            FindingKind::NativeAttribution => "native-attribution",
            FindingKind::TimeTrend => "time-trend",
            FindingKind::PeakPressure => "peak-pressure",
            FindingKind::Headroom => "headroom",
            FindingKind::OverMaxPeak => "over-max-peak",
            FindingKind::CappedCollection => "capped-collection",
            FindingKind::Slowdown => "slowdown",
            FindingKind::TargetExited => "target-exited",
        }
    }
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Something worth saying beside the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub message: String,
}

impl Finding {
    pub fn new(kind: FindingKind, message: impl Into<String>) -> Finding {
        Finding {
            kind,
            message: message.into(),
        }
    }
}

/// What one series shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trend {
    /// Flat within noise.
    Flat,
    /// Grows each cycle in proportion to the load.
    Growing,
    /// Grew, then levelled off.
    Converging,
    /// Neither flat nor clearly growing.
    Unclear,
}

/// The fit of one series, as it appears in the JSON. For a counted series
/// (`dom.Nodes`, `active_resources.Timeout`, a counter) the `_bytes` fields
/// hold counts; the JSON's `unit` (written from the series) says which.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MetricFit {
    /// `heapUsed`, `external`, `arrayBuffers`, `rss` or a counter's name.
    pub metric: Series,
    pub slope_bytes_per_request: f64,
    /// After-GC reading minus the one before, per cycle (cycle 1 against the baseline).
    pub increments: Vec<f64>,
    /// How far one cycle's growth may be off: the larger of the floor and
    /// the fit's standard error of the growth per cycle.
    pub noise_bytes: f64,
    /// Slope times the mean requests per cycle.
    pub growth_per_cycle_bytes: f64,
    /// First cycle whose reading the fit used (1 when the warm-up step was left out).
    pub fitted_from_cycle: u32,
    pub trend: Trend,
}

/// The figure that made a verdict: the series it was read from and its
/// retained bytes per request. `retention` is heapUsed (rss when the probe
/// could not force collections), `off-heap-retention` the off-heap series
/// that grew; every other row reports heapUsed (rss without forced GC).
/// For a counted series (`counter-growth` of `dom.Nodes`) the value is a
/// count per unit of work, and the JSON's `unit` says `count`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Figure {
    pub metric: Series,
    pub bytes_per_request: f64,
}

impl Default for Figure {
    /// heapUsed, the figure of every row until a series says otherwise.
    fn default() -> Figure {
        Figure {
            metric: Series::HEAP_USED,
            bytes_per_request: 0.0,
        }
    }
}

impl Figure {
    /// Bytes or a count: always the series', so that a verdict that
    /// changes its series can never leave a stale unit behind.
    pub fn unit(&self) -> Quantity {
        self.metric.quantity()
    }
}

impl Serialize for Figure {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut figure = serializer.serialize_struct("Figure", 3)?;
        figure.serialize_field("metric", &self.metric)?;
        figure.serialize_field("bytes_per_request", &self.bytes_per_request)?;
        figure.serialize_field("unit", &self.unit())?;
        figure.end()
    }
}

impl Serialize for MetricFit {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut fit = serializer.serialize_struct("MetricFit", 8)?;
        fit.serialize_field("metric", &self.metric)?;
        fit.serialize_field("unit", &self.metric.quantity())?;
        fit.serialize_field("slope_bytes_per_request", &self.slope_bytes_per_request)?;
        fit.serialize_field("increments", &self.increments)?;
        fit.serialize_field("noise_bytes", &self.noise_bytes)?;
        fit.serialize_field("growth_per_cycle_bytes", &self.growth_per_cycle_bytes)?;
        fit.serialize_field("fitted_from_cycle", &self.fitted_from_cycle)?;
        fit.serialize_field("trend", &self.trend)?;
        fit.end()
    }
}

/// `Verdict::default()`: `inconclusive`, with nothing read yet (heapUsed
/// at 0 per unit, no fits or findings).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub kind: VerdictKind,
    /// The route fails the gate: a leak kind, above `--max-retained` when
    /// one is given. Named `leak` in the JSON, as scripts read it.
    #[serde(rename = "leak")]
    pub fails_gate: bool,
    /// One sentence quoting the figures.
    pub summary: String,
    /// What to do, from the method's table.
    pub action: String,
    pub findings: Vec<Finding>,
    pub fits: Vec<MetricFit>,
    /// The figure that made the verdict; the `--max-retained` gate, the
    /// headline of every report and the `--baseline` comparison read it.
    pub figure: Figure,
}

impl Verdict {
    pub fn fit(&self, series: &Series) -> Option<&MetricFit> {
        self.fits.iter().find(|f| &f.metric == series)
    }

    pub fn has_finding(&self, kind: FindingKind) -> bool {
        self.findings.iter().any(|f| f.kind == kind)
    }
}

/// Slopes of the after-GC series, bytes per request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RetainedPerRequest {
    pub heap_used: f64,
    pub external: f64,
    pub array_buffers: f64,
    pub rss: f64,
}
