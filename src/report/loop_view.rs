//! The event loop and the collector during each cycle's load, worded once
//! for the terminal, Markdown and HTML, and drawn as a chart for HTML.

use super::svg::{Series, Style, line_chart};
use crate::model::{CycleResult, RouteResult};

/// "cycle 2: event-loop delay p50 10.1, p99 12.3, max 41.0 ms; busy 93 %;
/// 42 GC pauses (38 scavenge, 2 mark-compact, 2 incremental) 310 ms, longest 12.1 ms".
pub fn cycle_line(cycle: &CycleResult) -> Option<String> {
    let lag = cycle.event_loop.as_ref()?;
    let mut text = format!(
        "cycle {}: event-loop delay p50 {:.1}, p99 {:.1}, max {:.1} ms; busy {:.0} %",
        cycle.cycle,
        lag.delay_p50_ms,
        lag.delay_p99_ms,
        lag.delay_max_ms,
        100.0 * lag.utilization
    );
    if let Some(gc) = &cycle.gc {
        text.push_str(&format!(
            "; {} GC pauses ({} scavenge, {} mark-compact, {} incremental) {:.0} ms, longest {:.1} ms",
            gc.count,
            gc.by_kind.scavenge,
            gc.by_kind.mark_compact,
            gc.by_kind.incremental,
            gc.total_ms,
            gc.max_ms
        ));
    }
    Some(text)
}

/// A chart of the longest event-loop delay and the longest collection
/// pause per cycle, in ms; `None` without statistics.
pub fn chart(route: &RouteResult) -> Option<String> {
    if route.cycles.iter().all(|c| c.event_loop.is_none()) {
        return None;
    }
    let labels: Vec<String> = route.cycles.iter().map(|c| c.cycle.to_string()).collect();
    let series = [
        Series {
            label: "event-loop delay, max",
            values: route
                .cycles
                .iter()
                .map(|c| c.event_loop.as_ref().map(|l| l.delay_max_ms))
                .collect(),
            style: Style::Primary,
        },
        Series {
            label: "longest collection pause",
            values: route
                .cycles
                .iter()
                .map(|c| c.gc.as_ref().map(|g| g.max_ms))
                .collect(),
            style: Style::Secondary,
        },
    ];
    Some(line_chart(
        "lag (solid) and GC pause (dashed) per cycle",
        "ms",
        &labels,
        &series,
        None,
    ))
}

/// "soak of 20 s, 10021 requests: at this rate heapUsed reaches …".
pub fn soak_line(route: &RouteResult) -> Option<String> {
    let soak = route.soak.as_ref()?;
    Some(format!(
        "soak of {:.0} s, {} requests ({:.0}/s): {}",
        soak.elapsed_s,
        soak.requests,
        soak.requests as f64 / soak.elapsed_s.max(1e-9),
        soak.projection
    ))
}
