//! The page's main thread during a cycle: how late its timers ran and how
//! busy it was, the browser's counterpart of a server's event-loop figures.
//!
//! Utilisation: Chromium's own cumulative main-thread task time
//! (`TaskDuration` of `Performance.getMetrics`, seconds) over the wall
//! time between two readings: exact and free for the page.
//!
//! Delay: a 10 ms timer chain installed in the page under a registered
//! symbol records how late each run is, the way Node's
//! `monitorEventLoopDelay` samples libuv. The latest `RING` delays are kept
//! in a typed array (2 KB, allocated once, so the monitor adds nothing per
//! tick to the heap being measured) for p50 and p99; the maximum covers
//! the whole cycle. A navigation replaces the document and its monitor:
//! that cycle then reports no delay figures rather than made-up ones.
//!
//! Garbage-collection pauses are not read: the page cannot observe them
//! and Chromium reports them only through a trace of the whole browser.

use std::time::Instant;

use serde_json::{Value, json};

use crate::inspector::{Inspector, InspectorError};
use crate::model::{EventLoopStats, LoopStats};

/// Delays kept for the percentiles (10 ms apart: the last ~5 s).
const RING: usize = 512;
/// The timer's period, as for a Node target.
const RESOLUTION_MS: u32 = 10;

/// Where a cycle's statistics started.
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    task_seconds: f64,
    at: Instant,
}

fn install() -> String {
    format!(
        "(() => {{ const k = Symbol.for('leakcheck.loop'); let s = globalThis[k]; \
           if (!s) {{ s = {{ ring: new Float32Array({RING}), n: 0, max: 0, next: 0, timer: 0 }}; \
             const tick = () => {{ const late = Math.max(0, performance.now() - s.next); \
               s.ring[s.n % {RING}] = late; s.n += 1; if (late > s.max) s.max = late; \
               s.next = performance.now() + {RESOLUTION_MS}; s.timer = setTimeout(tick, {RESOLUTION_MS}); }}; \
             Object.defineProperty(globalThis, k, {{ value: s, configurable: true }}); \
             s.next = performance.now() + {RESOLUTION_MS}; s.timer = setTimeout(tick, {RESOLUTION_MS}); }} \
           s.n = 0; s.max = 0; return true; }})()"
    )
}

const TAKE: &str = "(() => { const s = globalThis[Symbol.for('leakcheck.loop')]; \
    if (!s || s.n === 0) return null; const n = Math.min(s.n, s.ring.length); \
    const d = Array.from(s.ring.subarray(0, n)).sort((a, b) => a - b); \
    const at = (p) => d[Math.min(n - 1, Math.floor(p * n))]; \
    return { p50: at(0.5), p99: at(0.99), max: s.max }; })()";

const REMOVE: &str = "(() => { const k = Symbol.for('leakcheck.loop'); const s = globalThis[k]; \
    if (s) { clearTimeout(s.timer); delete globalThis[k]; } return true; })()";

/// Starts a cycle's statistics.
pub async fn start(page: &Inspector) -> Result<Mark, InspectorError> {
    page.evaluate(&install()).await?;
    Ok(Mark {
        task_seconds: task_seconds(page).await?,
        at: Instant::now(),
    })
}

/// The statistics since `mark`.
pub async fn take(page: &Inspector, mark: Mark) -> Result<Option<LoopStats>, InspectorError> {
    let busy = task_seconds(page).await? - mark.task_seconds;
    let wall = mark.at.elapsed().as_secs_f64();
    let delays = page.evaluate(TAKE).await?;
    let number = |key: &str| delays.get(key).and_then(Value::as_f64);
    let (Some(p50), Some(p99), Some(max)) = (number("p50"), number("p99"), number("max")) else {
        return Ok(None);
    };
    Ok(Some(LoopStats {
        event_loop: EventLoopStats {
            delay_p50_ms: p50,
            delay_p99_ms: p99,
            delay_max_ms: max,
            utilization: (busy / wall.max(1e-9)).clamp(0.0, 1.0),
        },
        gc: None,
    }))
}

/// Removes the timer chain from the page.
pub async fn stop(page: &Inspector) {
    let _ = page.evaluate(REMOVE).await;
}

async fn task_seconds(page: &Inspector) -> Result<f64, InspectorError> {
    let metrics = page.call("Performance.getMetrics", json!({})).await?;
    Ok(metric(&metrics, "TaskDuration").unwrap_or(0.0))
}

/// One figure of a `Performance.getMetrics` answer.
pub fn metric(metrics: &Value, name: &str) -> Option<f64> {
    metrics
        .get("metrics")?
        .as_array()?
        .iter()
        .find(|m| m.get("name").and_then(Value::as_str) == Some(name))?
        .get("value")?
        .as_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_one_metric_by_name() {
        let metrics = json!({ "metrics": [
            { "name": "Nodes", "value": 41.0 }, { "name": "TaskDuration", "value": 0.25 } ] });
        assert_eq!(metric(&metrics, "TaskDuration"), Some(0.25));
        assert_eq!(metric(&metrics, "ScriptDuration"), None);
        assert_eq!(metric(&json!({}), "Nodes"), None);
    }

    #[test]
    fn the_monitor_keeps_a_fixed_ring() {
        assert!(install().contains("new Float32Array(512)"));
        assert!(install().contains("setTimeout(tick, 10)"));
    }
}
