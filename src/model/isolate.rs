//! The target's other JavaScript heaps: its worker threads and the Node
//! processes it forked (a cluster's workers). Each is read at every
//! reading beside the main isolate and judged on its own series by the
//! same rules, so a leak inside a worker is named there instead of showing
//! as rss growth with a flat main heap.

use serde::{Deserialize, Serialize};

use super::{RetainedPerRequest, Sample, Verdict};

/// Where an isolate lives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IsolateKind {
    /// A `worker_threads` worker of the target process, reached through
    /// the inspector's `NodeWorker` domain.
    #[default]
    Worker,
    /// A Node process the target started (cluster workers, a launcher's
    /// child), reached through the inspector it announced.
    Process,
}

/// One isolate's memory at one reading, with what names it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IsolateSample {
    /// `worker 1` (the worker's thread id) or `pid 4242`.
    pub id: String,
    pub kind: IsolateKind,
    pub pid: u32,
    /// The worker's script or the process's main script.
    pub script: String,
    pub heap_used: u64,
    pub heap_total: u64,
    pub external: u64,
    pub array_buffers: u64,
    /// The process's rss; 0 for a worker thread, which shares its
    /// process's rss with the main thread.
    pub rss: u64,
}

impl IsolateSample {
    /// The reading as a main-isolate `Sample`, so the same verdict code
    /// judges it.
    pub fn as_sample(&self) -> Sample {
        Sample {
            rss: self.rss,
            heap_total: self.heap_total,
            heap_used: self.heap_used,
            external: self.external,
            array_buffers: self.array_buffers,
            ..Sample::default()
        }
    }
}

/// One isolate's series over a route, and its own verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IsolateResult {
    pub id: String,
    pub kind: IsolateKind,
    pub pid: u32,
    pub script: String,
    /// Settled heapUsed: the baseline, then after each cycle.
    pub after_gc_heap_used: Vec<u64>,
    pub retained_bytes_per_request: RetainedPerRequest,
    pub verdict: Verdict,
}

impl IsolateResult {
    /// "worker 1 (file:///srv/worker.mjs)", "pid 4242 (/srv/app.js)".
    pub fn describe(&self) -> String {
        if self.script.is_empty() {
            self.id.clone()
        } else {
            format!("{} ({})", self.id, self.script)
        }
    }
}
