//! `leakcheck run`: launch the target (or attach to it), check each route in
//! cycles, stop the target, report. Whatever happens after launch (an
//! error, the target dying, Ctrl-C), the target is stopped and the readings
//! taken so far are reported.

use anyhow::{Context, bail};

mod death;
mod discover;
mod plan;
mod preflight;
mod side_by_side;
mod time_budget;

use super::frame::{Frame, RunEnd};
use crate::cycle::{CyclePlan, SoakSchedule, Workload, run_route};
use crate::diagnosis::{
    DiagnosisProps, diagnose_fresh, diagnose_natively, diagnose_route, wants_diagnosis,
};
use crate::model::{RouteResult, RunResult};
use crate::net::{accepts_connections, resolve_http};
use crate::platform::procfs;
use crate::probe::Probe;
use crate::probe::limits::heap_size_limit;
use crate::session::Session;
use crate::session::ports::{refuse_busy_port, wait_port_free};
use crate::settings::{Attach, RunSettings};
use plan::{cycle_plan, new_result};
use tokio::sync::watch;

pub async fn run(props: RunSettings) -> anyhow::Result<RunEnd> {
    let http = resolve_http(&props.target.url, props.target.allow_remote)?;
    let frame = Frame::open(
        &props.output,
        props.method.snapshots.as_deref(),
        props.quiet,
        false,
    )?;
    let scenario = preflight::load_scenario(&props, &http)?;
    let routes = match &scenario {
        // One series: the scenario's iterations, named after its file.
        Some(scenario) => vec![scenario.source.clone()],
        None if props.load.routes.is_empty() => vec![http.path.clone()],
        None => props.load.routes.clone(),
    };
    let mut plan = cycle_plan(&props, &http, scenario)?;
    if !props.target.command.is_empty()
        && matches!(
            props.target.attach,
            Some(Attach::Inspect(_) | Attach::Pid(_))
        )
    {
        bail!(
            "--inspect and --pid attach to a running process: drop them, or drop the command after `--`"
        );
    }
    if !props.target.allow_remote_inspector {
        refuse_exposed_inspector(&props.target.command)?;
    }
    if props.target.command.is_empty() {
        if !accepts_connections(http.addr).await {
            bail!(
                "nothing listens on {}: start the server, or give its command after `--`",
                http.addr
            );
        }
    } else {
        refuse_busy_port(http.addr).await?;
    }

    let mut result = new_result(&props, &routes, &plan);
    let (faults, mut fault) = watch::channel(None::<String>);
    let mut session = Session::new(&props, http.clone(), &frame.progress, faults);
    let oom_before = death::oom_kills_now();
    say_if_native_diagnosis_unavailable(&props, &session, &frame.progress);
    let work = async {
        let (routes, probe) =
            discover::routes_to_check(&mut session, &mut plan, routes, &mut result).await?;
        let routes = discover::this_shard(
            props.load.shard,
            routes,
            &mut plan,
            &mut result,
            &frame.progress,
        );
        if props.load.jobs > 1 && routes.len() > 1 && session.launches() {
            side_by_side::measure_side_by_side(
                &mut session,
                &plan,
                &routes,
                &mut result,
                probe,
                props.load.jobs,
            )
            .await
        } else {
            measure(&mut session, &plan, &routes, &mut result, probe).await
        }
    };
    let measured = frame.guard(work, Some(&mut fault)).await;
    // The measuring future, and with it the inspector session, is gone
    // here: a Node target waiting for its debugger to leave can now exit.
    let stopped = frame.stop(session.target_mut(), "the target").await;
    let launched = stopped.is_some();
    frame.record(&mut result, measured, session.target(), stopped);
    let in_cycle = frame.progress.in_cycle();
    let died = death::judge_death(&mut result, stopped, in_cycle, oom_before);
    if let Some(index) = died.filter(|_| props.method.diagnose && session.launches()) {
        // The dead process cannot be snapshotted: a fresh one can.
        session.clear_fault();
        let into = &mut result.routes[index];
        let work = async { diagnose_fresh(&mut session, &plan, into).await };
        if let Ok(Err(error)) = frame.guard(work, Some(&mut fault)).await {
            frame.progress.say(&format!(
                "the diagnosis in a fresh process failed: {error:#}"
            ));
        }
        frame
            .stop(session.target_mut(), "the diagnosis' target")
            .await;
    }
    if launched {
        let freed = wait_port_free(http.addr).await;
        result.outcome.port_freed = Some(freed);
        if !freed {
            frame.progress.say(&format!(
                "warning: port {} is still in use after the target stopped, {}",
                http.addr.port(),
                procfs::describe_holders(http.addr.port())
            ));
        }
    }
    frame.close(result)
}

/// A launched command that opens its own inspector beyond loopback
/// (`--inspect=0.0.0.0:9229`, here or in NODE_OPTIONS) would expose a
/// remote-code port for the whole run: refused.
fn refuse_exposed_inspector(command: &[String]) -> anyhow::Result<()> {
    use crate::inspector::bind::remote_inspect_host;
    let options = std::env::var("NODE_OPTIONS").unwrap_or_default();
    let found = remote_inspect_host(command.iter().map(String::as_str))
        .map(|host| (host, "the command"))
        .or_else(|| remote_inspect_host(options.split_whitespace()).map(|h| (h, "NODE_OPTIONS")));
    if let Some((host, place)) = found {
        bail!(
            "{place} opens the inspector on {host}, reachable beyond this machine (it runs any \
             code its client sends): drop that flag, since leakcheck opens the inspector on \
             127.0.0.1 itself, or pass --allow-remote-inspector"
        );
    }
    Ok(())
}

/// Runs every route, (re)starting the target as `--fresh` asks. The target
/// lives in the session so the caller can stop it whatever happens here.
async fn measure(
    session: &mut Session<'_>,
    plan: &CyclePlan,
    routes: &[String],
    result: &mut RunResult,
    first_probe: Option<Box<dyn Probe>>,
) -> anyhow::Result<()> {
    let settings = session.settings;
    // The first route's target may already run: route discovery started it.
    let mut probe: Option<Box<dyn Probe>> = first_probe;
    let mut deferred: Vec<(usize, Box<dyn Workload>)> = Vec::new();
    let mut budget = time_budget::RunBudget::new(settings.load.max_time, plan, routes, result);
    for (index, route) in routes.iter().enumerate() {
        if settings.target.fresh && index > 0 && session.target().is_some() {
            session.restart().await?;
            probe = None;
        }
        let probe = match &mut probe {
            Some(probe) => probe,
            None => {
                if session.launches() {
                    session.launch().await?;
                    result.target.pid = session.target().map(|t| t.pid);
                }
                probe.insert(session.probe(result).await?)
            }
        };
        if routes.len() > 1 {
            session
                .progress
                .say(&format!("route {} of {}: {route}", index + 1, routes.len()));
        }
        let pid = session.target().map(|t| t.pid);
        result.routes.push(RouteResult {
            route: route.clone(),
            pid,
            ..RouteResult::default()
        });
        let into = result.routes.last_mut().expect("just pushed");
        let soak = match &settings.load.soak {
            Some(soak) => {
                let schedule = SoakSchedule {
                    duration: soak.duration,
                    every: soak.every,
                    rate: soak.rate,
                };
                Some((schedule, heap_size_limit(probe.as_ref()).await))
            }
            None => None,
        };
        let mut workload = plan.workload(route, soak, probe.inspector());
        if let Some(budget) = budget.as_mut().filter(|b| b.pace_unknown(index)) {
            // A listed route was never timed: its first requests time it,
            // as discovery times a found one, so its share follows its pace.
            let answers = crate::routes::first_requests::send(
                session.http.addr,
                &session.http.host,
                &crate::routes::RouteSpec::given(route),
                &plan.request.method,
                &plan.request.headers,
                plan.load.timeout,
            )
            .await;
            if answers.failure.is_none() && answers.seconds > 0.0 {
                budget.learn_pace(index, answers.seconds, plan);
            }
        }
        let held = budget.as_ref().and_then(|b| b.share_of(index, plan));
        if let Some((looped, share)) = &held {
            let units = looped.sequential.map_or(0, |s| s.max_units);
            session.progress.say(&format!(
                "{route}: its share of the time --max-time leaves is {:.0} s: at most {units} \
                 requests, and no new group of three cycles past it",
                share.seconds
            ));
        }
        run_route(
            probe.as_mut(),
            held.as_ref().map_or(&plan.looped, |(looped, _)| looped),
            workload.as_mut(),
            into,
            session.progress,
        )
        .await
        .with_context(|| format!("route {route}"))?;
        if let (Some((_, share)), Some(budget)) = (held, &budget) {
            time_budget::say_share_ran_out(into, share, budget.max_time);
        }
        if wants_diagnosis(settings.method.diagnose, into, probe.as_ref()) {
            deferred.push((index, workload));
        }
        // A fresh process is discarded after its route, so its snapshots
        // touch no other series; a shared one waits for the last route.
        if settings.target.fresh || index + 1 == routes.len() {
            for (index, mut workload) in deferred.drain(..) {
                let into = &mut result.routes[index];
                // A target past a brake point under its limit may not
                // survive its snapshots, and a big heap makes slow, big
                // ones: a fresh process of it is diagnosed instead.
                if settings.target.fresh && session.launches() && wants_fresh_diagnosis(into) {
                    diagnose_fresh(session, plan, into).await?;
                    continue;
                }
                let props = DiagnosisProps {
                    snapshots_dir: settings.method.snapshots.as_deref(),
                    owns_target: session.launches(),
                    unit: plan.looped.verdict.unit,
                    noise: plan.looped.verdict.noise,
                    resolution: plan.looped.verdict.resolution,
                    progress: session.progress,
                };
                diagnose_route(probe.as_mut(), workload.as_mut(), into, props).await;
            }
        }
    }
    if let Some(budget) = &budget {
        budget.say_shards_needed(session.progress);
    }
    // The main process is done with: its inspector session goes before
    // the process does.
    drop(probe);
    if settings.method.diagnose {
        diagnose_natively(session, plan, result).await?;
    }
    Ok(())
}

/// A heap above this is diagnosed in a fresh process: each snapshot of it
/// pauses the target for seconds per 100 MB and costs its size again in
/// rss, while a fresh process shows the same holder in a few MB.
const FRESH_DIAGNOSIS_ABOVE: u64 = 256 << 20;

/// A leak whose cycles left more than this in the heap is diagnosed in a
/// fresh process too: its snapshots would hold every copy. A document of
/// 600 KB kept per request left 190 MB after one braked cycle and two
/// small ones (the heap below both the brake point and the size above),
/// and its two snapshots were 517 and 540 MB; a fresh process shows the
/// same holder with the diagnosis' 10 MB of it.
const FRESH_DIAGNOSIS_GROWN: u64 = 64 << 20;

/// Whether the route's target is better diagnosed in a fresh process: its
/// last settled reading is past a brake point of a limit in force, its heap is
/// large, or its cycles left much of the leak in it.
fn wants_fresh_diagnosis(route: &RouteResult) -> bool {
    let Some(last) = route.cycles.last() else {
        return false;
    };
    let past = route
        .limits
        .is_some_and(|limits| crate::cycle::headroom::past_brake_point(&limits, &last.after_gc));
    let grown = route.baseline.as_ref().map_or(0, |baseline| {
        last.after_gc.heap_used.saturating_sub(baseline.heap_used)
    });
    let leaks = route.verdict.as_ref().is_some_and(|v| v.kind.is_leak());
    past || last.after_gc.heap_used > FRESH_DIAGNOSIS_ABOVE
        || (leaks && grown > FRESH_DIAGNOSIS_GROWN)
}

/// Said before the work, not after a leak found late: whether the native
/// recorder (heaptrack) could name off-heap growth on this machine, when
/// it could not (missing, incomplete, or built for another CPU, as an
/// x86_64 heaptrack beside an arm64 leakcheck under emulation).
fn say_if_native_diagnosis_unavailable(
    props: &RunSettings,
    session: &Session<'_>,
    progress: &crate::report::progress::Progress,
) {
    if !props.method.diagnose || !session.launches() {
        return;
    }
    if let Err(why) = crate::diagnosis::native::Recorder::find() {
        progress.say(&format!("native diagnosis unavailable: {why}"));
    }
}
