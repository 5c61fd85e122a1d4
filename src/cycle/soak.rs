//! The soak schedule of the same loop: one constant load for a duration,
//! and every `every` a settled reading taken while the load goes on (the
//! load pauses only as long as the forced collection pauses the target).
//! Each interval is recorded as one of the route's cycles — its requests,
//! its readings, its event loop and collections — so the verdict, the
//! reports and a run cut short by Ctrl-C treat it like any cycle; the
//! soak adds growth per hour and the projection to the heap limit.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::{CycleError, CycleObserver, CyclePlan, StopOnDrop, refresh_verdict, route_load};
use crate::load::{LoadRun, Stop};
use crate::model::{CycleResult, LoadReport, RouteResult, SoakResult, StatusCounts};
use crate::probe::Probe;
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

/// Counts at the start of an interval.
struct Mark {
    completed: u64,
    errors: u64,
    at: Instant,
}

/// Runs the soak of one route into `into`.
pub async fn run_soak(
    probe: &mut dyn Probe,
    plan: &CyclePlan,
    schedule: SoakSchedule,
    into: &mut RouteResult,
    observer: &dyn CycleObserver,
) -> Result<(), CycleError> {
    let route = into.route.clone();
    let options = crate::verdict::Options {
        proc_only: !probe.can_collect(),
        fixed_request: false,
        soak: true,
        ..plan.verdict
    };
    observer.phase(&route, "baseline: forcing a full collection");
    into.baseline = Some(probe.settled_sample().await?);
    let limit = heap_size_limit(probe).await;
    let mut load = route_load(plan, &route);
    load.stop = Stop::Duration(schedule.duration);
    load.rate = schedule.rate;
    let run = LoadRun::start(load);
    let progress = run.progress.clone();
    let _stop = StopOnDrop(progress.clone());
    let mut finished = std::pin::pin!(run.finish());
    let started = Instant::now();
    let mut mark = Mark {
        completed: 0,
        errors: 0,
        at: started,
    };
    let mut readings =
        tokio::time::interval_at(tokio::time::Instant::now() + schedule.every, schedule.every);
    let mut tick = tokio::time::interval(PROGRESS_TICK);
    observer.load_started(&route, 1, 1, None);
    if plan.loop_stats {
        let _ = probe.start_loop_stats().await;
    }
    let report = loop {
        tokio::select! {
            report = &mut finished => break report?,
            _ = readings.tick() => {
                // A reading within a quarter interval of the end would make
                // a short last interval: the end's own reading covers it.
                if started.elapsed() + schedule.every / 4 >= schedule.duration {
                    continue;
                }
                let (completed, errors) = (progress.completed(), progress.errors());
                let cycle = reading(probe, plan, into, &mut mark, completed, errors, None).await?;
                refresh_verdict(into, options);
                observer.cycle_done(&route, &cycle);
                let projected = soak_result(into, started, completed, limit, LoadReport::default());
                observer.phase(&route, &progress_line(started, schedule.duration, completed, into, &projected));
                // Kept as it goes: a soak cut short by Ctrl-C still projects.
                into.soak = Some(projected);
                if plan.loop_stats {
                    let _ = probe.start_loop_stats().await;
                }
            }
            _ = tick.tick() => observer.load_progress(progress.completed(), progress.errors()),
        }
    };
    // The last interval ends with the load: its reading carries the run's
    // non-2xx count, which the load counts only at the end.
    let completed = report.requests;
    let last = reading(
        probe,
        plan,
        into,
        &mut mark,
        completed,
        report.errors,
        Some(&report),
    )
    .await?;
    refresh_verdict(into, options);
    observer.cycle_done(&route, &last);
    into.soak = Some(soak_result(into, started, completed, limit, report));
    if plan.loop_stats {
        probe.stop_loop_stats().await;
    }
    Ok(())
}

/// A settled reading while the load goes on, recorded as the interval's cycle.
async fn reading(
    probe: &mut dyn Probe,
    plan: &CyclePlan,
    into: &mut RouteResult,
    mark: &mut Mark,
    completed: u64,
    errors: u64,
    last: Option<&LoadReport>,
) -> Result<CycleResult, CycleError> {
    let loop_stats = match plan.loop_stats {
        true => probe.take_loop_stats().await.ok().flatten(),
        false => None,
    };
    let after_load = probe.sample().await?;
    let after_gc = probe.settled_sample().await?;
    let requests = completed.saturating_sub(mark.completed);
    let failed = errors.saturating_sub(mark.errors);
    let non_2xx = last.map_or(0, |r| r.non_2xx);
    let responses = requests.saturating_sub(failed);
    let duration_s = mark.at.elapsed().as_secs_f64();
    let load = LoadReport {
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
    let cycle = CycleResult {
        cycle: into.cycles.len() as u32 + 1,
        requests,
        responses,
        errors: failed,
        non_2xx,
        duration_s,
        after_load,
        after_gc,
        units: responses,
        // The load runs on while the reading is taken, so the target's
        // count and leakcheck's are taken at different moments.
        served: None,
        load,
        driver: None,
        event_loop: loop_stats.as_ref().map(|s| s.event_loop.clone()),
        gc: loop_stats.and_then(|s| s.gc),
    };
    *mark = Mark {
        completed,
        errors,
        at: Instant::now(),
    };
    into.cycles.push(cycle.clone());
    Ok(cycle)
}

fn soak_result(
    route: &RouteResult,
    started: Instant,
    requests: u64,
    limit: Option<u64>,
    load: LoadReport,
) -> SoakResult {
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
    }
}

/// "soak 1m30s of 30m: 45012 requests; after-GC heapUsed 45.1 MB; <projection>".
fn progress_line(
    started: Instant,
    duration: Duration,
    requests: u64,
    route: &RouteResult,
    soak: &SoakResult,
) -> String {
    let heap = route.cycles.last().map_or(0, |c| c.after_gc.heap_used);
    format!(
        "soak {:.0} s of {:.0} s: {requests} requests; after-GC heapUsed {:.1} MB; {}",
        started.elapsed().as_secs_f64(),
        duration.as_secs_f64(),
        heap as f64 / MB,
        soak.projection
    )
}

/// `v8.getHeapStatistics().heap_size_limit`, through the inspector.
async fn heap_size_limit(probe: &dyn Probe) -> Option<u64> {
    let inspector = probe.inspector()?;
    let value = inspector
        .evaluate_in_console("require('v8').getHeapStatistics().heap_size_limit")
        .await
        .ok()?;
    value.as_f64().map(|v| v as u64).or_else(|| match value {
        Value::String(text) => text.parse().ok(),
        _ => None,
    })
}
