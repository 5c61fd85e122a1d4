//! Event-loop delay, utilisation and garbage-collection pauses over a
//! cycle's load, observed inside the target through the inspector without
//! changing the app.
//!
//! The loop: `perf_hooks.monitorEventLoopDelay` (a histogram sampled every
//! 10 ms by a libuv timer) and `performance.eventLoopUtilization`,
//! installed on the first cycle under a registered symbol, reset at the
//! start of each cycle, read right after its load (before leakcheck forces
//! any collection, which would count as a pause), removed when the route
//! ends.
//!
//! The collector: V8's own trace events of category `v8`, recorded by the
//! `NodeTracing` domain from the start of the load to its end. Each pause
//! on the main thread is a complete event (`ph: "X"`, its `dur` in µs)
//! named `V8.GCScavenger`, `V8.GCFinalizeMC`, `V8.GCCompactor`,
//! `V8.GCIncrementalMarking…` (the same names on Node 20 and 22). The
//! trace is recorded in C++ and read once, at the end of the load. Over
//! leakcheck's WebSocket session Node 20 and 22 start the trace but send
//! no events, so the trace runs in an inspector session the target opens
//! on itself (`new inspector.Session()`, installed by the same expression),
//! which sums the pauses as the chunks arrive. Each event carries the wall
//! time (`dur`) and the thread's CPU time (`tdur`): both are summed, so a
//! pause that was long only because the thread waited for a core can be
//! told from one the collector spent. A `PerformanceObserver` of
//! type `gc` was the first choice; it cost /churn 5 % of its throughput (a
//! JavaScript entry per collection, about 800 a second there; BENCHMARKS.md,
//! "Loop and GC statistics").

use serde_json::Value;

use crate::inspector::{Inspector, InspectorError};
use crate::model::{EventLoopStats, GcStats, LoopStats};

/// How long the trace may take to arrive after `NodeTracing.stop`; a
/// cycle's trace is a few hundred KB, parsed in the target.
const TRACE_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// Milliseconds between the delay histogram's samples: Node's default,
/// fine enough to see a 30 ms pause, cheap for the target.
const RESOLUTION_MS: u32 = 10;

/// Installs the histogram and the tracing session once, and starts a new
/// cycle's statistics. Modules come from `process.getBuiltinModule` where
/// it exists (Node 20.16+, Deno, Bun: the last two have no console
/// `require`), else from the console's `require`. The collector's trace
/// needs a second inspector session inside the target: Deno 2.9.6 panics
/// when one opens beside ours ("RefCell already borrowed") and Bun has no
/// `NodeTracing`, so on both the GC figures are absent, not zero.
fn start_expression() -> String {
    format!(
        "(() => {{ const k = Symbol.for('leakcheck.loop'); \
           const ph = (process.getBuiltinModule ? process.getBuiltinModule('node:perf_hooks') : require('node:perf_hooks')); let s = globalThis[k]; \
           if (!s) {{ \
             s = {{ h: ph.monitorEventLoopDelay({{ resolution: {RESOLUTION_MS} }}), gc: null }}; \
             try {{ if (typeof Deno !== 'undefined' || typeof Bun !== 'undefined') throw 0; s.session = new ((process.getBuiltinModule ? process.getBuiltinModule('node:inspector') : require('node:inspector')).Session)(); s.session.connect(); \
               s.session.on('NodeTracing.dataCollected', (m) => {{ const g = s.gc; if (!g) return; \
                 for (const e of m.params.value) {{ \
                   if (e.ph !== 'X' || e.tid !== e.pid || !String(e.name).startsWith('V8.GC')) continue; \
                   const ms = (e.dur || 0) / 1000; g.count += 1; g.total_ms += ms; \
                   if (ms > g.max_ms) g.max_ms = ms; \
                   if (typeof e.tdur === 'number') {{ const cpu = e.tdur / 1000; \
                     g.cpu_total_ms = (g.cpu_total_ms || 0) + cpu; \
                     if (cpu > (g.cpu_max_ms || 0)) g.cpu_max_ms = cpu; }} \
                   const n = e.name; \
                   if (n === 'V8.GCScavenger') g.by_kind.scavenge += 1; \
                   else if (n.startsWith('V8.GCFinalizeMC') || n.startsWith('V8.GCCompactor')) g.by_kind.mark_compact += 1; \
                   else if (n.startsWith('V8.GCIncrementalMarking')) g.by_kind.incremental += 1; \
                   else if (n.includes('Weak') || n.includes('Phantom')) g.by_kind.weak_callbacks += 1; }} }}); \
               s.session.on('NodeTracing.tracingComplete', () => {{ if (s.done) s.done(); }}); \
             }} catch (e) {{ s.session = null; }} \
             Object.defineProperty(globalThis, k, {{ value: s, configurable: true }}); }} \
           s.h.disable(); s.h.reset(); s.h.enable(); \
           s.gc = s.session ? {{ count: 0, total_ms: 0, max_ms: 0, \
             by_kind: {{ scavenge: 0, mark_compact: 0, incremental: 0, weak_callbacks: 0 }} }} : null; \
           if (s.session) s.session.post('NodeTracing.start', \
             {{ traceConfig: {{ includedCategories: ['v8'] }} }}, (err) => {{ if (err) s.gc = null; }}); \
           s.elu = ph.performance.eventLoopUtilization(); return true; }})()"
    )
}

/// Stops the trace, waits for its last chunk, and reads the cycle's
/// statistics. A histogram that recorded nothing (Deno's and Bun's
/// `monitorEventLoopDelay` do not sample) gives no event-loop figures
/// rather than zeros. The histogram records the time between its timer's runs,
/// so the delay is that less the resolution (`RES`, replaced by
/// `RESOLUTION_MS`).
const TAKE: &str = "(async () => { const RES = RESOLUTION; \
    const s = globalThis[Symbol.for('leakcheck.loop')]; if (!s || !s.elu) return null; \
    const ph = (process.getBuiltinModule ? process.getBuiltinModule('node:perf_hooks') : require('node:perf_hooks')); s.h.disable(); \
    const elu = ph.performance.eventLoopUtilization(s.elu); s.elu = null; \
    if (s.gc) await new Promise((done) => { s.done = done; \
      s.session.post('NodeTracing.stop', (err) => { if (err) { s.gc = null; done(); } }); \
      setTimeout(done, TRACE_WAIT_MS); }); \
    s.done = null; const gc = s.gc; s.gc = null; \
    const ms = (ns) => (s.h.count > 0 && Number.isFinite(ns) ? Math.max(0, ns / 1e6 - RES) : 0); \
    if (s.h.count === 0) return { event_loop: null, gc }; \
    return { event_loop: { delay_p50_ms: ms(s.h.percentile(50)), delay_p99_ms: ms(s.h.percentile(99)), \
      delay_max_ms: ms(s.h.max), utilization: elu.utilization }, gc }; })()";

/// Removes what `start_expression` installed.
const STOP: &str = "(() => { const k = Symbol.for('leakcheck.loop'); const s = globalThis[k]; \
    if (s) { s.h.disable(); if (s.session) s.session.disconnect(); delete globalThis[k]; } \
    return true; })()";

/// Starts (or restarts) the statistics of a cycle.
pub async fn start(inspector: &Inspector) -> Result<(), InspectorError> {
    inspector.evaluate_in_console(&start_expression()).await?;
    Ok(())
}

/// The statistics since `start`; `None` when they were not started, and
/// no GC figures when the target could not trace itself.
pub async fn take(inspector: &Inspector) -> Result<Option<LoopStats>, InspectorError> {
    let expression = TAKE
        .replace("TRACE_WAIT_MS", &TRACE_WAIT.as_millis().to_string())
        .replace("RESOLUTION", &RESOLUTION_MS.to_string());
    let value = inspector.evaluate_promise(&expression).await?;
    let event_loop = value.get("event_loop").and_then(parse_loop);
    Ok(event_loop.map(|event_loop| LoopStats {
        event_loop,
        gc: value.get("gc").and_then(parse_gc),
    }))
}

/// Removes the histogram and the tracing session from the target.
pub async fn stop(inspector: &Inspector) -> Result<(), InspectorError> {
    inspector.evaluate_in_console(STOP).await?;
    Ok(())
}

fn parse_gc(value: &Value) -> Option<GcStats> {
    serde_json::from_value(value.clone()).ok()
}

fn parse_loop(value: &Value) -> Option<EventLoopStats> {
    let number = |key: &str| value.get(key).and_then(Value::as_f64).unwrap_or(0.0);
    value.get("utilization")?;
    Some(EventLoopStats {
        delay_p50_ms: number("delay_p50_ms"),
        delay_p99_ms: number("delay_p99_ms"),
        delay_max_ms: number("delay_max_ms"),
        utilization: number("utilization"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_collections_the_target_summed() {
        let gc = json!({ "count": 12, "total_ms": 310.5, "max_ms": 74.0,
            "by_kind": { "scavenge": 9, "mark_compact": 2, "incremental": 1, "weak_callbacks": 0 } });
        let gc = parse_gc(&gc).unwrap();
        assert_eq!((gc.count, gc.by_kind.mark_compact), (12, 2));
        assert_eq!(parse_gc(&Value::Null), None);
        // Only pauses of the main thread are counted.
        assert!(start_expression().contains("e.tid !== e.pid"));
    }

    #[test]
    fn reads_the_loop_and_nothing_when_not_started() {
        let value = json!({ "delay_p50_ms": 0.2, "delay_p99_ms": 41.0, "delay_max_ms": 74.5, "utilization": 0.8 });
        assert_eq!(parse_loop(&value).unwrap().delay_max_ms, 74.5);
        assert_eq!(parse_loop(&Value::Null), None);
        assert!(start_expression().contains("resolution: 10"));
    }
}
