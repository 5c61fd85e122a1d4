//! `watch`'s verdict: a live process's readings, taken at its own major
//! collections, judged on their trend with time (the soak's Theil–Sen fit,
//! `time_trend.rs`), since no work of leakcheck's can be counted.
//!
//! - a memory series that grows is `retention` (heapUsed) or
//!   `off-heap-retention` (external, arrayBuffers), per served request
//!   where the target's count of requests is readable, with the projection
//!   to the tightest limit in force;
//! - a handle count that grows is `counter-growth`;
//! - a flat heapUsed is `no-retention`;
//! - anything else is `inconclusive`, with how long to keep watching.
//!
//! Each series is judged against its own readings' spread about the trend
//! (`residual_spread`), never less than a settled reading's floor: the
//! growth over the watch must clear three such spreads.

use std::time::Duration;

use super::Noise;
use super::over_time::describe;
use super::time_trend::fit_against_spread;
use crate::model::{
    CycleResult, Figure, Finding, FindingKind, Limits, Series, TimeDecision, TimeFit, Verdict,
    VerdictKind,
};
use crate::units::{MB, human_duration, per_request};

/// Readings a decision needs after the first (left out: a launched target
/// warms up, and an attached one loses nothing by it). Fewer than six
/// natural readings of a busy heap leave the interval too wide to trust
/// either way, and `--until-decided` looks again after every reading.
/// Growth far above the floor is decided sooner (`early_margin`); a flat
/// heap never is: calling a heap flat early is the false all-clear.
pub const MIN_DECIDING_READINGS: usize = 6;

/// The sequential rule for growth: with `fitted` readings (after the
/// first), by how many floors the interval's lower end must clear the
/// floor for `grows` to decide. Six or more: once, the fixed design.
/// Fewer (down to `time_trend::MIN_READINGS`, four), the margin doubles
/// per reading missing: 2× at five, 4× at four.
///
/// Derivation. At four or five readings the Theil–Sen interval's lower
/// end is the smallest (n = 4) or second smallest (n = 5) of the pairwise
/// slopes, so every neighbouring pair must rise. The floor is three
/// spreads of a reading over the span fitted (`RETENTION_SIGMAS`), so at
/// 4× four readings a third of the span apart must each rise by at least
/// four spreads: one reading of a flat heap exceeds the one before by that
/// much with probability Φ(−4/√2) ≈ 0.2 % if their scatter is normal, all
/// three neighbouring steps at once about 10⁻⁸. At 2× and five readings
/// each of four steps must rise 1.5 spreads (a flat heap: Φ(−1.5/√2) ≈
/// 14 % each, under 0.1 % for all four). Each early look is thus far
/// stricter than the fixed design's 95 % interval, as an O'Brien–Fleming
/// boundary spends little of its error on early looks (O'Brien & Fleming
/// 1979, Biometrics 35), while a heap growing gigabytes an hour clears it
/// at once.
pub fn early_margin(fitted: usize) -> Option<f64> {
    match fitted {
        n if n >= MIN_DECIDING_READINGS => Some(1.0),
        n if n >= super::time_trend::MIN_READINGS => {
            Some(2f64.powi((MIN_DECIDING_READINGS - n) as i32))
        }
        _ => None,
    }
}

/// Whether `fit` over `fitted` readings decides growth under the
/// sequential rule.
pub fn grows_decided(fit: &TimeFit, fitted: usize) -> bool {
    fit.decision == TimeDecision::Grows
        && early_margin(fitted)
            .is_some_and(|margin| fit.lower_per_hour > margin * fit.floor_per_hour)
}

const HOUR_S: f64 = 3600.0;

/// The memory series judged, in the order they make a verdict.
const MEMORY: [Series; 3] = [Series::HEAP_USED, Series::EXTERNAL, Series::ARRAY_BUFFERS];

/// The verdict on the readings so far, and every series' fit.
pub struct Judged {
    pub verdict: Verdict,
    pub fits: Vec<TimeFit>,
}

/// Judges `readings` (one cycle per reading, `read_at_s` set). `served_per_s`:
/// the target's requests a second over the watch, when counted;
/// `force_gc_every`: the `--force-gc-every` in force, which the advice on
/// too few readings does not offer again.
pub fn judge(
    readings: &[CycleResult],
    served_per_s: Option<f64>,
    force_gc_every: Option<Duration>,
) -> Judged {
    let fits = fits(readings);
    let fit_of = |series: &Series| fits.iter().find(|f| &f.series == series);
    let fitted = readings.len().saturating_sub(1);
    let grows = |series: &Series| fit_of(series).filter(|f| grows_decided(f, fitted));
    let early = MEMORY.iter().find_map(grows);
    let mut verdict = Verdict::default();
    if fitted < MIN_DECIDING_READINGS && early.is_none() {
        verdict.summary = format!(
            "{} reading{} after major collections so far; growth far above the floor is \
             decided from {}, a flat heap needs {}",
            readings.len(),
            if readings.len() == 1 { "" } else { "s" },
            super::time_trend::MIN_READINGS + 1,
            MIN_DECIDING_READINGS + 1
        );
        verdict.action = too_few_action(readings, force_gc_every);
        if let Some(fit) = fit_of(&Series::HEAP_USED).filter(|f| f.decision == TimeDecision::Grows)
        {
            verdict.summary.push_str(&format!(
                "; heapUsed grows {:.1} MB/h (95 %: {:.1} to {:.1}), above its floor of {:.1} \
                 MB/h, but not yet by the margin {} readings need",
                fit.per_hour / MB,
                fit.lower_per_hour / MB,
                fit.upper_per_hour / MB,
                fit.floor_per_hour / MB,
                readings.len()
            ));
        }
    } else if let Some(fit) = early {
        verdict.kind = match fit.series == Series::HEAP_USED {
            true => VerdictKind::Retention,
            false => VerdictKind::OffHeapRetention,
        };
        verdict.summary = format!("{}{}", describe(fit), per_request_text(fit, served_per_s));
        verdict.action = "Something keeps memory as the process serves its real traffic: the \
                          allocation sites below grew between the first and the last third of \
                          the watch. Reproduce it with `leakcheck run` on the route they serve \
                          to name the holder, or take a snapshot here with --snapshot."
            .into();
        verdict.figure = figure(fit, served_per_s);
    } else if let Some(fit) = fits
        .iter()
        .find(|f| f.series.is_resource() && f.decision == TimeDecision::Grows)
    {
        verdict.kind = VerdictKind::CounterGrowth;
        verdict.summary = format!("{}: the count rises over time", describe(fit));
        verdict.action = "Still a leak: each keeps little memory, but the process runs out of \
                          descriptors or spends its event loop on them first. Close or clear \
                          them when they are done."
            .into();
        verdict.figure = figure(fit, served_per_s);
    } else {
        match fit_of(&Series::HEAP_USED) {
            Some(fit) if fit.decision == TimeDecision::Flat => {
                verdict.kind = VerdictKind::NoRetention;
                verdict.summary = describe(fit);
                verdict.action =
                    "Nothing to do: the live heap holds steady under this traffic.".into();
            }
            Some(fit) => {
                verdict.summary = format!(
                    "{}: the watch cannot tell that from the floor yet",
                    describe(fit)
                );
                verdict.action = keep_watching(fit);
            }
            None => verdict.action = too_few_action(readings, force_gc_every),
        }
    }
    verdict.fails_gate = verdict.kind.is_leak();
    if let Some(fit) = fit_of(&Series::HEAP_USED) {
        verdict
            .findings
            .push(Finding::new(FindingKind::TimeTrend, describe(fit)));
    }
    Judged { verdict, fits }
}

/// Every series fitted against time after the first reading, each against
/// the larger of its settled floor and its own spread.
pub fn fits(readings: &[CycleResult]) -> Vec<TimeFit> {
    MEMORY
        .into_iter()
        .chain([Series::RSS])
        .chain(super::over_time::resource_series(readings))
        .filter_map(|series| {
            let points: Vec<(f64, f64)> = readings
                .iter()
                .skip(1)
                .map(|c| Some((c.read_at_s?, c.after_gc.value(&series).unwrap_or(0.0))))
                .collect::<Option<_>>()?;
            fit_against_spread(&series, &points, Noise::Process.floor(&series))
        })
        .collect()
}

fn figure(fit: &TimeFit, served_per_s: Option<f64>) -> Figure {
    Figure {
        metric: fit.series.clone(),
        bytes_per_request: served_per_s
            .filter(|rate| *rate > 0.0)
            .map_or(0.0, |rate| fit.per_hour / HOUR_S / rate),
    }
}

fn per_request_text(fit: &TimeFit, served_per_s: Option<f64>) -> String {
    match served_per_s.filter(|rate| *rate > 0.0) {
        Some(rate) => format!(
            "; at the {rate:.0} requests/s it served, about {} per request",
            per_request(fit.per_hour / HOUR_S / rate)
        ),
        None => String::new(),
    }
}

/// How long more an undecided trend needs.
fn keep_watching(fit: &TimeFit) -> String {
    match fit.decided_by_s {
        Some(span) if span > fit.span_s => format!(
            "Keep watching about {} more under the same traffic (-d {:.0}s in all, or \
             --until-decided): the interval then no longer straddles the floor.",
            human_duration(span - fit.span_s),
            (span / 5.0).ceil() * 5.0
        ),
        _ => "Keep watching several times longer (-d, or --until-decided): the readings so far \
              are too few or too scattered to say how long would decide."
            .into(),
    }
}

/// What to do when too few major collections came: wait for more at the
/// pace they come, or force some (or force them more often).
fn too_few_action(readings: &[CycleResult], force_gc_every: Option<Duration>) -> String {
    let pace = match readings {
        [first, .., last] => match (first.read_at_s, last.read_at_s) {
            (Some(a), Some(b)) if b > a => Some((b - a) / (readings.len() - 1) as f64),
            _ => None,
        },
        _ => None,
    };
    let needed = MIN_DECIDING_READINGS + 1 - readings.len().min(MIN_DECIDING_READINGS);
    let forcing = match force_gc_every {
        None => "--force-gc-every 30s adds readings (each a pause; --max-pause bounds it)".into(),
        Some(every) => format!(
            "--force-gc-every {} is in force: a shorter interval adds readings sooner (each a \
             pause; none is forced once one pauses longer than --max-pause)",
            human_duration(every.as_secs_f64())
        ),
    };
    match pace {
        Some(seconds) => format!(
            "A reading comes about every {} (the target's own major collections, and any \
             forced): keep watching at least {} more; if its own collections are rare, {forcing}.",
            human_duration(seconds),
            human_duration(seconds * needed as f64)
        ),
        None => format!(
            "The target has run too few major collections of its own so far (a small or quiet \
             heap): keep watching longer; {forcing}."
        ),
    }
}

/// When the growth reaches the tightest limit in force.
#[derive(Debug, Clone, PartialEq)]
pub struct Reach {
    pub limit: &'static str,
    pub limit_bytes: u64,
    pub hours: f64,
}

/// The projection of a growing fit from the last reading: V8's heap
/// limit against heapUsed, the cgroup's or the stated limit against rss
/// (growing at least as the heap does). `None` when nothing grows or no
/// limit is known.
pub fn reach(fits: &[TimeFit], last: &CycleResult, limits: &Limits) -> Option<Reach> {
    let growing = |series: &Series| {
        fits.iter()
            .find(|f| &f.series == series && f.decision == TimeDecision::Grows)
            .map(|f| f.per_hour)
    };
    let heap = growing(&Series::HEAP_USED);
    let memory = MEMORY
        .iter()
        .filter_map(growing)
        .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
    let rss_growth = growing(&Series::RSS)
        .into_iter()
        .chain(memory)
        .reduce(f64::max);
    let hours_to = |limit: u64, now: u64, per_hour: f64| {
        (per_hour > 0.0).then(|| limit.saturating_sub(now) as f64 / per_hour)
    };
    let by_heap = limits.heap_bytes.zip(heap).and_then(|(limit, per_hour)| {
        Some(Reach {
            limit: "V8's heap limit",
            limit_bytes: limit,
            hours: hours_to(limit, last.after_gc.heap_used, per_hour)?,
        })
    });
    let by_rss = limits
        .rss_limit()
        .zip(rss_growth)
        .and_then(|((limit, name), per_hour)| {
            Some(Reach {
                limit: name,
                limit_bytes: limit,
                hours: hours_to(limit, last.after_gc.rss, per_hour)?,
            })
        });
    [by_heap, by_rss]
        .into_iter()
        .flatten()
        .min_by(|a, b| a.hours.total_cmp(&b.hours))
}

/// "at this rate it reaches the 4.0 GB limit (V8's heap limit) in about 19.2 h
/// (around 2026-12-07 04:10 UTC)"; `now_unix_s` is when the watch read last.
pub fn reach_text(reach: &Reach, now_unix_s: f64) -> String {
    let at = now_unix_s + reach.hours * HOUR_S;
    format!(
        "at this rate it reaches the {:.1} GB limit ({}) in about {} (around {})",
        reach.limit_bytes as f64 / (1024.0 * MB),
        reach.limit,
        human_duration(reach.hours * HOUR_S),
        crate::units::clock_time(at)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Sample;
    use crate::verdict::test_cycles::cycle;

    /// Readings every 5 s, heapUsed in MB.
    fn readings(heap_mb: &[f64]) -> Vec<CycleResult> {
        heap_mb
            .iter()
            .enumerate()
            .map(|(i, mb)| {
                let sample = Sample {
                    heap_used: (mb * MB) as u64,
                    rss: (60.0 * MB) as u64,
                    ..Sample::default()
                };
                let mut c = cycle(i as u32 + 1, 0, sample.clone(), sample);
                c.read_at_s = Some(5.0 * i as f64);
                c
            })
            .collect()
    }

    /// Measured on tests/targets/watch-server.mjs at 200 requests/s, 90 s.
    const LEAK: [f64; 15] = [
        8.60, 9.88, 12.06, 12.77, 11.56, 12.53, 13.79, 13.06, 13.64, 14.45, 13.23, 14.43, 15.25,
        16.01, 16.28,
    ];
    const TWIN: [f64; 16] = [
        9.28, 11.24, 11.26, 9.86, 10.88, 9.75, 10.53, 11.28, 10.26, 10.24, 8.30, 9.44, 8.84, 10.37,
        9.54, 9.68,
    ];

    #[test]
    fn a_live_leak_grows_and_its_twin_is_flat() {
        let leak = judge(&readings(&LEAK), Some(200.0), None);
        assert_eq!(
            leak.verdict.kind,
            VerdictKind::Retention,
            "{}",
            leak.verdict.summary
        );
        assert!(
            leak.verdict.summary.contains("per request"),
            "{}",
            leak.verdict.summary
        );
        assert!(leak.verdict.figure.bytes_per_request > 100.0);
        let twin = judge(&readings(&TWIN), Some(200.0), None);
        assert_eq!(
            twin.verdict.kind,
            VerdictKind::NoRetention,
            "{}",
            twin.verdict.summary
        );
        assert!(!twin.verdict.fails_gate);
    }

    #[test]
    fn too_few_readings_say_how_long_to_wait_or_what_to_force() {
        let judged = judge(&readings(&LEAK[..4]), None, None);
        assert_eq!(judged.verdict.kind, VerdictKind::Inconclusive);
        assert!(
            judged.verdict.action.contains("every 5 s"),
            "{}",
            judged.verdict.action
        );
        assert!(judged.verdict.action.contains("--force-gc-every 30s adds"));
        // Already forcing: not offered again, a shorter interval instead.
        let forcing = Some(Duration::from_secs(60));
        let judged = judge(&readings(&LEAK[..4]), None, forcing);
        let action = &judged.verdict.action;
        assert!(
            action.contains("--force-gc-every 60 s is in force"),
            "{action}"
        );
        assert!(!action.contains("30s"), "{action}");
    }

    #[test]
    fn steep_growth_is_decided_on_five_readings_and_a_flat_heap_never_early() {
        // Issue 60's server, 7.7 → 274.7 MB at 4.5 MB/s, read at its own
        // collections as they grew rarer: decided on its fifth reading.
        let mut steep = readings(&[7.7, 22.7, 80.4, 237.5, 274.7]);
        for (cycle, at) in steep.iter_mut().zip([0.0, 3.3, 16.0, 51.0, 59.0]) {
            cycle.read_at_s = Some(at);
        }
        let steep = judge(&steep, None, None);
        assert_eq!(
            steep.verdict.kind,
            VerdictKind::Retention,
            "{}",
            steep.verdict.summary
        );
        // The same few readings of a flat heap: never called flat early.
        let flat = judge(&readings(&TWIN[..5]), None, None);
        assert_eq!(
            flat.verdict.kind,
            VerdictKind::Inconclusive,
            "{}",
            flat.verdict.summary
        );
        // Growth above the floor but not by the early margin waits.
        let slow = judge(&readings(&[10.0, 10.4, 11.1, 10.9, 11.6]), None, None);
        assert_eq!(
            slow.verdict.kind,
            VerdictKind::Inconclusive,
            "{}",
            slow.verdict.summary
        );
    }

    #[test]
    fn the_early_margin_halves_with_each_reading_up_to_the_fixed_design() {
        assert_eq!(early_margin(3), None);
        assert_eq!(early_margin(4), Some(4.0));
        assert_eq!(early_margin(5), Some(2.0));
        assert_eq!(early_margin(6), Some(1.0));
        assert_eq!(early_margin(40), Some(1.0));
    }

    #[test]
    fn the_tightest_limit_is_the_one_reached_first() {
        let cycles = readings(&LEAK);
        let judged = judge(&cycles, None, None);
        let last = cycles.last().unwrap();
        let heap_only = Limits {
            heap_bytes: Some(4 << 30),
            ..Limits::default()
        };
        let by_heap = reach(&judged.fits, last, &heap_only).unwrap();
        assert_eq!(by_heap.limit, "V8's heap limit");
        let contained = Limits {
            cgroup_bytes: Some(512 << 20),
            ..heap_only
        };
        let by_rss = reach(&judged.fits, last, &contained).unwrap();
        assert_eq!(by_rss.limit, "the cgroup's memory.max");
        assert!(by_rss.hours < by_heap.hours);
        assert!(reach_text(&by_rss, 0.0).contains("0.5 GB limit (the cgroup's memory.max)"));
        let flat = judge(&readings(&TWIN), None, None);
        assert!(reach(&flat.fits, last, &contained).is_none());
    }
}
