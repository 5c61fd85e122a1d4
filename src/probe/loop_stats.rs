//! Event-loop delay, utilisation and garbage-collection pauses over a
//! cycle's load, observed inside the target through the inspector without
//! changing the app: `perf_hooks.monitorEventLoopDelay` (a histogram
//! sampled every 10 ms by a libuv timer), `performance.eventLoopUtilization`
//! and a `PerformanceObserver` of type `gc`. They are installed on the
//! first cycle under a registered symbol, reset at the start of each cycle,
//! read right after its load (before leakcheck forces any collection, which
//! would count as a pause), and removed when the route ends.

use serde_json::Value;

use crate::inspector::{Inspector, InspectorError};
use crate::model::{EventLoopStats, GcByKind, GcStats, LoopStats};

/// Milliseconds between the delay histogram's samples: Node's default,
/// fine enough to see a 30 ms pause, cheap for the target.
const RESOLUTION_MS: u32 = 10;

/// Installs the observers once and starts a new cycle's statistics.
fn start_expression() -> String {
    format!(
        "(() => {{ const k = Symbol.for('leakcheck.loop'); \
           const ph = require('node:perf_hooks'); let s = globalThis[k]; \
           if (!s) {{ \
             s = {{ h: ph.monitorEventLoopDelay({{ resolution: {RESOLUTION_MS} }}), gc: null }}; \
             const c = ph.constants; \
             const kinds = {{ [c.NODE_PERFORMANCE_GC_MINOR]: 'scavenge', \
               [c.NODE_PERFORMANCE_GC_MAJOR]: 'mark_compact', \
               [c.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', \
               [c.NODE_PERFORMANCE_GC_WEAKCB]: 'weak_callbacks' }}; \
             s.obs = new ph.PerformanceObserver((list) => {{ const g = s.gc; if (!g) return; \
               for (const e of list.getEntries()) {{ g.count += 1; g.total_ms += e.duration; \
                 if (e.duration > g.max_ms) g.max_ms = e.duration; \
                 const kind = kinds[e.detail ? e.detail.kind : e.kind]; \
                 if (kind) g.by_kind[kind] += 1; }} }}); \
             s.obs.observe({{ entryTypes: ['gc'] }}); \
             Object.defineProperty(globalThis, k, {{ value: s, configurable: true }}); }} \
           s.h.disable(); s.h.reset(); s.h.enable(); \
           s.gc = {{ count: 0, total_ms: 0, max_ms: 0, \
             by_kind: {{ scavenge: 0, mark_compact: 0, incremental: 0, weak_callbacks: 0 }} }}; \
           s.elu = ph.performance.eventLoopUtilization(); return true; }})()"
    )
}

/// Reads the cycle's statistics and stops counting collections. The
/// histogram records the time between its timer's runs, so the delay is
/// that less the resolution (`RES`, replaced by `RESOLUTION_MS`).
const TAKE: &str = "(() => { const RES = RESOLUTION; \
    const s = globalThis[Symbol.for('leakcheck.loop')]; \
    if (!s || !s.gc) return null; \
    const ph = require('node:perf_hooks'); s.h.disable(); \
    const elu = ph.performance.eventLoopUtilization(s.elu); const g = s.gc; s.gc = null; \
    const ms = (ns) => (s.h.count > 0 && Number.isFinite(ns) ? Math.max(0, ns / 1e6 - RES) : 0); \
    return { event_loop: { delay_p50_ms: ms(s.h.percentile(50)), delay_p99_ms: ms(s.h.percentile(99)), \
      delay_max_ms: ms(s.h.max), utilization: elu.utilization }, gc: g }; })()";

/// Removes what `start_expression` installed.
const STOP: &str = "(() => { const k = Symbol.for('leakcheck.loop'); const s = globalThis[k]; \
    if (s) { s.h.disable(); s.obs.disconnect(); delete globalThis[k]; } return true; })()";

/// Starts (or restarts) the statistics of a cycle.
pub async fn start(inspector: &Inspector) -> Result<(), InspectorError> {
    inspector.evaluate_in_console(&start_expression()).await?;
    Ok(())
}

/// The statistics since `start`; `None` when they were not started.
pub async fn take(inspector: &Inspector) -> Result<Option<LoopStats>, InspectorError> {
    let expression = TAKE.replace("RESOLUTION", &RESOLUTION_MS.to_string());
    let value = inspector.evaluate_in_console(&expression).await?;
    Ok(parse(&value))
}

/// Removes the observers from the target.
pub async fn stop(inspector: &Inspector) -> Result<(), InspectorError> {
    inspector.evaluate_in_console(STOP).await?;
    Ok(())
}

fn parse(value: &Value) -> Option<LoopStats> {
    let number = |path: &str| value.pointer(path).and_then(Value::as_f64).unwrap_or(0.0);
    let count = |path: &str| value.pointer(path).and_then(Value::as_u64).unwrap_or(0);
    value.get("event_loop")?;
    Some(LoopStats {
        event_loop: EventLoopStats {
            delay_p50_ms: number("/event_loop/delay_p50_ms"),
            delay_p99_ms: number("/event_loop/delay_p99_ms"),
            delay_max_ms: number("/event_loop/delay_max_ms"),
            utilization: number("/event_loop/utilization"),
        },
        gc: GcStats {
            count: count("/gc/count"),
            total_ms: number("/gc/total_ms"),
            max_ms: number("/gc/max_ms"),
            by_kind: GcByKind {
                scavenge: count("/gc/by_kind/scavenge"),
                mark_compact: count("/gc/by_kind/mark_compact"),
                incremental: count("/gc/by_kind/incremental"),
                weak_callbacks: count("/gc/by_kind/weak_callbacks"),
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_the_target_returns_and_nothing_when_not_started() {
        let value = json!({
            "event_loop": { "delay_p50_ms": 10.2, "delay_p99_ms": 41.0, "delay_max_ms": 74.5, "utilization": 0.8 },
            "gc": { "count": 12, "total_ms": 310.5, "max_ms": 74.0,
                    "by_kind": { "scavenge": 9, "mark_compact": 2, "incremental": 1, "weak_callbacks": 0 } }
        });
        let stats = parse(&value).unwrap();
        assert_eq!(stats.event_loop.delay_max_ms, 74.5);
        assert_eq!(stats.gc.by_kind.mark_compact, 2);
        assert_eq!(stats.gc.count, 12);
        assert_eq!(parse(&Value::Null), None);
        assert!(start_expression().contains("resolution: 10"));
    }
}
