//! The built-in generator as a workload: the route's request (fixed or
//! templated, some aborted) or a scenario's iterations, an exact count per
//! cycle over keep-alive connections.

use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::workload::{Brake, CycleSpec, Units, Work, WorkError, Workload};
use super::{CycleObserver, CyclePlan};
use crate::load::{LoadPlan, LoadRun, Stop};

/// How often the progress display is refreshed during a cycle.
const PROGRESS_TICK: Duration = Duration::from_millis(100);

/// The generator's cycles for one route.
pub struct Generator {
    load: LoadPlan,
    fixed: bool,
}

impl Generator {
    /// The plan's load with the route's path (a scenario brings its own
    /// requests).
    pub fn for_route(plan: &CyclePlan, route: &crate::routes::RouteSpec) -> Generator {
        let mut load = plan.load.clone();
        if load.scenario.is_none() {
            let mut request = plan.request.clone();
            request.path = route.path.clone();
            if let Some(method) = &route.method {
                request.method = method.clone();
            }
            request.headers.extend(route.headers.iter().cloned());
            if let Some(body) = &route.body {
                request.body = body.clone().into_bytes();
            }
            load.requests = vec![request];
        }
        // A templated route (`/item?id={n}`) varies even when nothing else
        // does; so does a found route's body (`{"id":{n}}`).
        let fixed_text = |text: &str| {
            crate::load::template::Template::parse(text, None).is_ok_and(|t| t.as_fixed().is_some())
        };
        let fixed_route = fixed_text(&route.path) && route.body.as_deref().is_none_or(fixed_text);
        Generator {
            load,
            fixed: plan.looped.verdict.fixed_request && fixed_route,
        }
    }

    /// The load of one measured cycle.
    pub fn load(&self) -> &LoadPlan {
        &self.load
    }
}

#[async_trait]
impl Workload for Generator {
    fn planned_units(&self) -> Option<u64> {
        match self.load.stop {
            Stop::Requests(n) => Some(n),
            Stop::Duration(_) => None,
        }
    }

    fn fixed_work(&self) -> bool {
        self.fixed
    }

    async fn drive(
        &mut self,
        cycle: CycleSpec,
        observer: &dyn CycleObserver,
    ) -> Result<Work, WorkError> {
        let mut load = self.load.clone();
        if let Stop::Requests(n) = load.stop {
            load.stop = Stop::Requests(cycle.units_of(n));
        }
        let report = send(load, observer, cycle.brake.as_ref(), cycle.time).await?;
        let units = report.iterations.unwrap_or(report.responses);
        Ok(Work {
            report,
            driver: None,
            units: Units::Counted(units),
        })
    }
}

/// Sends one load to the end (or until `brake` is pulled, or `time` has
/// passed), showing its progress. Dropped before the end, the `LoadRun`
/// inside stops the sending.
pub async fn send(
    load: LoadPlan,
    observer: &dyn CycleObserver,
    brake: Option<&Brake>,
    time: Option<Duration>,
) -> Result<crate::model::LoadReport, crate::load::LoadError> {
    let deadline = time.map(|t| Instant::now() + t);
    let run = LoadRun::start(load);
    let progress = run.progress.clone();
    let mut finished = std::pin::pin!(run.finish());
    let mut tick = tokio::time::interval(PROGRESS_TICK);
    let mut out_of_time = false;
    loop {
        tokio::select! {
            report = &mut finished => {
                observer.load_progress(progress.completed(), progress.errors());
                // Stopped by its own clock, not by a signal.
                return report.map(|mut report| {
                    if out_of_time && !report.stalled {
                        report.interrupted = false;
                        report.time_bound = true;
                    }
                    report
                });
            }
            _ = tick.tick() => {
                if brake.is_some_and(Brake::pulled) {
                    progress.stop();
                }
                if !out_of_time && deadline.is_some_and(|d| Instant::now() >= d) {
                    out_of_time = true;
                    progress.stop();
                }
                observer.load_progress(progress.completed(), progress.errors());
            }
        }
    }
}
