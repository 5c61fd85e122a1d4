//! The method's loop for one route: a settled baseline, then per cycle
//! "send a fixed load, read memory, settle a full collection, read again".
//! Results are written into the caller's `RouteResult` as they are taken,
//! so a run that fails or is interrupted keeps every reading so far.

use std::sync::Arc;
use std::time::Duration;

mod external;
mod soak;

pub use external::LoadCommand;
pub use soak::{SoakSchedule, run_soak};

use crate::load::{LoadError, LoadPlan, LoadProgress, LoadRun, RequestSpec};
use crate::model::{CycleResult, RouteResult, Sample};
use crate::probe::{Probe, ProbeError};
use external::{DriverCycle, DriverError};

/// How often the progress display is refreshed during a cycle.
const PROGRESS_TICK: Duration = Duration::from_millis(100);

#[derive(Debug, thiserror::Error)]
pub enum CycleError {
    #[error("reading memory failed")]
    Probe(#[from] ProbeError),
    #[error("the load could not run")]
    Load(#[from] LoadError),
    #[error("--load-cmd could not run")]
    Driver(#[from] DriverError),
    #[error(
        "cycle {cycle}: --load-cmd exited with {status}; its output is in {log}; the cycle does \
         not count"
    )]
    DriverFailed {
        cycle: u32,
        status: String,
        log: String,
    },
    #[error(
        "cycle {cycle}: the server stopped answering (every request of the last {} s timed \
         out); the cycle ended there",
        timeout.as_secs_f64()
    )]
    Stalled { cycle: u32, timeout: Duration },
}

/// What a route's series needs besides the route itself.
#[derive(Debug, Clone)]
pub struct CyclePlan {
    pub cycles: u32,
    /// The load of one cycle; its `requests` are replaced by the route's.
    pub load: LoadPlan,
    /// The request sent for every route (method, headers, body); its path
    /// is the route's.
    pub request: RequestSpec,
    pub verdict: crate::verdict::Options,
    /// Drive each cycle with an external command instead (`--load-cmd`).
    pub load_cmd: Option<LoadCommand>,
    /// Observe event-loop delay and collections during each load.
    pub loop_stats: bool,
    /// `--cycles auto`: stop as soon as the verdict is decided; `cycles`
    /// is then the budget.
    pub sequential: Option<crate::verdict::sequential::SequentialPlan>,
}

/// Hears what the runner is doing, to show progress. Kept apart from any
/// terminal library so the runner can be driven by tests and other front ends.
pub trait CycleObserver {
    fn phase(&self, route: &str, message: &str);
    /// `cycles` is 0 when the count is not planned (`--cycles auto`).
    fn load_started(&self, route: &str, cycle: u32, cycles: u32, total: Option<u64>);
    fn load_progress(&self, completed: u64, errors: u64);
    fn cycle_done(&self, route: &str, result: &CycleResult);
}

/// Stops a load run when the future driving it is dropped (Ctrl-C), so the
/// generator thread does not keep sending at a target being stopped.
struct StopOnDrop(Arc<LoadProgress>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Runs the baseline and every cycle of one route into `into`.
pub async fn run_route(
    probe: &mut dyn Probe,
    plan: &CyclePlan,
    into: &mut RouteResult,
    observer: &dyn CycleObserver,
) -> Result<(), CycleError> {
    let route = into.route.clone();
    observer.phase(&route, "baseline: forcing a full collection");
    into.baseline = Some(probe.settled_sample().await?);
    let load = route_load(plan, &route);
    // A templated route (`/item?id={n}`) varies even when nothing else does.
    let fixed_route =
        crate::load::template::Template::parse(&route, None).is_ok_and(|t| t.as_fixed().is_some());
    let total = match load.stop {
        crate::load::Stop::Requests(n) => Some(n),
        crate::load::Stop::Duration(_) => None,
    };
    for cycle in 1..=plan.cycles {
        if plan.loop_stats {
            // A target whose console cannot `require` has no statistics;
            // a lost inspector is found by the reading below.
            let _ = probe.start_loop_stats().await;
        }
        // `--cycles auto` stops when decided: its budget is not a plan.
        let planned = if plan.sequential.is_some() {
            0
        } else {
            plan.cycles
        };
        observer.load_started(&route, cycle, planned, total);
        let (report, driver) = match &plan.load_cmd {
            Some(command) => {
                let this = DriverCycle {
                    route: &route,
                    cycle,
                    requests: total.unwrap_or(0),
                    connections: load.connections,
                };
                let (report, run) = external::drive(command, &this).await?;
                (report, Some(run))
            }
            None => (drive_load(load.clone(), observer).await?, None),
        };
        let loop_stats = match plan.loop_stats {
            true => probe.take_loop_stats().await.ok().flatten(),
            false => None,
        };
        let after_load = probe.sample().await?;
        observer.phase(&route, "forcing a full collection");
        let after_gc = probe.settled_sample().await?;
        let before = into
            .cycles
            .last()
            .map(|c| &c.after_gc)
            .or(into.baseline.as_ref());
        let served = served_between(before, &after_gc);
        let units = match (&driver, report.iterations) {
            // The target's own count; without one (not Node), the count
            // the driver was asked for.
            (Some(_), _) => served.unwrap_or(total.unwrap_or(0)),
            (None, Some(iterations)) => iterations,
            (None, None) => report.responses,
        };
        let result = CycleResult {
            cycle,
            requests: report.requests,
            responses: report.responses,
            errors: report.errors,
            non_2xx: report.non_2xx,
            duration_s: report.duration_s,
            after_load,
            after_gc,
            load: report,
            units,
            served,
            driver,
            event_loop: loop_stats.as_ref().map(|s| s.event_loop.clone()),
            gc: loop_stats.and_then(|s| s.gc),
        };
        observer.cycle_done(&route, &result);
        into.cycles.push(result);
        let options = crate::verdict::Options {
            proc_only: !probe.can_collect(),
            fixed_request: plan.verdict.fixed_request && fixed_route,
            ..plan.verdict
        };
        let decided = match plan.sequential {
            Some(sequential) => refresh_sequential(into, options, sequential),
            None => {
                refresh_verdict(into, options);
                false
            }
        };
        let last = into.cycles.last().expect("pushed above");
        if last.load.stalled {
            return Err(CycleError::Stalled {
                cycle,
                timeout: load.timeout,
            });
        }
        if let Some(driver) = last.driver.as_ref().filter(|d| !d.succeeded()) {
            return Err(CycleError::DriverFailed {
                cycle,
                status: driver.exit.to_string(),
                log: driver.log.clone(),
            });
        }
        if decided {
            break;
        }
    }
    if plan.loop_stats {
        probe.stop_loop_stats().await;
    }
    Ok(())
}

/// The load of one cycle of `route`: the plan's request on the route's
/// path (a scenario brings its own requests).
pub fn route_load(plan: &CyclePlan, route: &str) -> LoadPlan {
    let mut load = plan.load.clone();
    if load.scenario.is_none() {
        let mut request = plan.request.clone();
        request.path = route.to_string();
        load.requests = vec![request];
    }
    load
}

/// Requests the target began serving between two readings.
fn served_between(before: Option<&Sample>, after: &Sample) -> Option<u64> {
    Some(after.served?.saturating_sub(before?.served?))
}

/// Recomputes the route's verdict from the readings it has: called after
/// every cycle, so a run cut short still carries a verdict for what it saw.
pub fn refresh_verdict(route: &mut RouteResult, options: crate::verdict::Options) {
    let Some(baseline) = &route.baseline else {
        return;
    };
    if let Some((mut verdict, retained)) = crate::verdict::judge(baseline, &route.cycles, options) {
        route.isolates = crate::verdict::isolates::judge_isolates(baseline, &route.cycles, options);
        crate::verdict::isolates::fold_into(&mut verdict, &route.isolates, options.unit.name());
        route.verdict = Some(verdict);
        route.retained_bytes_per_request = Some(retained);
    }
}

/// `--cycles auto`'s look after a cycle: the route's verdict so far (an
/// undecided route reads `inconclusive`) and whether it is decided.
fn refresh_sequential(
    route: &mut RouteResult,
    options: crate::verdict::Options,
    plan: crate::verdict::sequential::SequentialPlan,
) -> bool {
    let Some(baseline) = &route.baseline else {
        return false;
    };
    let Some(look) = crate::verdict::sequential::look(baseline, &route.cycles, options, plan)
    else {
        return false;
    };
    let decided = look.stops();
    route.verdict = Some(look.verdict);
    route.retained_bytes_per_request = Some(look.retained);
    route.isolates = look.isolates;
    route.sequential = Some(look.state);
    decided
}

async fn drive_load(
    plan: LoadPlan,
    observer: &dyn CycleObserver,
) -> Result<crate::model::LoadReport, LoadError> {
    let run = LoadRun::start(plan);
    let progress = run.progress.clone();
    let _stop = StopOnDrop(progress.clone());
    let mut finished = std::pin::pin!(run.finish());
    let mut tick = tokio::time::interval(PROGRESS_TICK);
    loop {
        tokio::select! {
            report = &mut finished => {
                observer.load_progress(progress.completed(), progress.errors());
                return report;
            }
            _ = tick.tick() => observer.load_progress(progress.completed(), progress.errors()),
        }
    }
}
