//! Judging the target's other isolates (worker threads, child Node
//! processes) and folding them into the route's verdict.
//!
//! Each isolate's after-GC series is judged by `judge`, the same rules as
//! the main heap, on a copy of the route's cycles whose readings are that
//! isolate's. The route's verdict then says where the growth is: a worker
//! whose heap grows while the main heap is flat is retention in the worker,
//! not off-heap retention of the process (which is how its rss looks from
//! outside), and the diagnosis goes to that isolate.

use super::classify::{Options, judge};
use crate::model::{
    CycleResult, Figure, Finding, FindingKind, IsolateResult, IsolateSample, RouteResult, Sample,
    Series, Trend, Verdict, VerdictKind,
};
use crate::units::per_request;

/// Judges every isolate present in the baseline and in every cycle's
/// settled reading (one that appeared or vanished mid-route has no series
/// to fit).
pub fn judge_isolates(
    baseline: &Sample,
    cycles: &[CycleResult],
    options: Options,
) -> Vec<IsolateResult> {
    let mut results = Vec::new();
    let with_sum = |sample: &Sample| {
        let mut sample = sample.clone();
        sample.isolates.extend(processes_summed(&sample.isolates));
        sample
    };
    let baseline = &with_sum(baseline);
    let cycles: &[CycleResult] = &cycles
        .iter()
        .map(|c| CycleResult {
            after_gc: with_sum(&c.after_gc),
            after_load: with_sum(&c.after_load),
            ..c.clone()
        })
        .collect::<Vec<_>>();
    for first in &baseline.isolates {
        let find = |sample: &Sample| -> Option<IsolateSample> {
            sample.isolates.iter().find(|i| i.id == first.id).cloned()
        };
        let Some(readings) = cycles
            .iter()
            .map(|c| find(&c.after_gc))
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        let own_cycles: Vec<CycleResult> = cycles
            .iter()
            .zip(&readings)
            .map(|(cycle, reading)| CycleResult {
                after_gc: reading.as_sample(),
                after_load: find(&cycle.after_load).map_or_else(Sample::default, |i| i.as_sample()),
                ..cycle.clone()
            })
            .collect();
        let own_options = Options {
            fixed_request: false,
            ..options
        };
        let Some((verdict, retained)) = judge(&first.as_sample(), &own_cycles, own_options) else {
            continue;
        };
        let latest = readings.last().unwrap_or(first);
        results.push(IsolateResult {
            id: first.id.clone(),
            kind: first.kind,
            pid: latest.pid,
            script: latest.script.clone(),
            after_gc_heap_used: std::iter::once(first.heap_used)
                .chain(readings.iter().map(|r| r.heap_used))
                .collect(),
            retained_bytes_per_request: retained,
            verdict,
        });
    }
    results
}

/// The id of the series that sums the child processes' heaps.
pub const PROCESSES_SUM: &str = "child processes (sum)";

/// The child processes' heaps summed, as one more series: a cluster's
/// load is spread over its workers, so each grows by a share that may sit
/// in its noise while their sum does not. `None` with fewer than two.
fn processes_summed(isolates: &[IsolateSample]) -> Option<IsolateSample> {
    let processes: Vec<&IsolateSample> = isolates
        .iter()
        .filter(|i| i.kind == crate::model::IsolateKind::Process)
        .collect();
    if processes.len() < 2 {
        return None;
    }
    let sum = |f: fn(&IsolateSample) -> u64| processes.iter().map(|i| f(i)).sum();
    Some(IsolateSample {
        id: PROCESSES_SUM.to_string(),
        kind: crate::model::IsolateKind::Process,
        pid: 0,
        script: String::new(),
        heap_used: sum(|i| i.heap_used),
        heap_total: sum(|i| i.heap_total),
        external: sum(|i| i.external),
        array_buffers: sum(|i| i.array_buffers),
        rss: sum(|i| i.rss),
    })
}

/// The isolates whose own verdict is retention, largest figure first
/// (the processes' sum is not one of them).
pub fn retaining(isolates: &[IsolateResult]) -> Vec<&IsolateResult> {
    let mut growing: Vec<&IsolateResult> = isolates
        .iter()
        .filter(|i| i.id != PROCESSES_SUM)
        .filter(|i| is_retention(i))
        .collect();
    growing.sort_by(|a, b| by_figure(b, a));
    growing
}

/// The isolate whose heap makes a route's retention, for the diagnosis:
/// `None` (the main one) when its own heapUsed grows; else the worker or
/// child that retains most, or, when only the child processes' sum
/// grows, the process whose share is largest.
pub fn to_diagnose(route: &RouteResult) -> Option<&IsolateResult> {
    let main_grows = route.verdict.as_ref().is_some_and(|v| {
        v.fits
            .iter()
            .any(|f| f.metric == Series::HEAP_USED && f.trend == Trend::Growing)
    });
    if main_grows {
        return None;
    }
    retaining(&route.isolates).first().copied().or_else(|| {
        route
            .isolates
            .iter()
            .filter(|i| i.id != PROCESSES_SUM)
            .max_by(|a, b| by_figure(a, b))
    })
}

/// Orders isolates by the bytes per request their verdict reports.
fn by_figure(a: &IsolateResult, b: &IsolateResult) -> std::cmp::Ordering {
    a.verdict
        .figure
        .bytes_per_request
        .total_cmp(&b.verdict.figure.bytes_per_request)
}

fn is_retention(isolate: &IsolateResult) -> bool {
    matches!(
        isolate.verdict.kind,
        VerdictKind::Retention | VerdictKind::OffHeapRetention
    )
}

/// Says in the route's verdict which isolates grow. When the main heap
/// does not (its row is anything but retention), the growing isolates make
/// the row: retention, with their sum as the figure and each named.
pub fn fold_into(verdict: &mut Verdict, isolates: &[IsolateResult], unit: &str) {
    let summed = isolates
        .iter()
        .find(|i| i.id == PROCESSES_SUM && is_retention(i));
    let mut growing = retaining(isolates);
    if let Some(sum) = summed {
        // Every process is named with its own figure, growing or not.
        growing = isolates
            .iter()
            .filter(|i| i.kind == sum.kind && i.id != PROCESSES_SUM)
            .collect();
    }
    if growing.is_empty() {
        return;
    }
    let total: f64 = match summed {
        Some(sum) => sum.verdict.figure.bytes_per_request,
        None => growing
            .iter()
            .map(|i| i.verdict.figure.bytes_per_request)
            .sum(),
    };
    let each: Vec<String> = growing
        .iter()
        .map(|i| {
            format!(
                "{} {}",
                i.describe(),
                per_request(i.verdict.figure.bytes_per_request)
            )
        })
        .collect();
    let who = match growing.as_slice() {
        [one] => format!("{} ({})", one.id, one.script),
        many => format!(
            "{} {}s",
            many.len(),
            match many[0].kind {
                crate::model::IsolateKind::Worker => "worker thread",
                crate::model::IsolateKind::Process => "child processe",
            }
        ),
    };
    verdict.findings.push(Finding::new(
        FindingKind::IsolateRetention,
        format!(
            "{} kept per {unit} outside the main isolate: {}",
            per_request(total),
            each.join(", ")
        ),
    ));
    // A main heap that grows keeps its row; any other row yields (a load
    // that failed or stalled leaves every isolate inconclusive too, so no
    // isolate reads retention then).
    if verdict.kind == VerdictKind::Retention {
        return;
    }
    let main_row = verdict.kind;
    verdict.kind = VerdictKind::Retention;
    // Said of a clean main heap; the route is no longer clean.
    verdict
        .findings
        .retain(|f| f.kind != FindingKind::FixedRequest);
    verdict.fails_gate = summed.map_or(growing.iter().any(|i| i.verdict.fails_gate), |s| {
        s.verdict.fails_gate
    });
    verdict.summary = match growing.as_slice() {
        [one] => format!(
            "{who}: {} (the main isolate reads {main_row})",
            one.verdict.summary
        ),
        _ => format!(
            "{who} keep {} per {unit} in all ({}); the main isolate reads {main_row}",
            per_request(total),
            each.join(", ")
        ),
    };
    verdict.action = format!(
        "The growth is in {who}, not the main thread: read that isolate's holder (the diagnosis \
         takes its snapshots there)."
    );
    verdict.figure = Figure {
        bytes_per_request: total,
        metric: Series::HEAP_USED,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{IsolateKind, LoadReport, StatusCounts};
    use crate::units::MB;

    const REQUESTS: u64 = 20_000;

    /// A reading whose main heap is `main` MB and whose isolates have the
    /// heaps `isolates` MB, as (id, kind, MB).
    fn reading(main: f64, isolates: &[(&str, IsolateKind, f64)]) -> Sample {
        Sample {
            heap_used: (main * MB) as u64,
            heap_total: (main * 2.0 * MB) as u64,
            rss: (50.0 * MB) as u64,
            isolates: isolates
                .iter()
                .map(|(id, kind, mb)| IsolateSample {
                    id: id.to_string(),
                    kind: *kind,
                    pid: 7,
                    script: "worker.mjs".into(),
                    heap_used: (mb * MB) as u64,
                    heap_total: (mb * 2.0 * MB) as u64,
                    ..IsolateSample::default()
                })
                .collect(),
            ..Sample::default()
        }
    }

    fn cycles(readings: Vec<Sample>) -> Vec<CycleResult> {
        readings
            .into_iter()
            .enumerate()
            .map(|(i, after_gc)| CycleResult {
                cycle: i as u32 + 1,
                requests: REQUESTS,
                responses: REQUESTS,
                errors: 0,
                non_2xx: 0,
                duration_s: 1.0,
                after_load: after_gc.clone(),
                after_gc,
                load: LoadReport {
                    requests: REQUESTS,
                    responses: REQUESTS,
                    status: StatusCounts {
                        s2xx: REQUESTS,
                        ..StatusCounts::default()
                    },
                    ..LoadReport::default()
                },
                units: REQUESTS,
                served: None,
                driver: None,
                event_loop: None,
                gc: None,
                read_at_s: None,
                peak: None,
            })
            .collect()
    }

    fn judged(readings: Vec<Sample>) -> (Verdict, Vec<IsolateResult>) {
        let baseline = readings[0].clone();
        let cycles = cycles(readings[1..].to_vec());
        let options = Options::default();
        let (mut verdict, _) = judge(&baseline, &cycles, options).unwrap();
        let isolates = judge_isolates(&baseline, &cycles, options);
        fold_into(&mut verdict, &isolates, "request");
        (verdict, isolates)
    }

    #[test]
    fn a_growing_worker_under_a_flat_main_heap_is_retention_in_the_worker() {
        let w = |mb| [("worker 1", IsolateKind::Worker, mb)];
        let (verdict, isolates) = judged(vec![
            reading(8.0, &w(4.0)),
            reading(8.5, &w(12.0)),
            reading(8.5, &w(20.0)),
            reading(8.5, &w(28.0)),
        ]);
        assert_eq!(isolates[0].verdict.kind, VerdictKind::Retention);
        assert_eq!(verdict.kind, VerdictKind::Retention);
        assert!(verdict.fails_gate);
        assert!(
            verdict.summary.starts_with("worker 1"),
            "{}",
            verdict.summary
        );
        let per_request = verdict.figure.bytes_per_request;
        assert!(
            (per_request - 8.0 * MB / REQUESTS as f64).abs() < 20.0,
            "{per_request}"
        );
        assert!(
            verdict
                .findings
                .iter()
                .any(|f| f.kind == FindingKind::IsolateRetention)
        );
    }

    #[test]
    fn flat_isolates_leave_the_main_verdict_alone() {
        let w = |mb| [("worker 1", IsolateKind::Worker, mb)];
        let (verdict, isolates) = judged(vec![
            reading(8.0, &w(4.0)),
            reading(8.5, &w(4.6)),
            reading(8.5, &w(4.6)),
            reading(8.5, &w(4.6)),
        ]);
        assert_eq!(isolates[0].verdict.kind, VerdictKind::NoRetention);
        assert_eq!(verdict.kind, VerdictKind::NoRetention);
        assert!(
            verdict
                .findings
                .iter()
                .all(|f| f.kind != FindingKind::IsolateRetention)
        );
    }

    #[test]
    fn processes_whose_shares_hide_in_noise_are_judged_by_their_sum() {
        // Each process grows 0.15 MB a cycle, one and a half noise floors;
        // together they grow 0.3 MB, which the fit holds clear of noise.
        let p = |a: f64, b: f64| {
            [
                ("pid 10", IsolateKind::Process, a),
                ("pid 11", IsolateKind::Process, b),
            ]
        };
        let (verdict, isolates) = judged(vec![
            reading(8.0, &p(4.0, 4.0)),
            reading(8.0, &p(4.6, 4.6)),
            reading(8.0, &p(4.75, 4.75)),
            reading(8.0, &p(4.9, 4.9)),
        ]);
        let sum = isolates.iter().find(|i| i.id == PROCESSES_SUM).unwrap();
        assert_eq!(
            sum.verdict.kind,
            VerdictKind::Retention,
            "{:#?}",
            sum.verdict
        );
        assert_eq!(verdict.kind, VerdictKind::Retention);
        assert!(verdict.summary.contains("pid 10") && verdict.summary.contains("pid 11"));
    }
}
