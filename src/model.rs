//! The result of a run: one serialisable model that the cycle runner fills,
//! the verdict reads, and every report format renders. Its JSON form is
//! versioned by `schema_version`; bytes are integers.

use serde::{Deserialize, Serialize};

use crate::load::LoadReport;
use crate::probe::Sample;
use crate::verdict::Verdict;

/// Bumped when a field changes meaning or disappears (not when one is added).
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    /// The command leakcheck launched; empty when it attached.
    pub command: Vec<String>,
    pub pid: Option<u32>,
    /// How memory was read: `inspector`, `endpoints` or `proc`.
    pub probe: String,
    pub node_version: Option<String>,
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub cycles: u32,
    pub requests_per_cycle: u64,
    pub connections: usize,
    pub routes: Vec<String>,
    pub method: String,
    /// Whether the target was restarted before each route.
    pub fresh: bool,
    /// The `--max-retained` gate, bytes per request.
    pub max_retained_bytes_per_request: Option<f64>,
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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RetainedPerRequest {
    pub heap_used: f64,
    pub external: f64,
    pub array_buffers: f64,
    pub rss: f64,
}

/// How the run ended. A run that failed or was interrupted still carries
/// every reading taken before.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// `complete`, `interrupted` or `failed`.
    pub status: String,
    pub error: Option<String>,
    /// The target's last output lines, kept when something went wrong.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_output: Vec<String>,
    /// How the target was stopped, when leakcheck launched it.
    pub target_stopped: Option<String>,
    /// Whether the URL's port was free again after the target stopped.
    pub port_freed: Option<bool>,
}

impl RouteResult {
    /// The retained figure that made the verdict, with its metric: the
    /// off-heap figure for `off-heap-retention`, rss for the proc probe,
    /// heapUsed otherwise.
    pub fn headline_retained(&self) -> Option<(f64, &'static str)> {
        let r = self.retained_bytes_per_request?;
        let kind = self.verdict.as_ref().map(|v| v.kind);
        Some(match kind {
            Some(crate::verdict::VerdictKind::OffHeapRetention) => {
                if r.array_buffers >= r.external.max(r.rss) * 0.5 && r.array_buffers > 0.0 {
                    (r.array_buffers, "arrayBuffers")
                } else if r.external >= r.rss * 0.5 && r.external > 0.0 {
                    (r.external, "external")
                } else {
                    (r.rss, "rss")
                }
            }
            _ if self.baseline.as_ref().is_some_and(|b| b.heap_used == 0) => (r.rss, "rss"),
            _ => (r.heap_used, "heapUsed"),
        })
    }
}

impl RunResult {
    /// "no route keeps memory", "1 route keeps memory", "2 routes keep memory".
    pub fn headline(&self) -> String {
        let leaks = self
            .routes
            .iter()
            .filter(|r| r.verdict.as_ref().is_some_and(|v| v.leak))
            .count();
        match leaks {
            0 => "no route keeps memory".to_string(),
            1 => "1 route keeps memory".to_string(),
            n => format!("{n} routes keep memory"),
        }
    }

    /// True when a route's verdict says memory is retained.
    pub fn any_leak(&self) -> bool {
        self.routes
            .iter()
            .any(|r| r.verdict.as_ref().is_some_and(|v| v.leak))
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
    /// Retained heapUsed bytes per request, before and now.
    pub old_retained_per_request: Option<f64>,
    pub new_retained_per_request: Option<f64>,
    /// Last after-GC heapUsed, bytes, before and now.
    pub old_after_gc_heap_used: Option<u64>,
    pub new_after_gc_heap_used: Option<u64>,
    pub old_verdict: Option<String>,
    pub new_verdict: Option<String>,
    pub regressed: bool,
    /// One sentence with both figures.
    pub message: String,
}

impl Comparison {
    pub fn regressions(&self) -> impl Iterator<Item = &RouteComparison> {
        self.routes.iter().filter(|r| r.regressed)
    }
}

/// What holds a route's retention, from two heap snapshots around one more
/// cycle and the sampling heap profiler during it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// Requests of the extra cycle.
    pub requests: u64,
    /// Grown classes (Comparison view), largest size delta first.
    pub classes: Vec<crate::snapshot::ClassDiff>,
    /// What holds the new objects of the top grown classes.
    pub holders: Vec<crate::snapshot::Holder>,
    /// Frames whose allocations during the cycle survived collection.
    pub allocation_sites: Vec<AllocationSite>,
    /// The cycle ran with inlining off, so a handler's allocations are
    /// charged to it, not to the caller V8 inlined it into (only on a
    /// target leakcheck launched).
    #[serde(default)]
    pub sites_without_inlining: bool,
    /// Snapshot sizes, bytes: before and after the cycle.
    pub snapshot_bytes: [u64; 2],
    /// Where the snapshots were written (`--snapshots DIR`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub snapshot_files: Vec<String>,
    /// Seconds: snapshots (transfer, target paused, parse overlapped), analysis.
    pub snapshot_seconds: f64,
    pub analysis_seconds: f64,
    /// The target's rss before the first snapshot and after the second:
    /// what writing snapshots cost it.
    pub target_rss_before: u64,
    pub target_rss_after: u64,
}

impl Diagnosis {
    /// Said beside the allocation sites when the cycle ran with inlining on.
    pub const INLINING_CAVEAT: &'static str = "an attached target's JIT is left as it is, so a function V8 inlined is charged to its caller";

    /// Holders grouped by the object that holds (one holder is listed per
    /// grown class, and one variable often holds several classes), in the
    /// order of their largest class.
    pub fn holders_by_object(&self) -> Vec<Vec<&crate::snapshot::Holder>> {
        let mut groups: Vec<Vec<&crate::snapshot::Holder>> = Vec::new();
        for holder in &self.holders {
            match groups
                .iter_mut()
                .find(|g| g[0].holder_id == holder.holder_id)
            {
                Some(group) => group.push(holder),
                None => groups.push(vec![holder]),
            }
        }
        groups
    }
}

/// What a group of holders' classes add up to, for one line of a report:
/// "30000 new (concatenated string), 15000 new (string)".
pub fn new_objects_text(group: &[&crate::snapshot::Holder]) -> String {
    group
        .iter()
        .map(|h| format!("{} new {}", h.objects, h.class))
        .collect::<Vec<_>>()
        .join(", ")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocationSite {
    pub function: String,
    pub url: String,
    /// 1-based, as editors count.
    pub line: u32,
    pub column: u32,
    /// Sampled bytes still alive after the cycle's collection.
    pub bytes: u64,
    /// The line of this function that names the holder (its text beside
    /// it), found in the script's source: the line a user goes to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_line_text: Option<String>,
    /// The inspector's id of the script, to read its source; not reported.
    #[serde(skip)]
    pub script_id: String,
}
