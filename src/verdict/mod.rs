//! From readings to meaning: per-metric fits (`metric`), then one verdict
//! per route from the rows of the seed's reading table (`classify`).

mod classify;
pub mod fit;
pub mod metric;

use serde::{Deserialize, Serialize};

pub use classify::{Options, judge};
pub use metric::{MetricFit, Trend};

/// The rows of the seed's "How to read the result" table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    NoRetention,
    WorkingSet,
    Retention,
    OffHeapRetention,
    CounterGrowth,
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
            VerdictKind::Inconclusive => "inconclusive",
        }
    }

    /// Whether this row is a leak (exit code 1).
    pub fn is_leak(self) -> bool {
        matches!(
            self,
            VerdictKind::Retention | VerdictKind::OffHeapRetention | VerdictKind::CounterGrowth
        )
    }
}

/// Something worth saying beside the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// `warm-up`, `garbage-pending`, `untouched-pages`, `load-errors`,
    /// `converging`.
    pub kind: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub kind: VerdictKind,
    pub leak: bool,
    /// One sentence quoting the figures.
    pub summary: String,
    /// What to do, from the seed's table.
    pub action: String,
    pub findings: Vec<Finding>,
    pub fits: Vec<MetricFit>,
}
