//! The live status line: how long, how many readings, the trend with its
//! interval, and the verdict or projection so far.
//!
//! "watch 1 min: 14 readings (2 forced); heapUsed 13.1 MB, grows 280.4 MB/h
//! (95 %: 180.2 to 390.5) against a floor of 96.0 MB/h: retention; at this
//! rate it reaches …"

use std::time::Duration;

use crate::model::{RouteResult, Series};
use crate::units::{MB, human_duration};

pub fn line(route: &RouteResult, elapsed: Duration) -> String {
    let watch = route.watch.as_ref();
    let forced = watch.map_or(0, |w| w.forced_readings);
    let readings = match forced {
        0 => format!("{} readings", route.cycles.len()),
        n => format!("{} readings ({n} forced)", route.cycles.len()),
    };
    let heap = route
        .cycles
        .last()
        .map(|c| format!("; heapUsed {:.1} MB", c.after_gc.heap_used as f64 / MB))
        .unwrap_or_default();
    let trend = watch
        .and_then(|w| w.time_fits.iter().find(|f| f.series == Series::HEAP_USED))
        .map(|f| {
            format!(
                ", {:+.1} MB/h (95 %: {:.1} to {:.1}) against a floor of {:.1} MB/h",
                f.per_hour / MB,
                f.lower_per_hour / MB,
                f.upper_per_hour / MB,
                f.floor_per_hour / MB
            )
        })
        .unwrap_or_default();
    let verdict = route.verdict.as_ref().map_or("waiting", |v| v.kind.name());
    let projection = watch
        .filter(|w| route.is_leak() || w.reaches.is_some())
        .map(|w| format!("; {}", w.projection))
        .unwrap_or_default();
    format!(
        "watch {}: {readings}{heap}{trend}: {verdict}{projection}",
        human_duration(elapsed.as_secs_f64())
    )
}
