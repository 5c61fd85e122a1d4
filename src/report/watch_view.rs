//! How a watch reads in every report: what was watched and how, the
//! projection, the snapshot's fate, and anything left in the target.

use crate::model::{RouteResult, WatchResult};
use crate::units::human_duration;

/// The watch's lines, empty for any other route.
pub fn lines(route: &RouteResult) -> Vec<String> {
    let Some(watch) = &route.watch else {
        return Vec::new();
    };
    let mut lines = vec![readings_line(route, watch)];
    // A watch cut short before its first judgement has no projection.
    if !watch.projection.is_empty() {
        lines.push(format!("projection: {}", watch.projection));
    }
    if let Some(snapshot) = &watch.snapshot {
        lines.push(match (&snapshot.file, &snapshot.not_taken) {
            (Some(file), _) => format!(
                "snapshot: {file} ({:.1} MB); read it with `leakcheck inspect {file}`",
                snapshot.bytes.unwrap_or(0) as f64 / crate::units::MB
            ),
            (None, Some(why)) => format!("snapshot not taken: {why}"),
            (None, None) => "snapshot not taken".into(),
        });
    }
    if let Some(path) = &watch.checkpoint {
        lines.push(format!("every reading: {path} (NDJSON)"));
    }
    if !watch.detached.left.is_empty() {
        lines.push(format!(
            "left in the target: {}",
            watch.detached.left.join("; ")
        ));
    }
    lines
}

/// "watched 2 min: 24 readings at its own major collections (3 forced,
/// longest pause 12 ms), 24013 requests served (200/s)".
fn readings_line(route: &RouteResult, watch: &WatchResult) -> String {
    let forced = match (watch.forced_readings, watch.forced_skipped) {
        (0, 0) => String::new(),
        (n, 0) => format!(
            " ({n} forced, longest pause {:.0} ms)",
            watch.longest_forced_pause_ms.unwrap_or(0.0)
        ),
        (n, skipped) => {
            format!(" ({n} forced, {skipped} not forced: the last pause was over --max-pause)")
        }
    };
    let served = match watch.served {
        Some(n) => format!(
            ", {n} requests served ({:.0}/s)",
            n as f64 / watch.elapsed_s.max(1e-9)
        ),
        None => ", requests not counted".into(),
    };
    format!(
        "watched {}: {} readings at its own major collections{forced}{served}",
        human_duration(watch.elapsed_s),
        route.cycles.len()
    )
}
