//! A soak's verdict decided on the trend with time (`time_trend.rs`), not
//! only on the steps between readings: a heap rising 31 MB an hour rises
//! 80–126 KB per 10 s interval, under the 0.1 MB step noise, so no single
//! step counts while the trend over the readings is unmistakable.
//!
//! - a memory series that grows with time makes the route `retention`
//!   (`off-heap-retention` for external or arrayBuffers) when the per-step
//!   rule did not, and the projection uses its growth per hour;
//! - a handle or listener count that grows makes it `counter-growth`;
//! - a clean per-step verdict whose heapUsed trend the soak cannot decide
//!   becomes `inconclusive`, with the soak length that would decide;
//! - a flat trend leaves the verdict as the per-step rule gave it.

use super::Noise;
use super::time_trend::fit_over_time;
use crate::model::{
    CycleResult, Finding, FindingKind, Resource, RouteResult, Series, TimeDecision, TimeFit,
    VerdictKind,
};
use crate::units::MB;

/// The memory series judged over time, in the order they make a verdict.
const MEMORY: [Series; 3] = [Series::HEAP_USED, Series::EXTERNAL, Series::ARRAY_BUFFERS];

/// Fits every after-GC series of a soak against time, leaving out the
/// baseline and the first interval (warm-up, as the per-step rule does).
pub fn time_fits(cycles: &[CycleResult], noise: Noise) -> Vec<TimeFit> {
    // When each settled reading was taken; results written before the
    // readings carried their time fall back to the loads' durations.
    let mut elapsed = 0.0;
    let times: Vec<f64> = cycles
        .iter()
        .map(|c| {
            elapsed += c.duration_s;
            c.read_at_s.unwrap_or(elapsed)
        })
        .collect();
    let settled = || cycles.iter().zip(&times).skip(1);
    MEMORY
        .into_iter()
        .chain(resource_series(cycles))
        .filter_map(|series| {
            let points: Vec<(f64, f64)> = settled()
                .map(|(c, t)| Some((*t, c.after_gc.value(&series)?)))
                .collect::<Option<_>>()?;
            fit_over_time(&series, &points, noise.floor(&series))
        })
        .collect()
}

/// Every handle and listener series any after-GC reading has, in name order.
pub fn resource_series(cycles: &[CycleResult]) -> Vec<Series> {
    let names: std::collections::BTreeSet<&String> = cycles
        .iter()
        .flat_map(|c| c.after_gc.resources.keys())
        .collect();
    names
        .into_iter()
        .filter_map(|name| Resource::parse(name))
        .map(Series::Resource)
        .collect()
}

/// Applies the time fits to a soak route's verdict and projection.
pub fn apply(route: &mut RouteResult, noise: Noise, unit: &str) {
    if route.verdict.is_none() {
        return;
    }
    let fits = time_fits(&route.cycles, noise);
    let verdict = route.verdict.as_mut().expect("checked above");
    let grows = |series: &Series| {
        fits.iter()
            .find(|f| &f.series == series && f.decision == TimeDecision::Grows)
    };
    if !verdict.kind.is_leak() {
        if let Some(fit) = MEMORY.iter().find_map(grows) {
            verdict.kind = if fit.series == Series::HEAP_USED {
                VerdictKind::Retention
            } else {
                VerdictKind::OffHeapRetention
            };
            verdict.fails_gate = true;
            verdict.summary = format!(
                "{}: retention over time, though no {unit} interval's step stood out of the noise",
                describe(fit)
            );
            verdict.action = "Something keeps data as time passes (an interval, a retry queue, \
                              a cache refreshed on a timer): take two heap snapshots a few \
                              minutes apart and read what grew."
                .into();
            verdict.figure.metric = fit.series.clone();
        } else if let Some(fit) = fits
            .iter()
            .find(|f| f.series.is_resource() && f.decision == TimeDecision::Grows)
        {
            verdict.kind = VerdictKind::CounterGrowth;
            verdict.fails_gate = true;
            verdict.summary = format!("{}: the count rises over time", describe(fit));
            verdict.action = "Still a leak: each keeps little memory, but the process runs out \
                              of descriptors or spends its event loop on them first. Close or \
                              clear them when they are done."
                .into();
            verdict.figure.metric = fit.series.clone();
        } else if let Some(fit) = fits
            .iter()
            .find(|f| f.series == Series::HEAP_USED && f.decision == TimeDecision::Undecided)
        {
            verdict.kind = VerdictKind::Inconclusive;
            verdict.fails_gate = false;
            verdict.summary = format!(
                "{}: the soak cannot tell that from the floor yet",
                describe(fit)
            );
            verdict.action = match advised_duration(&route.cycles, fit) {
                Some(seconds) => format!(
                    "Soak about {} (-d {seconds}s) at the same pace: the interval then no \
                     longer straddles the floor.",
                    crate::units::human_duration(f64::from(seconds)),
                ),
                None => {
                    "Soak several times longer (-d): the readings so far are too few or too noisy \
                         to say how long would decide."
                        .into()
                }
            };
            verdict.figure.metric = Series::HEAP_USED;
        }
    }
    if let Some(fit) = fits.iter().find(|f| f.series == Series::HEAP_USED) {
        verdict
            .findings
            .push(Finding::new(FindingKind::TimeTrend, describe(fit)));
    }
    if let Some(soak) = route.soak.as_mut() {
        soak.time_fits = fits;
    }
    if let Some(soak) = &route.soak {
        let projection =
            super::projection::project(route, soak.elapsed_s, soak.requests, soak.heap_size_limit);
        let soak = route.soak.as_mut().expect("checked above");
        soak.growth_bytes_per_hour = projection.growth_bytes_per_hour;
        soak.hours_to_limit = projection.hours_to_limit;
        soak.projection = projection.text;
    }
}

/// "after-GC heapUsed grows 33.0 MB/h (95 %: 24.4 to 46.7) over 50 s of
/// readings, against a floor of 21.6 MB/h"
pub fn describe(fit: &TimeFit) -> String {
    let (scale, unit) = match fit.series {
        Series::Resource(_) => (1.0, ""),
        _ => (MB, " MB"),
    };
    let number = |v: f64| format!("{:.1}", v / scale);
    let value = |v: f64| format!("{}{unit}", number(v));
    let verb = match fit.decision {
        TimeDecision::Grows => "grows",
        TimeDecision::Flat => "is flat at",
        TimeDecision::Undecided => "rises",
    };
    format!(
        "after-GC {} {verb} {}/h (95 %: {} to {}/h) over {:.0} s of {} readings, against a floor \
         of {}/h",
        fit.series,
        value(fit.per_hour),
        number(fit.lower_per_hour),
        value(fit.upper_per_hour),
        fit.span_s,
        fit.readings,
        value(fit.floor_per_hour)
    )
}

/// The `-d` that gives an undecided fit the span of readings it needs
/// (`decided_by_s`): the readings that span takes at today's pace, one
/// interval more for the first (warm-up, not fitted), each interval as
/// long as today's load was, rounded up to 5 s.
fn advised_duration(cycles: &[CycleResult], fit: &TimeFit) -> Option<u32> {
    let wanted_span = fit.decided_by_s?;
    if fit.readings < 2 || fit.span_s <= 0.0 {
        return None;
    }
    let seconds_per_reading = fit.span_s / f64::from(fit.readings - 1);
    let readings = (wanted_span / seconds_per_reading).ceil() + 1.0;
    let mut loads: Vec<f64> = cycles.iter().map(|c| c.duration_s).collect();
    loads.sort_by(f64::total_cmp);
    let every = *loads.get(loads.len() / 2)?;
    let seconds = (readings + 1.0) * every;
    Some(((seconds / 5.0).ceil() * 5.0) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Sample, SoakResult, Verdict};
    use crate::verdict::test_cycles::cycle;

    /// A soak of `timers` counts at 5 s intervals with a flat heap.
    fn soak_of(timers: &[f64]) -> RouteResult {
        let cycles = timers
            .iter()
            .enumerate()
            .map(|(i, count)| {
                let mut after_gc = Sample {
                    heap_used: 4 << 20,
                    ..Sample::default()
                };
                after_gc
                    .resources
                    .insert("active_resources.Timeout".into(), *count);
                let mut c = cycle(i as u32 + 1, 2500, after_gc.clone(), after_gc);
                c.read_at_s = Some(5.0 * (i + 1) as f64);
                c
            })
            .collect();
        RouteResult {
            cycles,
            verdict: Some(Verdict {
                kind: VerdictKind::NoRetention,
                ..Verdict::default()
            }),
            soak: Some(SoakResult {
                elapsed_s: 60.0,
                requests: 30_000,
                growth_bytes_per_hour: 0.0,
                heap_size_limit: Some(4 << 30),
                hours_to_limit: None,
                projection: String::new(),
                load: Default::default(),
                time_fits: Vec::new(),
            }),
            ..RouteResult::default()
        }
    }

    #[test]
    fn a_timer_count_rising_by_the_hour_is_counter_growth() {
        // Two more timers every 5 s: 1 440 an hour against a floor of 864.
        let timers: Vec<f64> = (0..12).map(|i| 10.0 + 2.0 * i as f64).collect();
        let mut route = soak_of(&timers);
        apply(&mut route, Noise::Process, "request");
        let verdict = route.verdict.as_ref().unwrap();
        assert_eq!(verdict.kind, VerdictKind::CounterGrowth, "{verdict:#?}");
        assert!(
            verdict.summary.contains("active_resources.Timeout"),
            "{}",
            verdict.summary
        );
        let fits = &route.soak.as_ref().unwrap().time_fits;
        let heap = fits.iter().find(|f| f.series == Series::HEAP_USED).unwrap();
        assert_eq!(heap.decision, TimeDecision::Flat);
    }

    #[test]
    fn the_advised_length_counts_the_readings_it_needs_and_the_skipped_first() {
        let mut route = soak_of(&[12.0; 12]);
        for c in &mut route.cycles {
            c.duration_s = 5.0;
        }
        let fit = |readings: u32, span_s: f64, decided_by_s: f64| TimeFit {
            series: Series::HEAP_USED,
            per_hour: 0.0,
            lower_per_hour: 0.0,
            upper_per_hour: 0.0,
            floor_per_hour: 0.0,
            readings,
            span_s,
            decision: TimeDecision::Undecided,
            decided_by_s: Some(decided_by_s),
        };
        // 120 s of readings 5 s apart: 25 readings, one interval before.
        assert_eq!(
            advised_duration(&route.cycles, &fit(11, 50.0, 120.0)),
            Some(130)
        );
        let every_30 = |c: &mut CycleResult| c.duration_s = 30.0;
        route.cycles.iter_mut().for_each(every_30);
        // 200 s of readings 30 s apart: 8 readings, one interval before.
        assert_eq!(
            advised_duration(&route.cycles, &fit(4, 90.0, 200.0)),
            Some(270)
        );
    }

    #[test]
    fn a_steady_count_leaves_the_verdict_alone() {
        let mut route = soak_of(&[12.0; 12]);
        apply(&mut route, Noise::Process, "request");
        let verdict = route.verdict.as_ref().unwrap();
        assert_eq!(verdict.kind, VerdictKind::NoRetention);
        assert!(verdict.has_finding(FindingKind::TimeTrend));
        assert!(route.soak.unwrap().projection.starts_with("no growth"));
    }
}
