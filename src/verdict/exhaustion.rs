//! A target that died of memory during the check. The process that runs
//! out of heap under the check's load is the failure the method exists
//! for, and the strongest evidence a check can get: when its settled
//! readings grew before it died, the route's verdict is
//! `memory-exhausted` (a leak, exit 1), with the growth per unit the
//! completed cycles measured. A target that dies on its first request
//! (one request too big for its heap) is named as that, never a leak; one
//! that dies with flat settled readings died at its peak.

use crate::model::{
    CycleResult, Exhaustion, ExhaustionCause, ExitStatus, Figure, Finding, FindingKind,
    RouteResult, Sample, Series, Verdict, VerdictKind,
};
use crate::units::{mb, per_request};

use super::Noise;
use super::metric::RETENTION_SIGMAS;

/// V8's and Node's last words when memory runs out: the fatal heap
/// messages (`Ineffective mark-compacts near heap limit`, `Reached heap
/// limit`, `JavaScript heap out of memory`), and the allocations outside
/// the heap that fail (`Array buffer allocation failed`,
/// `ERR_MEMORY_ALLOCATION_FAILED`).
const HEAP_MESSAGES: [&str; 3] = [
    "JavaScript heap out of memory",
    "Reached heap limit",
    "Ineffective mark-compacts near heap limit",
];
const ALLOCATION_MESSAGES: [&str; 3] = [
    "ERR_MEMORY_ALLOCATION_FAILED",
    "Array buffer allocation failed",
    "Cannot allocate memory",
];
const SIGKILL: i32 = 9;

/// How a dead target died, as far as leakcheck can tell.
pub struct Death<'a> {
    /// The last lines it printed.
    pub output: &'a [String],
    pub exit: Option<ExitStatus>,
    /// The cgroup's OOM kill count rose while the target ran.
    pub oom_killed: bool,
    /// Units the dying cycle completed before the death.
    pub in_cycle: u64,
    pub heap_limit: Option<u64>,
}

/// Whether the death was memory's, and which kind.
pub fn cause(death: &Death) -> Option<ExhaustionCause> {
    let said = |messages: &[&str]| {
        death
            .output
            .iter()
            .any(|line| messages.iter().any(|m| line.contains(m)))
    };
    if said(&HEAP_MESSAGES) {
        Some(ExhaustionCause::HeapLimit)
    } else if said(&ALLOCATION_MESSAGES) {
        Some(ExhaustionCause::AllocationFailed)
    } else if death.oom_killed && death.exit.is_some_and(|e| e.signal == Some(SIGKILL)) {
        Some(ExhaustionCause::OomKilled)
    } else {
        None
    }
}

/// Records a death of memory in the route that was being measured and
/// judges it. Returns whether it was memory's.
pub fn apply(route: &mut RouteResult, death: &Death, unit: &str) -> bool {
    let Some(cause) = cause(death) else {
        return false;
    };
    let completed: u64 = route.cycles.iter().map(|c| c.units).sum();
    let exhaustion = Exhaustion {
        cause,
        units_before_death: completed + death.in_cycle,
        cycles_completed: route.cycles.len() as u32,
        exit: death
            .exit
            .map_or("an unknown status".into(), |e| e.to_string()),
        last_output: death.output.to_vec(),
    };
    let limit = death
        .heap_limit
        .map_or(String::new(), |l| format!(" (heap limit {})", mb(l as f64)));
    let served = exhaustion.units_before_death;
    let growth = route
        .baseline
        .as_ref()
        .and_then(|b| grown_series(b, &route.cycles));
    let verdict = match (growth, served) {
        (Some((series, per_unit)), _) => leaked(
            route.verdict.take(),
            cause,
            served,
            &limit,
            series,
            per_unit,
            unit,
        ),
        (None, 0) => first_unit(route.verdict.take(), cause, &limit, unit),
        (None, _) if route.cycles.is_empty() => {
            first_cycle(route.verdict.take(), cause, served, &limit, unit)
        }
        (None, _) => at_peak(route.verdict.take(), cause, served, &limit, unit),
    };
    route.verdict = Some(verdict);
    route.exhaustion = Some(exhaustion);
    true
}

/// The series whose settled reading grew clear of its noise from the
/// baseline to the last completed cycle, with its growth per unit.
fn grown_series(baseline: &Sample, cycles: &[CycleResult]) -> Option<(Series, f64)> {
    let last = cycles.last()?;
    let units: u64 = cycles.iter().map(|c| c.units).sum();
    if units == 0 {
        return None;
    }
    [Series::HEAP_USED, Series::EXTERNAL, Series::RSS]
        .into_iter()
        .find_map(|series| {
            let grew = last.after_gc.value(&series)? - baseline.value(&series)?;
            let floor = Noise::Process.floor(&series);
            (grew > RETENTION_SIGMAS * floor).then(|| (series, grew / units as f64))
        })
}

fn leaked(
    previous: Option<Verdict>,
    cause: ExhaustionCause,
    served: u64,
    limit: &str,
    series: Series,
    per_unit: f64,
    unit: &str,
) -> Verdict {
    let mut verdict = previous.unwrap_or_default();
    verdict.kind = VerdictKind::MemoryExhausted;
    verdict.fails_gate = true;
    verdict.figure = Figure {
        metric: series.clone(),
        bytes_per_request: per_unit,
    };
    verdict.summary = format!(
        "{} after {served} {unit}s{limit}: {} kept per {unit} ({series}) before it died",
        cause.describe(),
        per_request(per_unit)
    );
    verdict.action = format!(
        "This leak kills the process: {} per {unit} fills its heap in {served} {unit}s. Find \
         what keeps it (the holder below); --heap-limit reproduces the death in minutes.",
        per_request(per_unit)
    );
    verdict
        .findings
        .retain(|f| f.kind != FindingKind::WarmUp && f.kind != FindingKind::Partial);
    verdict
}

/// The route's verdict made `inconclusive` with these words.
fn undecided(previous: Option<Verdict>, summary: String, action: String) -> Verdict {
    let mut verdict = previous.unwrap_or_default();
    verdict.kind = VerdictKind::Inconclusive;
    verdict.fails_gate = false;
    verdict.summary = summary;
    verdict.action = action;
    verdict
}

fn first_unit(
    previous: Option<Verdict>,
    cause: ExhaustionCause,
    limit: &str,
    unit: &str,
) -> Verdict {
    undecided(
        previous,
        format!(
            "the target {} on its first {unit}{limit}: one {unit} needs more memory than the \
             process has, which is not a leak",
            cause.describe()
        ),
        format!(
            "Give the process more memory (--heap-limit, the container's limit) or make one \
             {unit} need less; growth cannot be measured in a process that cannot serve one \
             {unit}."
        ),
    )
}

fn first_cycle(
    previous: Option<Verdict>,
    cause: ExhaustionCause,
    served: u64,
    limit: &str,
    unit: &str,
) -> Verdict {
    undecided(
        previous,
        format!(
            "the target {} after about {served} {unit}s of the first cycle{limit}, before any \
             settled reading: a leak or one cycle's peak",
            cause.describe()
        ),
        format!(
            "Rerun with cycles far smaller than {served} {unit}s (-a {}) to measure the growth \
             before the process dies.",
            (served / 10).max(10)
        ),
    )
}

fn at_peak(
    previous: Option<Verdict>,
    cause: ExhaustionCause,
    served: u64,
    limit: &str,
    unit: &str,
) -> Verdict {
    let mut verdict = previous.unwrap_or_default();
    verdict.findings.push(Finding::new(
        FindingKind::PeakPressure,
        format!(
            "the target {} after {served} {unit}s{limit} while its settled readings held: it \
             died at the load's peak, not of a leak; fewer concurrent {unit}s or more memory",
            cause.describe()
        ),
    ));
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::test_cycles::cycle;

    const MB: f64 = 1024.0 * 1024.0;

    fn death(output: &[String], in_cycle: u64) -> Death<'_> {
        Death {
            output,
            exit: Some(ExitStatus {
                exit_code: None,
                signal: Some(6),
            }),
            oom_killed: false,
            in_cycle,
            heap_limit: Some(4 << 30),
        }
    }

    fn fatal() -> Vec<String> {
        vec![
            "<--- Last few GCs --->".into(),
            "FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - \
             JavaScript heap out of memory"
                .into(),
        ]
    }

    fn route(after_gc_mb: &[f64]) -> RouteResult {
        RouteResult {
            baseline: Some(Sample {
                heap_used: (10.0 * MB) as u64,
                ..Sample::default()
            }),
            cycles: after_gc_mb
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let at = Sample {
                        heap_used: ((10.0 + m) * MB) as u64,
                        ..Sample::default()
                    };
                    cycle(i as u32 + 1, 2_500, at.clone(), at)
                })
                .collect(),
            ..RouteResult::default()
        }
    }

    #[test]
    fn v8s_fatal_message_and_a_cgroup_kill_are_memory_deaths() {
        assert_eq!(cause(&death(&fatal(), 0)), Some(ExhaustionCause::HeapLimit));
        let killed = Death {
            exit: Some(ExitStatus {
                exit_code: None,
                signal: Some(9),
            }),
            oom_killed: true,
            ..death(&[], 0)
        };
        assert_eq!(cause(&killed), Some(ExhaustionCause::OomKilled));
        let crashed = ["TypeError: x is not a function".to_string()];
        assert_eq!(cause(&death(&crashed, 0)), None);
    }

    #[test]
    fn growth_before_the_death_is_memory_exhausted_with_its_figure() {
        let mut route = route(&[1_620.0]);
        let output = fatal();
        assert!(apply(&mut route, &death(&output, 700), "request"));
        let verdict = route.verdict.as_ref().unwrap();
        assert_eq!(verdict.kind, VerdictKind::MemoryExhausted);
        assert!(verdict.kind.is_leak() && verdict.fails_gate);
        assert!(
            verdict
                .summary
                .starts_with("ran out of heap after 3200 requests (heap limit 4096.0 MB)"),
            "{}",
            verdict.summary
        );
        let kb = verdict.figure.bytes_per_request / 1024.0;
        assert!((kb - 659.5).abs() < 5.0, "{kb}");
        let exhaustion = route.exhaustion.unwrap();
        assert_eq!(exhaustion.units_before_death, 3_200);
        assert_eq!(exhaustion.last_output, output);
    }

    #[test]
    fn a_death_on_the_first_request_is_not_a_leak() {
        let mut route = route(&[]);
        assert!(apply(&mut route, &death(&fatal(), 0), "request"));
        let verdict = route.verdict.unwrap();
        assert_eq!(verdict.kind, VerdictKind::Inconclusive);
        assert!(
            verdict.summary.contains("on its first request"),
            "{}",
            verdict.summary
        );
    }

    #[test]
    fn a_death_with_flat_readings_is_the_peak() {
        let mut route = route(&[0.1, 0.1]);
        route.verdict = Some(Verdict::default());
        assert!(apply(&mut route, &death(&fatal(), 300), "request"));
        let verdict = route.verdict.unwrap();
        assert!(!verdict.kind.is_leak());
        assert!(verdict.has_finding(FindingKind::PeakPressure));
    }
}
