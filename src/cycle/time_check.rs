//! Time or requests? After a route's cycles, `run` tells growth that
//! follows the clock (a sampler's interval, a retry queue on a timer) from
//! growth that follows requests. Cycles of equal length cannot: both grow
//! the same amount per cycle. So when the evidence asks for it, one idle
//! interval without load is added between two settled readings, and what
//! the heap did there decides.
//!
//! The evidence asks when the after-GC heap rises with time over the
//! cycles (the lower end of its 95 % interval above zero,
//! `verdict/time_trend.rs`), or when the verdict is heap retention (which
//! a timer would also produce). The interval lasts long enough for the
//! rate seen under load to grow the heap by `IDLE_FLOORS` noise floors,
//! within [`MIN_IDLE`, `MAX_IDLE`]. The growth is time's when the idle
//! interval grows beyond two noise floors at half the loaded rate or more.

use std::time::{Duration, Instant};

use crate::model::{
    CycleResult, Finding, FindingKind, IdleCheck, RouteResult, Series, Unit, VerdictKind,
};
use crate::probe::{Probe, ProbeError};
use crate::units::per_request;
use crate::verdict::metric::{UNCLEAR_SIGMAS, noise_floor};
use crate::verdict::time_trend::fit_over_time;

/// Noise floors the idle interval should let a timer grow the heap by.
const IDLE_FLOORS: f64 = 3.0;
const MIN_IDLE: Duration = Duration::from_secs(2);
/// An idle interval longer than this is a soak's job.
const MAX_IDLE: Duration = Duration::from_secs(30);
/// The idle rate must reach this share of the loaded one.
const SAME_RATE: f64 = 0.5;

/// Whether the route's readings ask for an idle interval, and the loaded
/// rate of after-GC heapUsed growth per second they show.
fn asks(into: &RouteResult) -> Option<f64> {
    let verdict = into.verdict.as_ref()?;
    let points = timed_heap(&into.cycles)?;
    let fit = fit_over_time(&Series::HEAP_USED, &points, noise_floor(&Series::HEAP_USED))?;
    let rate = fit.per_hour / 3600.0;
    // Rising, and by more than the readings' noise over the cycles' span:
    // a clean process creeps for its first seconds (V8 warming up), which a
    // confidence interval over a few seconds of readings can exclude zero
    // for without it being growth anyone could act on.
    let rising = fit.lower_per_hour > 0.0
        && rate * fit.span_s > UNCLEAR_SIGMAS * noise_floor(&Series::HEAP_USED);
    (rate > 0.0 && (rising || verdict.kind == VerdictKind::Retention)).then_some(rate)
}

/// (seconds, heapUsed) of the settled readings after the warm-up cycle.
fn timed_heap(cycles: &[CycleResult]) -> Option<Vec<(f64, f64)>> {
    cycles
        .iter()
        .skip(1)
        .map(|c| Some((c.read_at_s?, c.after_gc.heap_used as f64)))
        .collect()
}

/// Adds the idle interval when asked, and turns the verdict into
/// `time-growth` when the heap grew there as it did under load.
pub async fn check(
    probe: &mut dyn Probe,
    into: &mut RouteResult,
    unit: Unit,
    soak: bool,
) -> Result<(), ProbeError> {
    if soak || unit != Unit::Request || !probe.can_collect() {
        return Ok(());
    }
    let Some(loaded_rate) = asks(into) else {
        say_what_time_bounds(into);
        return Ok(());
    };
    let noise = noise_floor(&Series::HEAP_USED);
    let wanted = Duration::from_secs_f64(IDLE_FLOORS * noise / loaded_rate);
    let idle = wanted.clamp(MIN_IDLE, MAX_IDLE);
    let before = probe.settled_sample().await?;
    let started = Instant::now();
    tokio::time::sleep(idle).await;
    let after = probe.settled_sample().await?;
    let seconds = started.elapsed().as_secs_f64();
    let grown = after.heap_used as f64 - before.heap_used as f64;
    let idle_rate = grown / seconds;
    let time_driven = grown > UNCLEAR_SIGMAS * noise && idle_rate >= SAME_RATE * loaded_rate;
    into.idle = Some(IdleCheck {
        seconds,
        heap_used_before: before.heap_used,
        heap_used_after: after.heap_used,
        idle_bytes_per_second: idle_rate,
        loaded_bytes_per_second: loaded_rate,
        time_driven,
    });
    let Some(verdict) = into.verdict.as_mut() else {
        return Ok(());
    };
    let per_second = per_request;
    if time_driven {
        verdict.kind = VerdictKind::TimeGrowth;
        verdict.fails_gate = true;
        verdict.summary = format!(
            "after-GC heapUsed grows about {} per second with or without requests ({} per second \
             under load, {} in {:.0} s without any): something on a timer keeps data",
            per_second(idle_rate.max(loaded_rate)),
            per_second(loaded_rate),
            per_request(grown),
            seconds
        );
        verdict.action = "Something on a timer keeps data (an interval that appends, a retry \
                          queue, a cache refreshed without dropping the old one): run \
                          `leakcheck soak` to project it to the heap limit, and bound what the \
                          timer feeds."
            .into();
        verdict.figure.metric = Series::HEAP_USED;
    } else {
        let meaning = if verdict.kind.is_leak() {
            "the growth follows the work, not the clock"
        } else {
            "nothing grows with time either"
        };
        verdict.findings.push(Finding::new(
            FindingKind::TimeTrend,
            format!(
                "an idle interval of {seconds:.0} s without load changed after-GC heapUsed by {} \
                 ({} per second, against {} per second under load): {meaning}",
                per_request(grown),
                per_second(idle_rate),
                per_second(loaded_rate)
            ),
        ));
    }
    Ok(())
}

/// A clean verdict says how slow a growth with time its cycles could have
/// missed: a run of a few seconds cannot see a timer keeping 8 KB a
/// second, and a clean verdict must not read as if it had.
fn say_what_time_bounds(into: &mut RouteResult) {
    let Some(points) = timed_heap(&into.cycles) else {
        return;
    };
    let Some(fit) = fit_over_time(&Series::HEAP_USED, &points, noise_floor(&Series::HEAP_USED))
    else {
        return;
    };
    let Some(verdict) = into.verdict.as_mut().filter(|v| !v.kind.is_leak()) else {
        return;
    };
    let bound = fit.upper_per_hour.max(fit.floor_per_hour);
    verdict.findings.push(Finding::new(
        FindingKind::TimeTrend,
        format!(
            "these cycles span {:.0} s: growth with time (a timer, not requests) under about {} \
             per hour is not ruled out; `leakcheck soak` measures it over minutes",
            fit.span_s,
            crate::units::mb(bound)
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Sample, Verdict};

    fn route(kind: VerdictKind, heap: &[f64]) -> RouteResult {
        let mut cycles = Vec::new();
        for (i, mb) in heap.iter().enumerate() {
            let after_gc = Sample {
                heap_used: (mb * 1048576.0) as u64,
                ..Sample::default()
            };
            let mut cycle =
                crate::verdict::test_cycles::cycle(i as u32 + 1, 1000, after_gc.clone(), after_gc);
            cycle.read_at_s = Some(1.2 * (i + 1) as f64);
            cycles.push(cycle);
        }
        RouteResult {
            cycles,
            verdict: Some(Verdict {
                kind,
                fails_gate: false,
                summary: String::new(),
                action: String::new(),
                findings: Vec::new(),
                fits: Vec::new(),
                figure: crate::model::Figure {
                    metric: Series::HEAP_USED,
                    bytes_per_request: 0.0,
                },
            }),
            ..RouteResult::default()
        }
    }

    #[test]
    fn a_heap_rising_with_time_asks_and_a_flat_one_does_not() {
        let rising = route(
            VerdictKind::NoRetention,
            &[4.40, 4.44, 4.48, 4.52, 4.56, 4.61, 4.64, 4.68, 4.72, 4.76],
        );
        let rate = asks(&rising).expect("a steady rise asks for the idle interval");
        assert!((25_000.0..45_000.0).contains(&rate), "{rate}");
        // The same slope over too few seconds to move the heap by two
        // noise floors is a clean process warming up: no idle interval.
        let creep = route(
            VerdictKind::NoRetention,
            &[4.40, 4.41, 4.42, 4.43, 4.45, 4.45, 4.47, 4.48, 4.49, 4.50],
        );
        assert!(asks(&creep).is_none());
        let flat = route(
            VerdictKind::NoRetention,
            &[4.40, 4.43, 4.39, 4.41, 4.42, 4.40, 4.38, 4.41, 4.40, 4.42],
        );
        assert!(asks(&flat).is_none());
        // Retention asks whatever the interval: a timer grows it too.
        let leak = route(VerdictKind::Retention, &[4.4, 5.4, 6.4, 7.4, 8.4]);
        assert!(asks(&leak).is_some());
    }
}
