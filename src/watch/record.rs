//! Readings into the route: each reading the observer took becomes one of
//! the route's cycles (a "cycle" of whatever traffic came between two
//! major collections), so the reports, the baseline comparison and the
//! agents' summary read a watch as they read a soak; after each batch the
//! verdict and the projection are judged again from all of them.

use super::observer::Reading;
use crate::model::{
    CycleResult, LimitReach, Limits, RouteResult, Sample, VerdictKind, WatchResult,
};
use crate::units::MB;
use crate::verdict::watch::{judge, reach, reach_text};

/// Counts kept across the watch.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub natural: u32,
    pub forced: u32,
    pub forced_skipped: u32,
    pub longest_forced_pause_ms: Option<f64>,
    pub dropped: u64,
    /// The pause that decides whether the next forced collection may run:
    /// the last forced one's, else the last natural one's.
    pub last_full_pause_ms: Option<f64>,
    pub profiles: u32,
    /// Collections forced although the last paused longer than
    /// `--max-pause`, because the process was projected to run out soon.
    pub forced_over_pause: u32,
}

/// Adds one reading to `route`; `started_unix_s`: when the watch began.
pub fn add_reading(route: &mut RouteResult, reading: &Reading, started_unix_s: f64) {
    let read_at_s = reading.at_ms / 1000.0 - started_unix_s;
    let before = route.cycles.last();
    let served = match (reading.served, before.and_then(|c| c.after_gc.served)) {
        (Some(now), Some(then)) => Some(now.saturating_sub(then)),
        (Some(now), None) => Some(now),
        _ => None,
    };
    let duration_s = read_at_s - before.and_then(|c| c.read_at_s).unwrap_or(0.0);
    let sample = Sample {
        rss: reading.rss,
        heap_total: reading.heap_total,
        heap_used: reading.heap_used,
        external: reading.external,
        array_buffers: reading.array_buffers,
        served: reading.served,
        resources: reading.resources.clone(),
        ..Sample::default()
    };
    let requests = served.unwrap_or(0);
    route.cycles.push(CycleResult {
        cycle: route.cycles.len() as u32 + 1,
        requests,
        responses: requests,
        duration_s: duration_s.max(0.0),
        after_load: sample.clone(),
        after_gc: sample,
        units: requests,
        served,
        read_at_s: Some(read_at_s),
        ..CycleResult::default()
    });
}

/// Readings an indefinite watch keeps in its window at most: at one every
/// two seconds (a busy process's major collections, or the drain's pace)
/// an hour is 1 800; the fit is pairwise, so the bound keeps it cheap.
const MOST_WINDOW_READINGS: usize = 2_000;

/// Drops the readings older than `window` before the last one (and the
/// oldest past `MOST_WINDOW_READINGS`): an indefinite watch judges the
/// last hour of traffic, in bounded memory. The checkpoint keeps them.
pub fn keep_window(route: &mut RouteResult, window: std::time::Duration) {
    let Some(last) = route.cycles.last().and_then(|c| c.read_at_s) else {
        return;
    };
    let from = last - window.as_secs_f64();
    let stale = route
        .cycles
        .iter()
        .take_while(|c| c.read_at_s.is_some_and(|at| at < from))
        .count();
    let over = route.cycles.len().saturating_sub(MOST_WINDOW_READINGS);
    let drop = stale.max(over);
    if drop > 0 {
        route.cycles.drain(..drop);
        for (index, cycle) in route.cycles.iter_mut().enumerate() {
            cycle.cycle = index as u32 + 1;
        }
    }
}

/// Judges the route's readings so far into its verdict and `route.watch`;
/// `force_gc_every` is the `--force-gc-every` in force; `now_unix_s`
/// dates the projection.
pub fn judge_route(
    route: &mut RouteResult,
    tally: &Tally,
    force_gc_every: Option<std::time::Duration>,
    elapsed_s: f64,
    now_unix_s: f64,
) {
    let served_total = served_total(route);
    let served_per_s = served_rate(route);
    let judged = judge(&route.cycles, served_per_s, force_gc_every);
    let limits = route.limits.unwrap_or_default();
    // A significant trend is projected while still undecided too: the
    // process may not live until the decision.
    let reaches = route
        .cycles
        .last()
        .and_then(|last| reach(&judged.fits, last, &limits));
    let growth_bytes_per_hour = judged
        .fits
        .iter()
        .find(|f| Some(&f.series) == Some(&judged.verdict.figure.metric))
        .filter(|_| judged.verdict.kind.is_leak())
        .map_or(0.0, |f| f.per_hour);
    let projection = projection_text(
        &judged.verdict.kind,
        route,
        &limits,
        reaches.as_ref(),
        growth_bytes_per_hour,
        now_unix_s,
    );
    let previous = route.watch.take().unwrap_or_default();
    route.watch = Some(WatchResult {
        served: served_total,
        time_fits: judged.fits,
        growth_bytes_per_hour,
        reaches: reaches.map(|r| LimitReach {
            limit: r.limit.to_string(),
            limit_bytes: r.limit_bytes,
            hours: r.hours,
            at_unix_s: (now_unix_s + r.hours * 3600.0) as u64,
        }),
        projection,
        ..previous
    });
    route.verdict = Some(judged.verdict);
    count(route, tally, elapsed_s);
}

/// How many hours the watched process has left at the pace its heap
/// grows, when that is known: the fitted trend's projection, or before a
/// trend can be fitted the pace between the first reading and the last
/// against V8's heap limit (a process filling gigabytes an hour must not
/// wait for five readings to be told so).
pub fn hours_left(route: &RouteResult) -> Option<f64> {
    if let Some(reach) = route.watch.as_ref().and_then(|w| w.reaches.as_ref()) {
        return Some(reach.hours);
    }
    let limit = route.limits?.heap_bytes?;
    let (first, last) = (route.cycles.first()?, route.cycles.last()?);
    let span_h = (last.read_at_s? - first.read_at_s?) / 3600.0;
    let grown = last
        .after_gc
        .heap_used
        .checked_sub(first.after_gc.heap_used)?;
    (span_h > 0.0 && grown > 0).then(|| {
        let per_hour = grown as f64 / span_h;
        limit.saturating_sub(last.after_gc.heap_used) as f64 / per_hour
    })
}

/// Keeps the watch's counts and length current, the verdict as it stands.
pub fn count(route: &mut RouteResult, tally: &Tally, elapsed_s: f64) {
    let watch = route.watch.get_or_insert_with(WatchResult::default);
    watch.elapsed_s = elapsed_s;
    watch.natural_readings = tally.natural;
    watch.forced_readings = tally.forced;
    watch.forced_skipped = tally.forced_skipped;
    watch.longest_forced_pause_ms = tally.longest_forced_pause_ms;
    watch.dropped_readings = tally.dropped;
    watch.profiles = tally.profiles;
    watch.forced_over_pause = tally.forced_over_pause;
}

fn projection_text(
    kind: &VerdictKind,
    route: &RouteResult,
    limits: &Limits,
    reaches: Option<&crate::verdict::watch::Reach>,
    growth_bytes_per_hour: f64,
    now_unix_s: f64,
) -> String {
    let heap = route.cycles.last().map_or(0, |c| c.after_gc.heap_used);
    match (kind, reaches) {
        (VerdictKind::Inconclusive, Some(reach)) => {
            format!("if the trend holds, {}", reach_text(reach, now_unix_s))
        }
        (_, Some(reach)) => reach_text(reach, now_unix_s),
        (k, None) if k.is_leak() && growth_bytes_per_hour > 0.0 && limits.is_empty() => format!(
            "it grows {:.1} MB/h; no limit is known to project to (give --memory-limit)",
            growth_bytes_per_hour / MB
        ),
        (k, None) if k.is_leak() && growth_bytes_per_hour > 0.0 => format!(
            "it grows {:.1} MB/h (the limits in force bound another series)",
            growth_bytes_per_hour / MB
        ),
        (k, None) if k.is_leak() => "the count grows; its memory is too small to project".into(),
        (VerdictKind::Inconclusive, None) => {
            "no projection yet: the trend cannot be told from the readings' spread".into()
        }
        _ => format!(
            "no growth to project; heapUsed stays near {:.1} MB",
            heap as f64 / MB
        ),
    }
}

/// Requests the target began serving over the watch, where counted.
fn served_total(route: &RouteResult) -> Option<u64> {
    // The count starts at 0 when the observer is installed.
    route.cycles.last()?.after_gc.served
}

/// Requests a second between the first reading and the last.
fn served_rate(route: &RouteResult) -> Option<f64> {
    let (first, last) = (route.cycles.first()?, route.cycles.last()?);
    let span = last.read_at_s? - first.read_at_s?;
    let count = last.after_gc.served?.checked_sub(first.after_gc.served?)?;
    (span > 0.0).then(|| count as f64 / span)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(seq: u64, at_s: f64, heap_mb: f64, served: u64) -> Reading {
        Reading {
            seq,
            at_ms: (1_000.0 + at_s) * 1000.0,
            heap_used: (heap_mb * MB) as u64,
            heap_total: (32.0 * MB) as u64,
            external: 0,
            array_buffers: 0,
            rss: (80.0 * MB) as u64,
            pause_ms: 5.0,
            forced: false,
            served: Some(served),
            resources: Default::default(),
        }
    }

    #[test]
    fn readings_become_cycles_of_the_requests_between_them_and_a_rate() {
        let mut route = RouteResult::default();
        for (i, heap) in [10.0, 10.5, 11.0, 11.6, 12.0, 12.4, 13.1, 13.5, 14.0]
            .iter()
            .enumerate()
        {
            add_reading(
                &mut route,
                &reading(i as u64 + 1, 5.0 * i as f64, *heap, 1000 * i as u64),
                1_000.0,
            );
        }
        assert_eq!(route.cycles[1].requests, 1000);
        assert_eq!(route.cycles[1].duration_s, 5.0);
        assert_eq!(served_rate(&route), Some(200.0));
        route.limits = Some(Limits {
            heap_bytes: Some(4 << 30),
            ..Limits::default()
        });
        judge_route(&mut route, &Tally::default(), None, 40.0, 1_040.0);
        let verdict = route.verdict.as_ref().unwrap();
        assert_eq!(verdict.kind, VerdictKind::Retention, "{}", verdict.summary);
        let watch = route.watch.as_ref().unwrap();
        assert!(
            watch.projection.contains("V8's heap limit"),
            "{}",
            watch.projection
        );
        assert!(watch.reaches.as_ref().unwrap().hours > 10.0);
        assert_eq!(watch.served, Some(8000));
    }

    #[test]
    fn hours_left_comes_from_the_pace_before_a_trend_can_be_fitted() {
        let mut route = RouteResult {
            limits: Some(Limits {
                heap_bytes: Some(1 << 30),
                ..Limits::default()
            }),
            ..RouteResult::default()
        };
        // 100 MB in 10 s: 36 GB/h, the 1 GB heap full in about 2 min.
        for (i, heap) in [100.0, 200.0].iter().enumerate() {
            add_reading(
                &mut route,
                &reading(i as u64, 10.0 * i as f64, *heap, 0),
                1_000.0,
            );
        }
        let hours = hours_left(&route).unwrap();
        assert!((0.02..0.04).contains(&hours), "{hours}");
        // A heap that shrank projects nothing.
        add_reading(&mut route, &reading(3, 20.0, 90.0, 0), 1_000.0);
        assert_eq!(hours_left(&route), None);
    }
}
