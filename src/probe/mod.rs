//! Reading the target's memory. A `Probe` forces a full collection and takes
//! a `Sample`; each way of reaching a target (the inspector, the app's own
//! endpoints, /proc) is one implementation.

mod endpoints;
mod inspector;
pub mod limits;
pub mod loop_stats;
pub mod parts;
pub mod proc;
mod served;
pub mod smaps;

use async_trait::async_trait;

pub use endpoints::{EndpointsProbe, parse_mem};
pub use inspector::{Counter, InspectorProbe};
pub use proc::{ProcProbe, parse_status};
pub use served::SERVED_COUNTER;

use crate::model::{ProbeKind, Sample};

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error(transparent)]
    Inspector(#[from] crate::inspector::InspectorError),
    #[error("the target's memory reading was not understood: {0}")]
    Malformed(String),
    #[error("the app's memory endpoint failed: {0}")]
    Endpoint(String),
    #[error("the app's memory endpoint did not answer")]
    EndpointGet(#[from] crate::net::NetError),
    /// The process has exited: its /proc entry is gone.
    #[error("process {pid} is gone ({path} no longer exists)")]
    ProcessGone { pid: u32, path: String },
    /// /proc could not be read for another reason (EMFILE, EACCES): the
    /// process may well be alive, so this is never taken as an exit.
    #[error("cannot read {path}")]
    ProcUnreadable {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Collections before a settled reading gives up waiting for the heap to
/// stop shrinking. Two are usually enough: the second returns the backing
/// stores of ArrayBuffers the first found dead (docs/src/method.md, step 4: a second collection returns them).
const MAX_SETTLE_COLLECTIONS: usize = 4;
/// A collection that frees less than this is taken as "stopped shrinking":
/// below the ~0.1 MB repeatability of after-GC readings.
const SETTLED_BYTES: u64 = 32 * 1024;

#[async_trait]
pub trait Probe: Send {
    fn kind(&self) -> ProbeKind;

    /// The inspector behind this probe, for snapshots and the sampling
    /// heap profiler (only the inspector probe has one).
    fn inspector(&self) -> Option<&crate::inspector::Inspector> {
        None
    }

    /// The session of one of the target's other isolates (`worker 1`,
    /// `pid 4242`), to diagnose a leak there.
    fn isolate_inspector(&self, _id: &str) -> Option<crate::inspector::Inspector> {
        None
    }

    /// Starts observing event-loop delay and collections for a cycle's
    /// load (the inspector probe; others read none).
    async fn start_loop_stats(&mut self) -> Result<(), ProbeError> {
        Ok(())
    }

    /// What the loop and the collector did since `start_loop_stats`.
    async fn take_loop_stats(&mut self) -> Result<Option<crate::model::LoopStats>, ProbeError> {
        Ok(None)
    }

    /// Removes the observers from the target.
    async fn stop_loop_stats(&mut self) {}

    /// The target's process id, where the probe knows it (for /proc and
    /// the cgroup's limits).
    async fn pid(&mut self) -> Option<u32> {
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
            let isolates = |s: &Sample| s.isolates.iter().map(|i| i.heap_used).sum::<u64>();
            let still_shrinking = shrank(last.heap_used, next.heap_used)
                || shrank(last.external, next.external)
                || shrank(isolates(&last), isolates(&next));
            last = next;
            if !still_shrinking {
                break;
            }
        }
        Ok(last)
    }
}
