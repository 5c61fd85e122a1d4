//! How a run ended: the outcome recorded in the result, partial routes
//! marked, and a second Ctrl-C that exits at once.

use crate::model::{Finding, FindingKind, Outcome, OutcomeStatus, RunResult, Stopped};
use crate::process::Target;

pub(super) fn outcome_of(
    measured: Option<anyhow::Result<()>>,
    target: Option<&Target>,
    stopped: Option<&Stopped>,
) -> Outcome {
    match measured {
        Some(Ok(())) => Outcome {
            status: OutcomeStatus::Complete,
            ..Outcome::default()
        },
        Some(Err(error)) => {
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
        None => Outcome {
            status: OutcomeStatus::Interrupted,
            error: Some("interrupted by Ctrl-C; the readings so far are kept".into()),
            ..Outcome::default()
        },
    }
}

/// A route cut short keeps its verdict over the cycles it has, with a
/// finding that says so: fewer cycles cannot separate warm-up from a trend.
pub(super) fn mark_partial_routes(result: &mut RunResult) {
    let planned = result.settings.cycles as usize;
    for route in &mut result.routes {
        let done = route.cycles.len();
        if done < planned
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

/// After a first Ctrl-C leakcheck cleans up; a second one exits at once
/// (the target still dies: it was started with a parent-death signal).
pub(super) fn exit_on_second_interrupt() {
    tokio::spawn(async {
        crate::commands::shutdown_signal().await;
        eprintln!("interrupted again: exiting now");
        std::process::exit(2);
    });
}
