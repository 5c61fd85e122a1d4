//! The memory limits in force for a target, read once: V8's heap limit
//! through the inspector, and the memory limit of the cgroup the process
//! runs in (a container's), read behind the platform seam
//! (`platform/cgroup.rs`).

use super::Probe;
use crate::model::Limits;
use crate::platform::cgroup::cgroup_memory_max;

/// Reads the limits of the probe's target (process `pid`, when known):
/// `stated` is `--memory-limit`.
pub async fn read_limits(probe: &dyn Probe, pid: Option<u32>, stated: Option<u64>) -> Limits {
    match probe.inspector() {
        Some(inspector) => limits_through(inspector, pid, stated).await,
        None => Limits {
            heap_bytes: None,
            cgroup_bytes: pid.and_then(cgroup_memory_max),
            stated_bytes: stated,
        },
    }
}

/// The limits of a target reached through its inspector alone (`watch`,
/// which has no probe).
pub async fn limits_through(
    inspector: &crate::inspector::Inspector,
    pid: Option<u32>,
    stated: Option<u64>,
) -> Limits {
    Limits {
        heap_bytes: heap_size_limit_of(inspector).await,
        cgroup_bytes: pid.and_then(cgroup_memory_max),
        stated_bytes: stated,
    }
}

/// `v8.getHeapStatistics().heap_size_limit` of an inspector target.
pub async fn heap_size_limit(probe: &dyn Probe) -> Option<u64> {
    heap_size_limit_of(probe.inspector()?).await
}

async fn heap_size_limit_of(inspector: &crate::inspector::Inspector) -> Option<u64> {
    let value = inspector
        .evaluate_in_console("require('v8').getHeapStatistics().heap_size_limit")
        .await
        .ok()?;
    value.as_f64().map(|v| v as u64).or_else(|| match value {
        serde_json::Value::String(text) => text.parse().ok(),
        _ => None,
    })
}
