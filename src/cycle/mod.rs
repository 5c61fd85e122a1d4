//! The method's loop, once for every kind of work: a settled baseline,
//! then per cycle "drive the workload's cycle, read memory, settle a full
//! collection, read again", judged after every cycle (`--cycles auto`
//! stops when decided). What a cycle's work is — the built-in generator,
//! `--load-cmd`, a soak's interval, a page's action list — is a `Workload`
//! (`workload.rs`); this file is the only place a `CycleResult` is built.
//! Results are written into the caller's `RouteResult` as they are taken,
//! so a run that fails or is interrupted keeps every reading so far.

pub mod driver_log;
mod external;
pub mod generator;
pub mod headroom;
pub mod peak;
mod soak;
mod time_check;
pub mod workload;

pub use external::{ExternalDriver, LoadCommand};
pub use generator::Generator;
pub use soak::{SoakInterval, SoakSchedule};
pub use workload::{Brake, CycleSpec, Units, Work, WorkError, Workload};

use crate::load::{LoadPlan, RequestSpec};
use crate::model::{CycleResult, RouteResult, Sample};
use crate::probe::{Probe, ProbeError};
use crate::verdict::Options;
use crate::verdict::sequential::SequentialPlan;
use peak::PeakWatch;

#[derive(Debug, thiserror::Error)]
pub enum CycleError {
    #[error("reading memory failed")]
    Probe(#[from] ProbeError),
    #[error(transparent)]
    Work(#[from] WorkError),
    #[error(
        "cycle {cycle}: --load-cmd exited with {status}; its output ends: {log}; the cycle does \
         not count"
    )]
    DriverFailed {
        cycle: u32,
        status: String,
        log: String,
    },
    #[error(
        "cycle {cycle}: the target stopped answering (no {unit} completed in the last {} s); the \
         cycle ended there",
        timeout.as_secs_f64()
    )]
    Stalled {
        cycle: u32,
        timeout: std::time::Duration,
        unit: &'static str,
    },
    #[error(
        "{when}: the target did not answer its inspector within {} s (a blocked event loop{}); \
         the readings so far are kept (--inspector-timeout sets the limit)",
        limit.as_secs_f64(),
        if *counters { ", or a --counter expression that does not return" } else { "" }
    )]
    Unresponsive {
        when: String,
        limit: std::time::Duration,
        counters: bool,
    },
}

/// What the loop needs, whatever the work.
#[derive(Debug, Clone)]
pub struct LoopPlan {
    /// The most cycles: with `sequential` the budget; a soak's cycles end
    /// with its load (`Workload::more`).
    pub cycles: u32,
    /// The verdict's choices from the command line; the loop adds what the
    /// probe and the workload tell (`verdict_options`).
    pub verdict: Options,
    /// Observe event-loop delay and collections during each cycle's work.
    pub loop_stats: bool,
    /// `--cycles auto`: stop as soon as the verdict is decided.
    pub sequential: Option<SequentialPlan>,
    /// How long the target may answer nothing before a cycle is cut short
    /// (a cycle so ended fails the route).
    pub stall_timeout: std::time::Duration,
    /// How long one reading (its forced collections, counters and loop
    /// statistics included) may take before the target is given up on.
    pub reading_timeout: std::time::Duration,
    /// `--counter` expressions run at every reading (named if one hangs).
    pub counters: bool,
    /// Sample the heap and rss during each cycle's load (`peak.rs`).
    pub peak: bool,
    /// `--memory-limit`: the production container's limit, in bytes.
    pub memory_limit: Option<u64>,
    /// Each cycle's time target (`--cycle-time`, `budget::CYCLE_TIME`):
    /// its work ends at its units or at this time, whichever comes first.
    pub cycle_time: Option<std::time::Duration>,
    /// `--cycles auto` under `run --max-time`: past this moment the budget
    /// counts as spent at the next whole group of three cycles (a slow
    /// route's time-bound cycles never reach its budget in units).
    pub deadline: Option<std::time::Instant>,
}

/// The sequential plan as it stands after a cycle: past the route's
/// deadline, its budget is the work done, so the next judgement at a
/// whole group stops on it.
fn sequential_now(plan: &LoopPlan, into: &RouteResult) -> Option<SequentialPlan> {
    let mut sequential = plan.sequential?;
    if plan
        .deadline
        .is_some_and(|deadline| std::time::Instant::now() >= deadline)
    {
        let served: u64 = into.cycles.iter().map(|c| c.units).sum();
        sequential.max_units = sequential.max_units.min(served);
    }
    Some(sequential)
}

/// `run`'s and `soak`'s plan: the loop's, and what the route's workload
/// is built from.
#[derive(Debug, Clone)]
pub struct CyclePlan {
    pub looped: LoopPlan,
    /// The load of one cycle; its `requests` are replaced by the route's.
    pub load: LoadPlan,
    /// The request sent for every route (method, headers, body); its path
    /// is the route's.
    pub request: RequestSpec,
    /// Drive each cycle with an external command instead (`--load-cmd`).
    pub load_cmd: Option<LoadCommand>,
    /// Found routes with their own method, headers or body
    /// (`crate::routes`), by name; a route not listed is a path sent with
    /// `request`.
    pub routes: Vec<crate::routes::RouteSpec>,
}

impl CyclePlan {
    /// The workload of one route: the external driver (watching the
    /// target's served count through `inspector`, when it has one), or the
    /// built-in generator (within a soak's schedule when given).
    pub fn workload(
        &self,
        route: &str,
        soak: Option<(SoakSchedule, Option<u64>)>,
        inspector: Option<&crate::inspector::Inspector>,
    ) -> Box<dyn Workload> {
        let spec = self
            .routes
            .iter()
            .find(|r| r.name == route)
            .cloned()
            .unwrap_or_else(|| crate::routes::RouteSpec::given(route));
        let generator = Generator::for_route(self, &spec);
        match (&self.load_cmd, soak) {
            (Some(command), _) => Box::new(ExternalDriver {
                command: command.clone(),
                route: route.to_string(),
                requests: generator.planned_units().unwrap_or(0),
                connections: self.load.connections,
                watch: inspector.cloned(),
                stall_timeout: self.looped.stall_timeout,
            }),
            (None, Some((schedule, limit))) => {
                Box::new(SoakInterval::new(generator.load().clone(), schedule, limit))
            }
            (None, None) => Box::new(generator),
        }
    }
}

/// Hears what the runner is doing, to show progress. Kept apart from any
/// terminal library so the runner can be driven by tests and other front ends.
pub trait CycleObserver: Sync {
    fn phase(&self, route: &str, message: &str);
    /// `cycles` is 0 when the count is not planned (`--cycles auto`, a soak).
    fn load_started(&self, route: &str, cycle: u32, cycles: u32, total: Option<u64>);
    fn load_progress(&self, completed: u64, errors: u64);
    fn cycle_done(&self, route: &str, result: &CycleResult);
}

/// Shows nothing: for work nobody watches (the diagnosis' extra cycle).
pub struct Silent;

impl CycleObserver for Silent {
    fn phase(&self, _route: &str, _message: &str) {}
    fn load_started(&self, _route: &str, _cycle: u32, _cycles: u32, _total: Option<u64>) {}
    fn load_progress(&self, _completed: u64, _errors: u64) {}
    fn cycle_done(&self, _route: &str, _result: &CycleResult) {}
}

/// Runs the baseline and every cycle of one route into `into`.
pub async fn run_route(
    probe: &mut dyn Probe,
    plan: &LoopPlan,
    work: &mut dyn Workload,
    into: &mut RouteResult,
    observer: &dyn CycleObserver,
) -> Result<(), CycleError> {
    let route = into.route.clone();
    observer.phase(&route, "baseline: forcing a full collection");
    let baseline = within(plan, "the baseline", probe.settled_sample()).await?;
    into.baseline = Some(baseline?);
    let pid = within(plan, "reading the target's pid", probe.pid()).await?;
    let reading = crate::probe::limits::read_limits(&*probe, pid, plan.memory_limit);
    let limits = within(plan, "reading the limits", reading).await?;
    into.limits = (!limits.is_empty()).then_some(limits);
    let watch = peak_watch(plan, &*probe, pid, &limits);
    let since = std::time::Instant::now();
    let options = Options {
        limits,
        ..verdict_options(plan, probe, work)
    };
    // `--cycles auto` stops when decided, a soak when its load ends: their
    // budget is not a plan to show.
    let planned = match plan.sequential.is_some() || work.planned_units().is_none() {
        true => 0,
        false => plan.cycles,
    };
    let mut number = 0;
    let mut most_units: Option<u64> = None;
    // `--cycles auto` stops on its budget in units; cycles shrunk to the
    // target's headroom take more of them.
    let most_cycles = match plan.sequential {
        Some(_) => plan.cycles.saturating_mul(headroom::MOST_SPLIT),
        None => plan.cycles,
    };
    while number < most_cycles && work.more() {
        number += 1;
        if plan.loop_stats {
            // A target whose console cannot `require` has no statistics;
            // a lost inspector is found by the reading below.
            let when = format!("before cycle {number}");
            let _ = within(plan, &when, probe.start_loop_stats()).await?;
        }
        let spec = CycleSpec {
            most_units,
            brake: Some(Brake::default()),
            time: plan.cycle_time,
            ..CycleSpec::measured(number)
        };
        let total = work.planned_units().map(|n| spec.units_of(n));
        observer.load_started(&route, number, planned, total);
        // The settled reading this cycle starts from.
        let from = into
            .cycles
            .last()
            .map(|c| &c.after_gc)
            .or(into.baseline.as_ref());
        let brake = spec.brake.clone().unwrap_or_default();
        let sampler = watch.as_ref().map(|w| w.start_from(from, brake));
        let done = work.drive(spec, observer).await?;
        let peak = match sampler {
            Some(sampler) => sampler.finish().await,
            None => None,
        };
        let when = format!("after cycle {number}");
        let reading = read_cycle(probe, plan, number, done, into, since);
        let mut result = within(plan, &when, reading).await??;
        result.peak = peak;
        most_units = work.planned_units().zip(from).and_then(|(planned, from)| {
            headroom::next_cycle_units(&limits, from, &result, planned)
        });
        observer.cycle_done(&route, &result);
        into.cycles.push(result);
        // A soak's figures so far feed the verdict's time trend; its live
        // line is then told again, with this reading's verdict in it.
        work.recorded(into, &Silent);
        let decided = crate::verdict::refresh(into, options, sequential_now(plan, into));
        work.recorded(into, observer);
        let last = into.cycles.last().expect("pushed above");
        if last.load.stalled {
            return Err(CycleError::Stalled {
                cycle: number,
                timeout: plan.stall_timeout,
                unit: options.unit.name(),
            });
        }
        if let Some(driver) = last.driver.as_ref().filter(|d| !d.succeeded()) {
            return Err(CycleError::DriverFailed {
                cycle: number,
                status: driver.exit.to_string(),
                log: driver
                    .output_tail
                    .last()
                    .map_or("(nothing)".to_string(), |line| format!("{line:?}")),
            });
        }
        if decided {
            break;
        }
    }
    work.wind_down(into).await?;
    if plan.sequential.is_none() && !into.cycles.is_empty() {
        // The end may complete the last cycle (a soak's status counts).
        crate::verdict::refresh(into, options, None);
    }
    if plan.loop_stats {
        probe.stop_loop_stats().await;
    }
    time_check::check(probe, into, options.unit, options.soak).await?;
    Ok(())
}

/// Runs one reading of the target within `plan.reading_timeout`: a target
/// whose event loop never returns (a `while (true)`, a counter expression
/// that spins) would otherwise hold the run until every inspector call's
/// own two-minute limit, one after another.
async fn within<T>(
    plan: &LoopPlan,
    when: &str,
    reading: impl std::future::Future<Output = T>,
) -> Result<T, CycleError> {
    tokio::time::timeout(plan.reading_timeout, reading)
        .await
        .map_err(|_| CycleError::Unresponsive {
            when: when.to_string(),
            limit: plan.reading_timeout,
            counters: plan.counters,
        })
}

/// The verdict's choices for this route: the command line's, with what only
/// the probe (can it collect?) and the workload (identical units?) know.
/// The one place they are put together.
pub fn verdict_options(plan: &LoopPlan, probe: &dyn Probe, work: &dyn Workload) -> Options {
    Options {
        proc_only: !probe.can_collect(),
        fixed_request: plan.verdict.fixed_request && work.fixed_work(),
        ..plan.verdict
    }
}

/// Reads the target after a cycle's work and records the cycle: the one
/// place a `CycleResult` is made.
async fn read_cycle(
    probe: &mut dyn Probe,
    plan: &LoopPlan,
    number: u32,
    work: Work,
    into: &RouteResult,
    since: std::time::Instant,
) -> Result<CycleResult, ProbeError> {
    let loop_stats = match plan.loop_stats {
        true => probe.take_loop_stats().await.ok().flatten(),
        false => None,
    };
    let after_load = probe.sample().await?;
    let after_gc = probe.settled_sample().await?;
    let before = into
        .cycles
        .last()
        .map(|c| &c.after_gc)
        .or(into.baseline.as_ref());
    let (units, served) = work.units.resolve(served_between(before, &after_gc));
    let report = work.report;
    Ok(CycleResult {
        cycle: number,
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
        driver: work.driver,
        event_loop: loop_stats.as_ref().map(|s| s.event_loop.clone()),
        gc: loop_stats.and_then(|s| s.gc),
        read_at_s: Some(since.elapsed().as_secs_f64()),
        peak: None,
    })
}

/// What the peak sampler reads for this probe (process `pid`), and where
/// it brakes; `None` with `--no-peak` or a probe that reads neither heap
/// nor rss.
fn peak_watch(
    plan: &LoopPlan,
    probe: &dyn Probe,
    pid: Option<u32>,
    limits: &crate::model::Limits,
) -> Option<PeakWatch> {
    if !plan.peak {
        return None;
    }
    let (brake_heap_at, brake_rss_at) = headroom::brake_points(limits);
    let watch = PeakWatch {
        inspector: probe.inspector().cloned(),
        pid,
        brake_heap_at,
        brake_rss_at,
    };
    watch.reads().then_some(watch)
}

/// Requests the target began serving between two readings.
pub fn served_between(before: Option<&Sample>, after: &Sample) -> Option<u64> {
    Some(after.served?.saturating_sub(before?.served?))
}
