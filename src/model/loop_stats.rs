//! What the event loop and the garbage collector did during one cycle's
//! load: read beside the load, not in the settled reading, since the
//! forced collections that settle a reading would count as pauses.

use serde::{Deserialize, Serialize};

/// Event-loop delay (`perf_hooks.monitorEventLoopDelay`) and utilisation
/// (`performance.eventLoopUtilization`) over a cycle's load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EventLoopStats {
    pub delay_p50_ms: f64,
    pub delay_p99_ms: f64,
    pub delay_max_ms: f64,
    /// The share of the time the loop was busy, 0 to 1.
    pub utilization: f64,
}

/// Collection pauses on the main thread during a cycle's load, from V8's
/// trace events (`NodeTracing`, category `v8`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GcStats {
    pub count: u64,
    /// Pause time of all of them, ms.
    pub total_ms: f64,
    /// The longest pause, ms.
    pub max_ms: f64,
    /// The CPU time of the main thread during the pauses (V8's `tdur`
    /// beside the wall-clock `dur`), ms: on a busy machine a descheduled
    /// thread's pause is long in wall time and short in CPU time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_total_ms: Option<f64>,
    /// The most CPU time one pause took, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_max_ms: Option<f64>,
    /// Collections of each kind (counts).
    pub by_kind: GcByKind,
}

/// Pauses of each kind (counts), by V8's trace event names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GcByKind {
    /// Young generation (`V8.GCScavenger`).
    pub scavenge: u64,
    /// The old generation's final pause (`V8.GCFinalizeMC*`, `V8.GCCompactor`).
    pub mark_compact: u64,
    /// Incremental marking steps on the main thread (`V8.GCIncrementalMarking*`).
    pub incremental: u64,
    /// Weak callbacks processed (events naming `Weak` or `Phantom`).
    pub weak_callbacks: u64,
}

/// Both, as one reading of the probe; no GC figures when the target
/// could not trace itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoopStats {
    pub event_loop: EventLoopStats,
    pub gc: Option<GcStats>,
}
