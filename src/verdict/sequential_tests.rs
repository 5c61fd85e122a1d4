//! The sequential rules on made-up series of small cycles: each test is a
//! series whose right answer is known from how it was built.
use super::*;
use crate::units::MB;

const CYCLE: u64 = 5_000;

fn plan() -> SequentialPlan {
    SequentialPlan {
        resolution_asked: false,
        resolution: method_resolution(),
        max_cycles: 12,
        max_units: 12 * CYCLE,
        warm_up_units: WARM_UP_REQUESTS,
        max_flag: "--max-requests",
    }
}

fn sample(heap_used: f64) -> Sample {
    Sample {
        rss: (60.0 * MB) as u64,
        heap_total: (heap_used + 4.0 * MB) as u64,
        heap_used: heap_used as u64,
        external: (1.5 * MB) as u64,
        array_buffers: 20_000,
        ..Sample::default()
    }
}

fn cycle(n: u32, requests: u64, heap_used: f64) -> CycleResult {
    crate::verdict::test_cycles::cycle(n, requests, sample(heap_used), sample(heap_used))
}

/// Small cycles after a 6 MB baseline: a warm-up step of 0.6 MB, then
/// `per_request` bytes a request plus the given scatter per reading.
fn series(per_request: f64, scatter: &[f64]) -> (Sample, Vec<CycleResult>) {
    let baseline = sample(6.0 * MB);
    let cycles = scatter
        .iter()
        .enumerate()
        .map(|(i, jitter)| {
            let sent = (i as u64 + 1) * CYCLE;
            let heap = 6.6 * MB + per_request * sent as f64 + jitter;
            cycle(i as u32 + 1, CYCLE, heap)
        })
        .collect();
    (baseline, cycles)
}

/// Looks after each cycle and returns the first that stops.
fn first_stop(baseline: &Sample, cycles: &[CycleResult]) -> Option<(usize, Look)> {
    (1..=cycles.len()).find_map(|k| {
        let look = look(baseline, &cycles[..k], Options::default(), plan())?;
        look.stops().then_some((k, look))
    })
}

const JITTER: [f64; 12] = [
    20e3, -30e3, 10e3, 40e3, -20e3, 0.0, 30e3, -40e3, 10e3, -10e3, 20e3, 0.0,
];

#[test]
fn the_resolution_is_what_three_cycles_of_20000_resolve() {
    let r = method_resolution();
    assert!((r - 15.73).abs() < 0.01, "{r}");
}

#[test]
fn a_leak_of_400_bytes_a_request_is_decided_after_three_cycles() {
    let (baseline, cycles) = series(400.0, &JITTER);
    let (k, look) = first_stop(&baseline, &cycles).expect("decided");
    assert_eq!(k, 3);
    assert_eq!(look.state.stopped, SequentialStop::Retention);
    assert_eq!(look.verdict.kind, VerdictKind::Retention);
    assert_eq!(look.state.decided_after_requests, 15_000);
    assert_eq!(look.state.group_cycles, 1);
}

#[test]
fn a_flat_route_is_bounded_before_the_budget_and_never_a_leak() {
    let (baseline, cycles) = series(0.0, &JITTER);
    let (k, look) = first_stop(&baseline, &cycles).expect("decided");
    assert!((4..12).contains(&k), "stopped after {k} cycles");
    assert_eq!(look.state.stopped, SequentialStop::Bounded);
    assert_eq!(look.verdict.kind, VerdictKind::NoRetention);
    let upper = look.state.upper_bound_bytes_per_request.unwrap();
    assert!(upper < method_resolution(), "{upper}");
}

#[test]
fn before_a_decision_a_flat_look_is_inconclusive_not_a_pass() {
    let (baseline, cycles) = series(0.0, &JITTER);
    let early = look(&baseline, &cycles[..3], Options::default(), plan()).unwrap();
    assert!(!early.stops());
    assert_eq!(early.state.stopped, SequentialStop::Undecided);
    assert_eq!(early.verdict.kind, VerdictKind::Inconclusive);
    assert!(!early.verdict.fails_gate);
}

#[test]
fn a_small_leak_is_never_bounded_and_is_found_in_larger_groups() {
    // 40 B a request: 0.2 MB a small cycle, under three noise floors, so
    // the first look cannot call it; groups of two or three can.
    let (baseline, cycles) = series(40.0, &JITTER);
    let (k, look) = first_stop(&baseline, &cycles).expect("decided");
    assert_eq!(
        look.state.stopped,
        SequentialStop::Retention,
        "{}",
        look.state.reason
    );
    assert!(k == 6 || k == 9, "{k}");
    assert!(look.state.group_cycles >= 2);
}

#[test]
fn at_the_budget_the_verdict_is_the_fixed_methods_over_the_same_readings() {
    // 14 B a request under ±150 KB of scatter: too little growth per group
    // for retention, too much scatter to bound below 15.7 B.
    let scatter: Vec<f64> = (0..12)
        .map(|i| if i % 2 == 0 { 150e3 } else { -150e3 })
        .collect();
    let (baseline, cycles) = series(14.0, &scatter);
    let (k, look) = first_stop(&baseline, &cycles).expect("the budget stops it");
    assert_eq!((k, look.state.stopped), (12, SequentialStop::Budget));
    let fixed = in_groups(&cycles, 4);
    assert_eq!(
        fixed.iter().map(|c| c.units).collect::<Vec<_>>(),
        [20_000; 3]
    );
    let (verdict, _) = judge(&baseline, &fixed, Options::default()).unwrap();
    assert_eq!(look.verdict.kind, verdict.kind);
    assert_eq!(look.verdict.summary, verdict.summary);
    // Undecided at the budget, the advice is about the budget that ran
    // out, never the fixed method's "--cycles 6" after 12 cycles ran.
    assert_eq!(look.verdict.kind, VerdictKind::Inconclusive);
    let action = &look.verdict.action;
    assert!(!action.contains("--cycles"), "{action}");
    assert!(action.contains("12 cycles"), "{action}");
}

#[test]
fn a_leak_above_the_resolution_is_never_bounded() {
    for scale in [1.0, 2.0, 3.0, 4.0] {
        let (baseline, cycles) = series(20.0, &JITTER.map(|j| j * scale));
        for k in 1..=cycles.len() {
            let look = look(&baseline, &cycles[..k], Options::default(), plan()).unwrap();
            assert_ne!(
                look.state.stopped,
                SequentialStop::Bounded,
                "scale {scale}, {k} cycles"
            );
        }
    }
}

#[test]
fn groups_sum_their_work_and_keep_their_last_reading() {
    let (_, cycles) = series(100.0, &JITTER);
    let groups = in_groups(&cycles[..6], 2);
    assert_eq!(groups.len(), 3);
    assert_eq!(groups[1].units, 10_000);
    assert_eq!(groups[1].cycle, 2);
    assert_eq!(groups[1].after_gc, cycles[3].after_gc);
}

#[test]
fn a_cycle_that_did_no_work_stops_the_route() {
    let (baseline, mut cycles) = series(0.0, &JITTER[..2]);
    cycles[1].load.status.s2xx = 0;
    cycles[1].load.status.s5xx = CYCLE;
    let look = look(&baseline, &cycles, Options::default(), plan()).unwrap();
    assert_eq!(look.state.stopped, SequentialStop::Failed);
    assert_eq!(look.verdict.kind, VerdictKind::Inconclusive);
}

#[test]
fn the_bound_widens_with_scatter() {
    let (baseline, quiet) = series(0.0, &JITTER);
    let (_, noisy) = series(0.0, &JITTER.map(|j| j * 20.0));
    let a = bound_of(&baseline, &quiet, &Series::HEAP_USED).unwrap();
    let b = bound_of(&baseline, &noisy, &Series::HEAP_USED).unwrap();
    assert!(b.upper - b.slope > a.upper - a.slope, "{a:?} {b:?}");
}
