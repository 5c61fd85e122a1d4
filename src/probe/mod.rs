//! Reading the target's memory. A `Probe` forces a full collection and takes
//! a `Sample`; each way of reaching a target (the inspector, the app's own
//! endpoints, /proc) is one implementation.

mod endpoints;
mod inspector;
mod proc;

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub use endpoints::{EndpointsProbe, parse_mem};
pub use inspector::{Counter, InspectorProbe};
pub use proc::{ProcProbe, parse_status};

/// One reading of `process.memoryUsage()`, in bytes, plus any counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub rss: u64,
    pub heap_total: u64,
    pub heap_used: u64,
    pub external: u64,
    pub array_buffers: u64,
    /// User counters (`--counter NAME=EXPR`), by name; `null` when the
    /// expression failed at that reading.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, Option<f64>>,
}

/// The five memory figures, for code that walks them all in one order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Rss,
    HeapTotal,
    HeapUsed,
    External,
    ArrayBuffers,
}

impl Metric {
    pub const ALL: [Metric; 5] = [
        Metric::Rss,
        Metric::HeapTotal,
        Metric::HeapUsed,
        Metric::External,
        Metric::ArrayBuffers,
    ];

    /// The name `process.memoryUsage()` gives it.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Rss => "rss",
            Metric::HeapTotal => "heapTotal",
            Metric::HeapUsed => "heapUsed",
            Metric::External => "external",
            Metric::ArrayBuffers => "arrayBuffers",
        }
    }
}

impl Sample {
    pub fn get(&self, metric: Metric) -> u64 {
        match metric {
            Metric::Rss => self.rss,
            Metric::HeapTotal => self.heap_total,
            Metric::HeapUsed => self.heap_used,
            Metric::External => self.external,
            Metric::ArrayBuffers => self.array_buffers,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error(transparent)]
    Inspector(#[from] crate::inspector::InspectorError),
    #[error("the target's memory reading was not understood: {0}")]
    Malformed(String),
    #[error("the app's memory endpoint failed: {0}")]
    Endpoint(String),
}

/// Collections before a settled reading gives up waiting for the heap to
/// stop shrinking. Two are usually enough: the second returns the backing
/// stores of ArrayBuffers the first found dead (the seed's double /reset).
const MAX_SETTLE_COLLECTIONS: usize = 4;
/// A collection that frees less than this is taken as "stopped shrinking":
/// below the ~0.1 MB repeatability of after-GC readings.
const SETTLED_BYTES: u64 = 32 * 1024;

#[async_trait]
pub trait Probe: Send {
    /// `inspector`, `endpoints` or `proc`.
    fn kind(&self) -> &'static str;

    /// The inspector behind this probe, for snapshots and the sampling
    /// heap profiler (only the inspector probe has one).
    fn inspector(&self) -> Option<&crate::inspector::Inspector> {
        None
    }

    /// Whether `collect_garbage` really collects (the proc probe cannot).
    fn can_collect(&self) -> bool {
        true
    }

    /// Forces a full garbage collection in the target.
    async fn collect_garbage(&mut self) -> Result<(), ProbeError>;

    /// Reads memory now, garbage included.
    async fn sample(&mut self) -> Result<Sample, ProbeError>;

    /// Collects until heapUsed and external stop falling, then reads: the
    /// after-GC reading that the method compares across cycles.
    async fn settled_sample(&mut self) -> Result<Sample, ProbeError> {
        self.collect_garbage().await?;
        let mut last = self.sample().await?;
        for _ in 1..MAX_SETTLE_COLLECTIONS {
            self.collect_garbage().await?;
            let next = self.sample().await?;
            let shrank = |a: u64, b: u64| b + SETTLED_BYTES < a;
            let still_shrinking =
                shrank(last.heap_used, next.heap_used) || shrank(last.external, next.external);
            last = next;
            if !still_shrinking {
                break;
            }
        }
        Ok(last)
    }
}
