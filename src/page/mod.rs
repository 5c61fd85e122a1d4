//! `leakcheck page`: the method's loop on a browser page. The unit of work
//! is one pass of the user's action list (an iteration); a cycle is `-n`
//! iterations; the readings are the JS heap and the DOM counts
//! (`probe.rs`); the verdict, the diagnosis (snapshots of the page,
//! detached DOM nodes named as DevTools names them) and the reports are
//! the ones `run` uses. Chromium is a target like a server (`browser.rs`).

mod actions;
pub mod browser;
mod probe;

use std::time::Instant;

pub use actions::{Action, ActionError, wait_loaded};
pub use probe::PageProbe;

use crate::cycle::{CycleObserver, refresh_verdict};
use crate::inspector::Inspector;
use crate::model::{CycleResult, LoadReport, RouteResult, StatusCounts};
use crate::probe::{Probe, ProbeError};

/// Distinct failure messages kept per cycle.
const REASONS_KEPT: usize = 5;

/// What a page's series needs.
#[derive(Debug, Clone)]
pub struct PagePlan {
    pub actions: Vec<Action>,
    pub cycles: u32,
    pub iterations: u64,
    pub verdict: crate::verdict::Options,
}

/// How a batch of iterations went.
#[derive(Debug, Default)]
pub struct Iterations {
    pub ok: u64,
    pub failed: u64,
    pub reasons: Vec<String>,
    pub seconds: f64,
}

/// Runs the action list `n` times; an iteration stops at its first failed
/// action, and the next one starts from the page as that left it.
/// `on_progress` hears (iterations done, of which failed) after each.
pub async fn iterate(
    page: &Inspector,
    actions: &[Action],
    n: u64,
    on_progress: impl Fn(u64, u64),
) -> Result<Iterations, ProbeError> {
    let started = Instant::now();
    let mut done = Iterations::default();
    for _ in 0..n {
        let mut failure = None;
        for action in actions {
            match action.perform(page).await {
                Ok(()) => {}
                Err(ActionError::Inspector(e)) => return Err(e.into()),
                Err(other) => {
                    failure = Some(other.to_string());
                    break;
                }
            }
        }
        match failure {
            None => done.ok += 1,
            Some(reason) => {
                done.failed += 1;
                if done.reasons.len() < REASONS_KEPT && !done.reasons.contains(&reason) {
                    done.reasons.push(reason);
                }
            }
        }
        on_progress(done.ok + done.failed, done.failed);
    }
    done.seconds = started.elapsed().as_secs_f64();
    Ok(done)
}

/// The baseline and every cycle of a page into `into`.
pub async fn run_page(
    probe: &mut PageProbe,
    plan: &PagePlan,
    into: &mut RouteResult,
    observer: &dyn CycleObserver,
) -> Result<(), ProbeError> {
    let route = into.route.clone();
    observer.phase(&route, "baseline: forcing a full collection");
    into.baseline = Some(probe.settled_sample().await?);
    for cycle in 1..=plan.cycles {
        observer.load_started(&route, cycle, plan.cycles, Some(plan.iterations));
        let page = probe.page.clone();
        let progress = |done, failed| observer.load_progress(done, failed);
        let done = iterate(&page, &plan.actions, plan.iterations, progress).await?;
        let after_load = probe.sample().await?;
        observer.phase(&route, "forcing a full collection");
        let after_gc = probe.settled_sample().await?;
        let result = cycle_result(cycle, &done, after_load, after_gc);
        observer.cycle_done(&route, &result);
        into.cycles.push(result);
        refresh_verdict(into, plan.verdict);
    }
    Ok(())
}

/// A cycle of iterations in the model's terms: an iteration that ran every
/// action is a success (the `2xx` of a page).
fn cycle_result(
    cycle: u32,
    done: &Iterations,
    after_load: crate::model::Sample,
    after_gc: crate::model::Sample,
) -> CycleResult {
    let total = done.ok + done.failed;
    CycleResult {
        cycle,
        requests: total,
        responses: done.ok,
        errors: done.failed,
        non_2xx: 0,
        duration_s: done.seconds,
        after_load,
        after_gc,
        load: LoadReport {
            duration_s: done.seconds,
            requests: total,
            responses: done.ok,
            errors: done.failed,
            iterations: Some(done.ok),
            failed_iterations: Some(done.failed),
            iterations_per_second: Some(done.ok as f64 / done.seconds.max(1e-9)),
            failure_reasons: done.reasons.clone(),
            requests_per_second: total as f64 / done.seconds.max(1e-9),
            status: StatusCounts {
                s2xx: done.ok,
                ..StatusCounts::default()
            },
            ..LoadReport::default()
        },
        units: done.ok,
        served: None,
        driver: None,
        event_loop: None,
        gc: None,
    }
}
