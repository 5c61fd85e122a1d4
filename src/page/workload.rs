//! A page's action list as a workload: a cycle runs the list `-n` times.
//! An iteration stops at its first failed action, and the next one starts
//! from the page as that left it. A cycle in which no iteration succeeded
//! for the stall timeout ends there, stalled, as the generator's does when
//! a server stops answering: more iterations would measure nothing.
//!
//! After each iteration the page's URL is read. One that ended elsewhere
//! than the start URL is counted and named (`left-start-url`): the next
//! iteration would start from another page, and a full navigation
//! replaces the document, so what the start page kept is no longer read.
//! A failed iteration that ended elsewhere is taken back to the start URL;
//! a failed one still on it is left as it is, since reloading would free
//! what the page kept and hide the leak. For the same reason a `back`
//! while the page is still at the start URL fails the iteration instead
//! of leaving the page.

use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::actions::{Action, ActionError};
use crate::cycle::{CycleObserver, CycleSpec, Units, Work, WorkError, Workload};
use crate::inspector::Inspector;
use crate::model::{LoadReport, StatusCounts};

/// Distinct failure messages kept per cycle.
const REASONS_KEPT: usize = 5;

/// The page's cycles.
pub struct PageActions {
    pub page: Inspector,
    pub actions: Vec<Action>,
    /// Iterations of a measured cycle.
    pub iterations: u64,
    /// How long iterations may all fail before the cycle is cut short,
    /// and how long one action may take.
    pub stall_timeout: Duration,
    /// The dialogs the page opened, dismissed as they open.
    pub dialogs: super::Dialogs,
    /// `location.href` once the page had opened.
    pub start_url: String,
    /// The page's requests in flight, for `wait-idle`.
    pub network: super::Network,
}

/// How a batch of iterations went.
#[derive(Debug, Default)]
struct Iterations {
    ok: u64,
    failed: u64,
    reasons: Vec<String>,
    seconds: f64,
    stalled: bool,
    ended_away: u64,
    ended_away_at: Option<String>,
    returned_to_start: u64,
}

#[async_trait]
impl Workload for PageActions {
    fn planned_units(&self) -> Option<u64> {
        Some(self.iterations)
    }

    async fn drive(
        &mut self,
        cycle: CycleSpec,
        observer: &dyn CycleObserver,
    ) -> Result<Work, WorkError> {
        let n = self.iterations.saturating_mul(cycle.scale.max(1));
        let before = self.dialogs.count();
        let done = self.iterate(n, cycle.time, observer).await?;
        let mut report = report_of(&done);
        report.time_bound = done.ok + done.failed < n && !done.stalled;
        report.dialogs = self.dialogs.count() - before;
        Ok(Work {
            report,
            driver: None,
            units: Units::Counted(done.ok),
        })
    }
}

impl PageActions {
    /// Runs `n` iterations, none started once `time` has passed.
    async fn iterate(
        &self,
        n: u64,
        time: Option<std::time::Duration>,
        observer: &dyn CycleObserver,
    ) -> Result<Iterations, WorkError> {
        let started = Instant::now();
        let mut last_success = started;
        let mut done = Iterations::default();
        for _ in 0..n {
            if time.is_some_and(|t| started.elapsed() >= t) {
                break;
            }
            let failure = self.one_iteration().await?;
            self.check_where_it_ended(failure.is_some(), &mut done)
                .await?;
            match failure {
                None => {
                    done.ok += 1;
                    last_success = Instant::now();
                }
                Some(reason) => {
                    done.failed += 1;
                    if done.reasons.len() < REASONS_KEPT && !done.reasons.contains(&reason) {
                        done.reasons.push(reason);
                    }
                    if last_success.elapsed() >= self.stall_timeout {
                        done.stalled = true;
                        break;
                    }
                }
            }
            observer.load_progress(done.ok + done.failed, done.failed);
        }
        done.seconds = started.elapsed().as_secs_f64();
        Ok(done)
    }

    /// Counts an iteration that ended away from the start URL, and takes
    /// a failed one back to it.
    async fn check_where_it_ended(
        &self,
        failed: bool,
        done: &mut Iterations,
    ) -> Result<(), crate::probe::ProbeError> {
        let Some(at) = self.location().await? else {
            return Ok(());
        };
        if at == self.start_url {
            return Ok(());
        }
        done.ended_away += 1;
        done.ended_away_at
            .get_or_insert_with(|| crate::net::redacted(&at));
        if failed && super::open(&self.page, &self.start_url).await.is_ok() {
            done.returned_to_start += 1;
        }
        Ok(())
    }

    /// The page's URL, `None` while a navigation leaves no document to
    /// ask (Chromium then answers "Inspected target navigated or closed",
    /// or that the context is gone; the next iteration's actions fail and
    /// say so). Only a lost connection ends the run.
    async fn location(&self) -> Result<Option<String>, crate::probe::ProbeError> {
        use crate::inspector::InspectorError;
        let read = self.page.evaluate("location.href");
        match tokio::time::timeout(self.stall_timeout, read).await {
            Ok(Ok(value)) => Ok(value.as_str().map(str::to_string)),
            Ok(Err(InspectorError::Evaluation { .. } | InspectorError::Protocol { .. }))
            | Err(_) => Ok(None),
            Ok(Err(other)) => Err(other.into()),
        }
    }

    /// `None` when every action ran, else why the iteration stopped. An
    /// action that timed out in a page that then answers nothing ends the
    /// work: its main thread is blocked, and every later read would wait
    /// out its own limit to learn the same.
    async fn one_iteration(&self) -> Result<Option<String>, WorkError> {
        for action in &self.actions {
            // `back` from the start URL leaves the page (a reload later
            // frees what it kept): the action before it did not navigate.
            if *action == super::Action::Back
                && self.location().await? == Some(self.start_url.clone())
            {
                return Ok(Some(
                    "back: the page is still at the start URL, so the action before it did not \
                     navigate (a link that did not open its view?); going back would leave the page"
                        .to_string(),
                ));
            }
            match action
                .perform_within(&self.page, &self.network, self.stall_timeout)
                .await
            {
                Ok(()) => {}
                Err(ActionError::Inspector(e)) => {
                    return Err(crate::probe::ProbeError::from(e).into());
                }
                Err(ActionError::Failed {
                    action,
                    failure: super::actions::PageFailure::TimedOut(limit),
                }) if !self.answers().await => {
                    return Err(WorkError::Blocked { action, limit });
                }
                Err(other) => return Ok(Some(other.to_string())),
            }
        }
        Ok(None)
    }
}

/// How long a page whose action timed out has to answer a trivial
/// evaluation before its main thread is taken as blocked: a page that is
/// only slow (a navigation, a request that never ends) answers at once.
const ANSWER_LIMIT: Duration = Duration::from_secs(2);

impl PageActions {
    async fn answers(&self) -> bool {
        matches!(
            tokio::time::timeout(ANSWER_LIMIT, self.page.evaluate("1")).await,
            Ok(Ok(_))
        )
    }
}

/// A cycle of iterations in the load report's terms: an iteration that ran
/// every action is a success (the `2xx` of a page).
fn report_of(done: &Iterations) -> LoadReport {
    let total = done.ok + done.failed;
    LoadReport {
        duration_s: done.seconds,
        stalled: done.stalled,
        requests: total,
        responses: done.ok,
        errors: done.failed,
        iterations: Some(done.ok),
        failed_iterations: Some(done.failed),
        iterations_per_second: Some(done.ok as f64 / done.seconds.max(1e-9)),
        failure_reasons: done.reasons.clone(),
        ended_away: done.ended_away,
        ended_away_at: done.ended_away_at.clone(),
        returned_to_start: done.returned_to_start,
        requests_per_second: total as f64 / done.seconds.max(1e-9),
        status: StatusCounts {
            s2xx: done.ok,
            ..StatusCounts::default()
        },
        ..LoadReport::default()
    }
}
