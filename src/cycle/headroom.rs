//! Cycles sized to the target's headroom. A leak of hundreds of kilobytes
//! per request fills a 4 GB heap within one 2 500-request cycle; the
//! method's cycles then kill the target before the verdict has its
//! readings. So the loop keeps the target below half of each limit in
//! force (V8's heap limit for heapUsed; the cgroup's `memory.max` or
//! `--memory-limit` for rss): the peak sampler ends a cycle early when the
//! load passes half (`peak.rs`), and after each cycle the next one is
//! shrunk so that the cycles a verdict still needs fit in the room left.
//!
//! Half, not all: V8 needs room to collect (a full mark-compact of a heap
//! near its limit fails with "Ineffective mark-compacts"), and the
//! diagnosis' snapshot of a big heap costs about the heap again.

use crate::model::{CycleResult, Limits, Sample, Series};
use crate::verdict::Noise;

/// The smallest cycle the loop shrinks to: a few dozen units still show a
/// leak of 100 KB per unit at 30 noise floors (32 × 100 KB = 3.2 MB
/// against heapUsed's 0.1 MB).
pub const MIN_CYCLE_UNITS: u64 = 32;
/// Cycles a verdict needs after a shrink: the fixed method's three after
/// the warm-up, or `--cycles auto`'s first three groups.
const CYCLES_TO_DECIDE: f64 = 4.0;
/// How many more cycles than planned a shrunk schedule may take before
/// its budget in units runs out (`SequentialPlan::max_units`): a leak
/// decides in a few, and this bounds a run whose cycles shrank to the
/// floor.
pub const MOST_SPLIT: u32 = 10;

/// The share of the heap limit the loop keeps heapUsed below.
pub const HEAP_BRAKE_SHARE: f64 = 0.5;
/// The share of the rss limit the loop keeps rss below.
pub const RSS_BRAKE_SHARE: f64 = 0.9;

/// Where the peak sampler ends a cycle: for heapUsed and for rss.
pub fn brake_points(limits: &Limits) -> (Option<u64>, Option<u64>) {
    let share = |bytes: u64, share: f64| (bytes as f64 * share) as u64;
    (
        limits.heap_bytes.map(|b| share(b, HEAP_BRAKE_SHARE)),
        limits.cgroup_bytes.map(|b| share(b, RSS_BRAKE_SHARE)),
    )
}

/// The brake points a cycle that starts at `from` can cross: one the
/// target already sits above would end every cycle at once and measure
/// nothing (a clean route whose allocator keeps its peak), so it is
/// dropped; the shrinking below keeps a growing target's cycles small.
pub fn crossable(points: (Option<u64>, Option<u64>), from: &Sample) -> (Option<u64>, Option<u64>) {
    (
        points.0.filter(|&at| from.heap_used < at),
        points.1.filter(|&at| from.rss < at),
    )
}

/// Whether a settled reading is past a brake point of a limit in force.
pub fn past_brake_point(limits: &Limits, reading: &Sample) -> bool {
    let (heap_at, rss_at) = brake_points(limits);
    heap_at.is_some_and(|at| reading.heap_used > at) || rss_at.is_some_and(|at| reading.rss > at)
}

/// The most units the next cycle may send, when fewer than `planned`:
/// the room left below each brake point, after the last cycle's settled
/// reading, shared among the cycles a verdict still needs at the growth
/// per unit the last cycle showed. `None`: the plan fits, or nothing grew.
pub fn next_cycle_units(
    limits: &Limits,
    before: &Sample,
    last: &CycleResult,
    planned: u64,
) -> Option<u64> {
    if last.units == 0 {
        return None;
    }
    let (heap_at, rss_at) = brake_points(limits);
    let after = &last.after_gc;
    // Growth within a reading's noise is no growth: a working set that
    // levelled off keeps the plan.
    let allowed = |at: Option<u64>, was: u64, now: u64, series: &Series| -> Option<f64> {
        let at = at? as f64;
        let grew = now as f64 - was as f64;
        if grew <= Noise::Process.floor(series) {
            return None;
        }
        let growth = grew / last.units as f64;
        let room = (at - now as f64).max(0.0);
        Some(room / growth / CYCLES_TO_DECIDE)
    };
    let allowances: Vec<f64> = [
        allowed(
            heap_at,
            before.heap_used,
            after.heap_used,
            &Series::HEAP_USED,
        ),
        allowed(rss_at, before.rss, after.rss, &Series::RSS),
    ]
    .into_iter()
    .flatten()
    .collect();
    if allowances.is_empty() {
        return None;
    }
    let mut most = allowances.into_iter().fold(f64::INFINITY, f64::min);
    // A growing cycle the sampler ended early crossed a brake point
    // during its load: the next one is no larger than what it did.
    if last.peak.is_some_and(|p| p.braked) {
        most = most.min(last.units as f64);
    }
    (most < planned as f64).then(|| (most as u64).max(MIN_CYCLE_UNITS).min(planned))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Peak;

    const MB: u64 = 1 << 20;

    fn cycle(units: u64, heap_used: u64, braked: bool) -> CycleResult {
        CycleResult {
            units,
            after_gc: Sample {
                heap_used,
                rss: heap_used + 50 * MB,
                ..Sample::default()
            },
            peak: Some(Peak {
                braked,
                ..Peak::default()
            }),
            ..CycleResult::default()
        }
    }

    fn heap_limit(mb: u64) -> Limits {
        Limits {
            heap_bytes: Some(mb * MB),
            ..Limits::default()
        }
    }

    fn at(heap_used: u64) -> Sample {
        Sample {
            heap_used,
            rss: heap_used + 50 * MB,
            ..Sample::default()
        }
    }

    #[test]
    fn a_big_leak_shrinks_the_next_cycle_into_the_room_left() {
        // 2 500 requests kept 1.6 GB of a 4 GB heap: 0.4 GB is left below
        // half, at 650 KB a request: about 150 a cycle for four cycles.
        let last = cycle(2_500, 10 * MB + 1_600 * MB, false);
        let next = next_cycle_units(&heap_limit(4_096), &at(10 * MB), &last, 2_500).unwrap();
        assert!((150..=180).contains(&next), "{next}");
    }

    #[test]
    fn a_clean_or_small_route_keeps_its_plan() {
        let flat = cycle(2_500, 10 * MB, false);
        assert_eq!(
            next_cycle_units(&heap_limit(4_096), &at(10 * MB), &flat, 2_500),
            None
        );
        // 1 KB a request: 2.4 MB a cycle in 2 GB of room.
        let small = cycle(2_500, 10 * MB + 2_500 * 1024, false);
        assert_eq!(
            next_cycle_units(&heap_limit(4_096), &at(10 * MB), &small, 2_500),
            None
        );
        assert_eq!(
            next_cycle_units(&Limits::default(), &at(10 * MB), &small, 2_500),
            None
        );
    }

    #[test]
    fn past_half_the_cycles_stay_at_the_floor() {
        let last = cycle(400, 300 * MB, true);
        let next = next_cycle_units(&heap_limit(512), &at(10 * MB), &last, 2_500);
        assert_eq!(next, Some(MIN_CYCLE_UNITS));
    }

    #[test]
    fn a_braked_cycle_bounds_the_next_only_when_it_grew() {
        // Grew 90 MB in 700 requests and crossed the brake point.
        let grew = cycle(700, 100 * MB, true);
        let next = next_cycle_units(&heap_limit(512), &at(10 * MB), &grew, 2_500).unwrap();
        assert!(next <= 700, "{next}");
        // A clean route whose peak crossed it: the plan stands.
        let flat = cycle(700, 10 * MB, true);
        assert_eq!(
            next_cycle_units(&heap_limit(512), &at(10 * MB), &flat, 2_500),
            None
        );
    }

    #[test]
    fn a_brake_point_the_target_already_sits_above_is_dropped() {
        let limits = Limits {
            cgroup_bytes: Some(300 * MB),
            heap_bytes: Some(4_096 * MB),
            ..Limits::default()
        };
        let points = brake_points(&limits);
        assert_eq!(points, (Some(2_048 * MB), Some(270 * MB)));
        let high_rss = Sample {
            heap_used: 4 * MB,
            rss: 330 * MB,
            ..Sample::default()
        };
        assert_eq!(crossable(points, &high_rss), (Some(2_048 * MB), None));
    }

    #[test]
    fn the_cgroups_limit_counts_too_and_a_stated_one_does_not() {
        let stated = Limits {
            stated_bytes: Some(1_024 * MB),
            ..Limits::default()
        };
        assert_eq!(brake_points(&stated), (None, None));
        let limits = Limits {
            cgroup_bytes: Some(1_024 * MB),
            ..Limits::default()
        };
        // rss grew 400 MB in 2 000 requests; the brake point is 922 MB.
        let last = cycle(2_000, 410 * MB, false);
        let next = next_cycle_units(&limits, &at(10 * MB), &last, 2_000).unwrap();
        assert!((MIN_CYCLE_UNITS..2_000).contains(&next), "{next}");
    }
}
