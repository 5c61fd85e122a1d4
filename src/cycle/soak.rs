//! The soak as a workload: one constant load for a duration, and a cycle
//! ends every `every` with a settled reading taken while the load goes on
//! (the load pauses only as long as the forced collection pauses the
//! target). Each interval is one of the route's cycles — its requests, its
//! readings, its event loop and collections — so the verdict, the reports
//! and a run cut short by Ctrl-C treat it like any cycle; the soak adds
//! growth per hour and the projection to the heap limit (`recorded`).
//! The load runs on through the last reading too and stops after it
//! (`wind_down`): a last reading taken with the connections closed read
//! 0.05–0.2 MB above the others (sockets torn down, Node's lazily added
//! listeners), a step every soak ended on, which tilted a clean twin's
//! time trend to undecided on Node 22.
//! Asked for a cycle after the load has ended (the diagnosis' extra
//! cycle), it sends one interval's worth of requests at full speed.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::CycleObserver;
use super::workload::{CycleSpec, Units, Work, WorkError, Workload};
use crate::load::{LoadError, LoadPlan, LoadProgress, LoadRun, Stop};
use crate::model::{LoadReport, RouteResult, SoakResult, StatusCounts};
use crate::units::MB;

/// The soak's schedule.
#[derive(Debug, Clone, Copy)]
pub struct SoakSchedule {
    pub duration: Duration,
    pub every: Duration,
    pub rate: Option<f64>,
}

/// How often the progress line's request count is refreshed.
const PROGRESS_TICK: Duration = Duration::from_millis(250);
/// The diagnosis' extra cycle sends at least this many requests: a short
/// interval at a low rate would give the snapshots too little to compare.
const MIN_EXTRA_REQUESTS: u64 = 1_000;

type Finishing = Pin<Box<dyn Future<Output = Result<LoadReport, LoadError>> + Send>>;

/// The load under way: its end, and its live counts.
struct Running {
    finished: Finishing,
    progress: Arc<LoadProgress>,
    readings: tokio::time::Interval,
}

/// Counts at the start of an interval.
struct Mark {
    completed: u64,
    errors: u64,
    at: Instant,
}

pub struct SoakInterval {
    load: LoadPlan,
    schedule: SoakSchedule,
    /// `v8.getHeapStatistics().heap_size_limit`, for the projection.
    limit: Option<u64>,
    running: Option<Running>,
    /// When the load started.
    started: Option<Instant>,
    mark: Option<Mark>,
    /// The whole load's report, once it has ended.
    ended: Option<LoadReport>,
    /// Requests of the busiest interval, the size of the extra cycle.
    busiest: u64,
    /// The last interval was handed out; the load runs until `wind_down`.
    closing: bool,
}

/// How long the load may run past the soak's duration while the last
/// reading is taken before it ends on its own: the reading's own limit
/// (`--inspector-timeout`, 60 s by default) with room to spare.
const LAST_READING_ALLOWANCE: Duration = Duration::from_secs(300);

impl SoakInterval {
    /// `load` is the route's load; its stop and rate are the schedule's.
    pub fn new(mut load: LoadPlan, schedule: SoakSchedule, limit: Option<u64>) -> SoakInterval {
        load.stop = Stop::Duration(schedule.duration + LAST_READING_ALLOWANCE);
        load.rate = schedule.rate;
        SoakInterval {
            load,
            schedule,
            limit,
            running: None,
            started: None,
            mark: None,
            ended: None,
            busiest: 0,
            closing: false,
        }
    }

    fn start(&mut self) {
        let run = LoadRun::start(self.load.clone());
        let started = Instant::now();
        let every = self.schedule.every;
        self.started = Some(started);
        self.mark = Some(Mark {
            completed: 0,
            errors: 0,
            at: started,
        });
        self.running = Some(Running {
            progress: run.progress.clone(),
            finished: Box::pin(run.finish()),
            readings: tokio::time::interval_at(tokio::time::Instant::now() + every, every),
        });
    }

    /// One interval's counts as a cycle's load report. The last interval
    /// carries the run's non-2xx count and latencies, which the load
    /// counts only at its end.
    fn interval(&mut self, completed: u64, errors: u64, last: Option<&LoadReport>) -> Work {
        let mark = self.mark.as_ref().expect("the load started");
        let requests = completed.saturating_sub(mark.completed);
        let failed = errors.saturating_sub(mark.errors);
        let non_2xx = last.map_or(0, |r| r.non_2xx);
        let responses = requests.saturating_sub(failed);
        let duration_s = mark.at.elapsed().as_secs_f64();
        self.busiest = self.busiest.max(requests);
        self.mark = Some(Mark {
            completed,
            errors,
            at: Instant::now(),
        });
        let report = LoadReport {
            requests,
            responses,
            errors: failed,
            non_2xx,
            duration_s,
            requests_per_second: requests as f64 / duration_s.max(1e-9),
            status: StatusCounts {
                s2xx: responses.saturating_sub(non_2xx),
                ..StatusCounts::default()
            },
            latency_ms: last.and_then(|r| r.latency_ms.clone()),
            ..LoadReport::default()
        };
        Work {
            report,
            driver: None,
            units: Units::Running(responses),
        }
    }

    /// The diagnosis' cycle: the busiest interval's requests at full speed.
    fn extra_load(&self, cycle: &CycleSpec) -> LoadPlan {
        let mut load = self.load.clone();
        let busiest = self.busiest.max(MIN_EXTRA_REQUESTS);
        load.stop = Stop::Requests(cycle.most_units.map_or(busiest, |most| busiest.min(most)));
        load.rate = None;
        load
    }
}

/// The soak's extra cycle (the diagnosis'): as many requests as its
/// busiest interval, as fast as they go, within the cycle's time target.
async fn extra(
    load: LoadPlan,
    time: Option<std::time::Duration>,
    observer: &dyn CycleObserver,
) -> Result<Work, WorkError> {
    let report = super::generator::send(load, observer, None, time).await?;
    Ok(Work {
        units: Units::Counted(report.responses),
        report,
        driver: None,
    })
}

#[async_trait]
impl Workload for SoakInterval {
    fn planned_units(&self) -> Option<u64> {
        None
    }

    async fn drive(
        &mut self,
        cycle: CycleSpec,
        observer: &dyn CycleObserver,
    ) -> Result<Work, WorkError> {
        if self.ended.is_some() {
            return extra(self.extra_load(&cycle), cycle.time, observer).await;
        }
        if self.running.is_none() {
            self.start();
        }
        let (every, duration) = (self.schedule.every, self.schedule.duration);
        let started = self.started.expect("started above");
        let running = self.running.as_mut().expect("started above");
        let end = tokio::time::Instant::from_std(started + duration);
        let mut tick = tokio::time::interval(PROGRESS_TICK);
        let ended = loop {
            tokio::select! {
                // The load ended before its time: a Ctrl-C, a failure.
                report = &mut running.finished => break Some(report?),
                () = tokio::time::sleep_until(end) => {
                    self.closing = true;
                    break None;
                }
                _ = running.readings.tick() => {
                    // A reading within a quarter interval of the end would
                    // make a short last interval: the end's reading covers it.
                    if started.elapsed() + every / 4 < duration {
                        break None;
                    }
                }
                _ = tick.tick() => {
                    observer.load_progress(running.progress.completed(), running.progress.errors());
                }
            }
        };
        let (completed, errors) = match &ended {
            Some(report) => (report.requests, report.errors),
            None => (running.progress.completed(), running.progress.errors()),
        };
        let work = self.interval(completed, errors, ended.as_ref());
        if ended.is_some() {
            self.running = None;
            self.ended = ended;
        }
        Ok(work)
    }

    fn more(&self) -> bool {
        self.ended.is_none() && !self.closing
    }

    /// Stops the load after the last reading and gives the last interval
    /// the run's status counts and latencies, which the load reports only
    /// at its end.
    async fn wind_down(&mut self, route: &mut RouteResult) -> Result<(), WorkError> {
        let Some(running) = self.running.take() else {
            return Ok(());
        };
        running.progress.stop();
        let whole = running.finished.await?;
        if let Some(last) = route.cycles.last_mut() {
            last.non_2xx = whole.non_2xx;
            last.load.non_2xx = whole.non_2xx;
            last.load.status.s2xx = last.load.responses.saturating_sub(whole.non_2xx);
            last.load.latency_ms = whole.latency_ms.clone();
        }
        if let Some(started) = self.started {
            route.soak = Some(soak_result(route, started, self.limit, whole.clone()));
        }
        self.ended = Some(whole);
        Ok(())
    }

    fn recorded(&mut self, route: &mut RouteResult, observer: &dyn CycleObserver) {
        let Some(started) = self.started else {
            return;
        };
        // Until the load ends, its figures so far: a soak cut short by
        // Ctrl-C reports what was sent, not zeros.
        let whole = match (&self.ended, &self.running) {
            (Some(ended), _) => ended.clone(),
            (None, Some(running)) => so_far(&running.progress, started),
            (None, None) => LoadReport::default(),
        };
        let soak = soak_result(route, started, self.limit, whole);
        if self.ended.is_none() {
            let line = progress_line(started, self.schedule.duration, route, &soak);
            observer.phase(&route.route, &line);
        }
        // Kept as it goes: a soak cut short by Ctrl-C still projects.
        route.soak = Some(soak);
    }
}

/// The whole load's counts while it runs (latencies and status classes
/// come only with its end).
fn so_far(progress: &LoadProgress, started: Instant) -> LoadReport {
    let (requests, errors) = (progress.completed(), progress.errors());
    let duration_s = started.elapsed().as_secs_f64();
    LoadReport {
        duration_s,
        requests,
        responses: requests.saturating_sub(errors),
        errors,
        requests_per_second: requests as f64 / duration_s.max(1e-9),
        interrupted: true,
        ..LoadReport::default()
    }
}

/// The soak's figures from the route's intervals so far and the whole
/// load's report; the requests are the intervals' own.
fn soak_result(
    route: &RouteResult,
    started: Instant,
    limit: Option<u64>,
    load: LoadReport,
) -> SoakResult {
    let requests: u64 = route.cycles.iter().map(|c| c.requests).sum();
    let elapsed_s = started.elapsed().as_secs_f64();
    let projection = crate::verdict::projection::project(route, elapsed_s, requests, limit);
    SoakResult {
        elapsed_s,
        requests,
        growth_bytes_per_hour: projection.growth_bytes_per_hour,
        heap_size_limit: limit,
        hours_to_limit: projection.hours_to_limit,
        projection: projection.text,
        load,
        time_fits: route
            .soak
            .as_ref()
            .map(|s| s.time_fits.clone())
            .unwrap_or_default(),
    }
}

/// "soak 1m30s of 30m: 45012 requests; after-GC heapUsed 45.1 MB; <projection>".
fn progress_line(
    started: Instant,
    duration: Duration,
    route: &RouteResult,
    soak: &SoakResult,
) -> String {
    let heap = route.cycles.last().map_or(0, |c| c.after_gc.heap_used);
    format!(
        "soak {:.0} s of {:.0} s: {} requests; after-GC heapUsed {:.1} MB; {}",
        started.elapsed().as_secs_f64(),
        duration.as_secs_f64(),
        soak.requests,
        heap as f64 / MB,
        soak.projection
    )
}
