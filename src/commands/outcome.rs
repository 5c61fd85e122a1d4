//! How a run ended: the outcome recorded in the result, and partial
//! routes marked.

pub use super::exit::RunEnd;
use super::signals::StopSignal;
use crate::model::{
    Finding, FindingKind, Outcome, OutcomeStatus, RouteResult, RunResult, Stopped, VerdictKind,
};
use crate::process::Target;

/// `measured` is what the measuring returned, or the signal that cut it short.
pub fn outcome_of(
    measured: Result<anyhow::Result<()>, StopSignal>,
    target: Option<&Target>,
    stopped: Option<&Stopped>,
) -> Outcome {
    match measured {
        Ok(Ok(())) => Outcome {
            status: OutcomeStatus::Complete,
            ..Outcome::default()
        },
        Ok(Err(error)) => {
            let mut message = format!("{error:#}");
            if let Some(Stopped::AlreadyExited(how)) = stopped {
                message = format!("the target exited ({how}) during the run: {message}");
            }
            Outcome {
                status: OutcomeStatus::Failed,
                error: Some(message),
                target_output: target.map(Target::tail_lines).unwrap_or_default(),
                ..Outcome::default()
            }
        }
        Err(signal) => Outcome {
            status: OutcomeStatus::Interrupted,
            error: Some(format!(
                "interrupted by {signal}; the readings so far are kept"
            )),
            ..Outcome::default()
        },
    }
}

/// A load that peaked over `--max-peak` fails its route, whatever the
/// row became after the loop (an allocator's fragmentation, a soak's
/// trend): applied once, at the end.
pub fn apply_peak_gate(result: &mut RunResult) {
    for verdict in result.routes.iter_mut().filter_map(|r| r.verdict.as_mut()) {
        if verdict.has_finding(FindingKind::OverMaxPeak) {
            verdict.fails_gate = true;
        }
    }
}

/// A route cut short keeps its verdict over the cycles it has, with a
/// finding that says so: fewer cycles cannot separate warm-up from a trend.
pub fn mark_partial_routes(result: &mut RunResult) {
    let planned = result.settings.cycles as usize;
    for route in &mut result.routes {
        let done = route.cycles.len();
        // `--cycles auto` stops when decided: only an undecided route was cut short.
        let decided = route
            .sequential
            .as_ref()
            .is_some_and(|s| s.stopped != crate::model::SequentialStop::Undecided);
        if done < planned
            && !decided
            && let Some(verdict) = route.verdict.as_mut()
        {
            verdict.findings.push(Finding::new(
                FindingKind::Partial,
                format!(
                    "only {done} of {planned} cycles completed before the run stopped; the verdict \
                     covers those and cannot tell warm-up from a trend with fewer than 2"
                ),
            ));
        }
    }
}

/// A route the run ended before its readings could be judged (an error,
/// a timeout or Ctrl-C before its first cycle completed) is never left
/// without a verdict: it reads `inconclusive`, with the reason the run
/// ended and what to do next, so no report shows a route as if nothing
/// were wrong. Applied after every other judgement (a death by memory
/// gives its own verdict first).
pub fn judge_unjudged_routes(result: &mut RunResult) {
    let unit = result.settings.unit.name();
    let reason = match &result.outcome.error {
        Some(error) => error.clone(),
        None => "the run ended".to_string(),
    };
    for route in result.routes.iter_mut().filter(|r| r.verdict.is_none()) {
        route.verdict = Some(crate::verdict::not_judged(route, &reason, unit));
    }
}

/// The exit code's meaning for a finished run, with the reason on stderr
/// for anything but a clean pass. A leak outranks an undecided route (it is
/// news either way); an undecided route is never a pass: `inconclusive`
/// exits 2, with what would decide it.
pub fn run_end(result: &RunResult) -> RunEnd {
    // A watch does no work of its own: a quiet interval proves nothing wrong.
    let load_failed = result.settings.method != "watch"
        && result
            .routes
            .iter()
            .any(|r| r.cycles.iter().any(|c| c.did_no_work()));
    if load_failed {
        eprintln!(
            "error: a cycle did no work (no request answered 2xx, no call returned, or \
             --load-cmd failed), so its \
             memory figures prove nothing; see the verdict above"
        );
    }
    let regressed = result
        .comparison
        .as_ref()
        .is_some_and(|c| c.regressions().next().is_some());
    // A target that died of its leak ended the run, and is the leak.
    let exhausted = result.routes.iter().any(|r| {
        r.verdict
            .as_ref()
            .is_some_and(|v| v.kind == VerdictKind::MemoryExhausted)
    });
    if exhausted {
        return RunEnd::Leak;
    }
    if result.outcome.status != OutcomeStatus::Complete || load_failed {
        return RunEnd::Failed;
    }
    if result.any_leak() || regressed {
        return RunEnd::Leak;
    }
    let undecided: Vec<&RouteResult> = result
        .routes
        .iter()
        .filter(|r| {
            r.verdict
                .as_ref()
                .is_some_and(|v| v.kind == VerdictKind::Inconclusive)
        })
        .collect();
    for route in &undecided {
        if let Some(verdict) = &route.verdict {
            eprintln!(
                "inconclusive: {}: the evidence cannot decide; {}",
                route.route, verdict.action
            );
        }
    }
    if undecided.is_empty() {
        RunEnd::Clean
    } else {
        RunEnd::Failed
    }
}
