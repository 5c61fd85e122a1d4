//! `leakcheck run`: launch the target (or attach to it), check each route in
//! cycles, stop the target, report. Whatever happens after launch (an
//! error, the target dying, Ctrl-C), the target is stopped and the readings
//! taken so far are reported.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, bail};

mod allocator;
mod native;
mod plan;
mod ports;
mod preflight;

use super::attach;
use super::diagnosis::{DiagnosisProps, diagnose_route, wants_diagnosis};
use super::frame::{Frame, RunEnd};
use crate::cli::{Attach, RunProps};

use crate::cycle::{CyclePlan, SoakSchedule, Workload, heap_size_limit, run_route};
use crate::inspector::Inspector;
use crate::model::{RouteResult, RunResult};
use crate::net::{HttpTarget, accepts_connections, resolve_http};
use crate::probe::parts::{ChildInspectors, Parts};
use crate::probe::{InspectorProbe, Probe, ProcProbe};
use crate::process::{LaunchSpec, Target};
use crate::procfs;
use crate::report::progress::Progress;
use plan::{cycle_plan, new_result};
use ports::{refuse_busy_port, wait_port_free};
use tokio::sync::watch;

pub async fn run(props: RunProps) -> anyhow::Result<RunEnd> {
    let http = resolve_http(&props.url, props.allow_remote)?;
    let frame = Frame::open(
        &props.output,
        props.snapshots.as_deref(),
        props.quiet,
        false,
    )?;
    let scenario = preflight::load_scenario(&props, &http)?;
    let routes = match &scenario {
        // One series: the scenario's iterations, named after its file.
        Some(scenario) => vec![scenario.source.clone()],
        None if props.routes.is_empty() => vec![http.path.clone()],
        None => props.routes.clone(),
    };
    let plan = cycle_plan(&props, &http, scenario)?;
    if !props.command.is_empty()
        && matches!(props.attach, Some(Attach::Inspect(_) | Attach::Pid(_)))
    {
        bail!(
            "--inspect and --pid attach to a running process: drop them, or drop the command after `--`"
        );
    }
    if !props.allow_remote_inspector {
        refuse_exposed_inspector(&props.command)?;
    }
    if props.command.is_empty() {
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
    let mut slot: Option<Target> = None;
    let (faults, mut fault) = watch::channel(None::<String>);
    let work = measure(
        &mut slot,
        &props,
        &plan,
        &http,
        &routes,
        &mut result,
        &frame.progress,
        &faults,
    );
    let measured = frame.guard(work, Some(&mut fault)).await;
    // The measuring future, and with it the inspector session, is gone
    // here: a Node target waiting for its debugger to leave can now exit.
    let stopped = frame.stop(slot.as_mut(), "the target").await;
    let launched = stopped.is_some();
    frame.record(&mut result, measured, slot.as_ref(), stopped);
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
/// lives in `slot` so the caller can stop it whatever happens here.
#[allow(clippy::too_many_arguments)]
async fn measure(
    slot: &mut Option<Target>,
    props: &RunProps,
    plan: &CyclePlan,
    http: &HttpTarget,
    routes: &[String],
    result: &mut RunResult,
    progress: &Progress,
    faults: &watch::Sender<Option<String>>,
) -> anyhow::Result<()> {
    let mut probe: Option<Box<dyn Probe>> = None;
    let mut deferred: Vec<(usize, Box<dyn Workload>)> = Vec::new();
    for (index, route) in routes.iter().enumerate() {
        if props.fresh && index > 0 && slot.is_some() {
            restart_pause(slot, http.addr, progress).await?;
            probe = None;
        }
        let probe = match &mut probe {
            Some(probe) => probe,
            None => {
                if !props.command.is_empty() {
                    launch(slot, props, http, progress, faults).await?;
                    result.target.pid = slot.as_ref().map(|t| t.pid);
                }
                probe.insert(connect_probe(slot.as_mut(), props, http, result, progress).await?)
            }
        };
        let pid = slot.as_ref().map(|t| t.pid);
        result.routes.push(RouteResult {
            route: route.clone(),
            pid,
            ..RouteResult::default()
        });
        let into = result.routes.last_mut().expect("just pushed");
        let soak = match &props.soak {
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
        run_route(
            probe.as_mut(),
            &plan.looped,
            workload.as_mut(),
            into,
            progress,
        )
        .await
        .with_context(|| format!("route {route}"))?;
        if wants_diagnosis(props.diagnose, into, probe.as_ref()) {
            deferred.push((index, workload));
        }
        // A fresh process is discarded after its route, so its snapshots
        // touch no other series; a shared one waits for the last route.
        if props.fresh || index + 1 == routes.len() {
            for (index, mut workload) in deferred.drain(..) {
                let into = &mut result.routes[index];
                diagnose(
                    probe.as_mut(),
                    workload.as_mut(),
                    into,
                    props,
                    plan,
                    progress,
                )
                .await;
            }
        }
    }
    // The main process is done with: its inspector session goes before
    // the process does.
    drop(probe);
    if props.diagnose {
        native::diagnose_natively(slot, props, plan, http, result, progress, faults).await?;
    }
    Ok(())
}

async fn diagnose(
    probe: &mut dyn Probe,
    workload: &mut dyn Workload,
    into: &mut RouteResult,
    props: &RunProps,
    plan: &CyclePlan,
    progress: &Progress,
) {
    let props = DiagnosisProps {
        snapshots_dir: props.snapshots.as_deref(),
        owns_target: !props.command.is_empty(),
        unit: plan.looped.verdict.unit,
        progress,
    };
    diagnose_route(probe, workload, into, props).await;
}

async fn launch(
    slot: &mut Option<Target>,
    props: &RunProps,
    http: &HttpTarget,
    progress: &Progress,
    faults: &watch::Sender<Option<String>>,
) -> anyhow::Result<()> {
    progress.say(&format!("starting `{}`", props.command.join(" ")));
    launch_fresh(slot, props, http, faults, Fresh::default()).await?;
    Ok(())
}

/// What a diagnosis' fresh process of the target gets beyond the command:
/// Node flags (the native recorder's perf map) and environment (a
/// recorder's or an allocator's `LD_PRELOAD`).
#[derive(Default)]
pub struct Fresh {
    pub node_flags: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// Starts the target's command into `slot` and waits until it serves: the
/// measured process, and the diagnosis' fresh ones (native recorder,
/// allocator A/B).
async fn launch_fresh<'a>(
    slot: &'a mut Option<Target>,
    props: &RunProps,
    http: &HttpTarget,
    faults: &watch::Sender<Option<String>>,
    fresh: Fresh,
) -> anyhow::Result<&'a mut Target> {
    let target = slot.insert(Target::launch(&LaunchSpec {
        command: props.command.clone(),
        grace: props.grace,
        faults: Some(faults.clone()),
        node: true,
        node_flags: fresh.node_flags,
        env: fresh.env,
    })?);
    target.wait_ready(http.addr, props.ready_timeout).await?;
    Ok(target)
}

/// A plain inspector probe on a fresh process (no counters, no workers or
/// children): what the diagnosis' extra processes are read with.
async fn fresh_probe(target: &mut Target, http: &HttpTarget) -> anyhow::Result<InspectorProbe> {
    let url = target
        .inspector_url(http.addr, Duration::from_secs(5))
        .await?;
    let inspector = Inspector::connect(&url).await?;
    Ok(InspectorProbe::new(inspector, Vec::new()))
}

/// Stops the target between two routes and waits for its port.
async fn restart_pause(
    slot: &mut Option<Target>,
    addr: SocketAddr,
    progress: &Progress,
) -> anyhow::Result<()> {
    if let Some(mut target) = slot.take() {
        progress.say(&format!(
            "restarting the target for a fresh process (pid {} stops)",
            target.pid
        ));
        target.stop().await;
    }
    if !wait_port_free(addr).await {
        bail!(
            "port {} stayed busy after the target stopped, {}; use --no-fresh to keep one process",
            addr.port(),
            procfs::describe_holders(addr.port())
        );
    }
    Ok(())
}

/// How long a launched target may take to announce an inspector once it
/// serves; a command that is not Node never does, and gets the proc probe.
const INSPECTOR_GRACE: Duration = Duration::from_secs(1);

async fn connect_probe(
    target: Option<&mut Target>,
    props: &RunProps,
    http: &HttpTarget,
    result: &mut RunResult,
    progress: &Progress,
) -> anyhow::Result<Box<dyn Probe>> {
    let connected = match (&props.attach, target) {
        (Some(attach), _) => {
            attach::connect_probe(
                attach,
                Some(http.addr),
                props.allow_remote_inspector,
                &props.counters,
            )
            .await?
        }
        (None, Some(target)) => {
            // The process that serves the URL: below npm or a shell, not the one launched.
            let serving_pid = procfs::holders_of(http.addr.port())
                .first()
                .map_or(target.pid, |h| h.pid);
            match target.inspector_url(http.addr, INSPECTOR_GRACE).await {
                Ok(url) => {
                    let inspector = Inspector::connect(&url).await?;
                    let children = ChildInspectors {
                        announced: target.announced_inspectors(),
                        serving_pid,
                        main_url: url.clone(),
                    };
                    let parts = Parts::watch(&inspector, Some(children)).await;
                    let probe =
                        InspectorProbe::new(inspector, props.counters.clone()).with_parts(parts);
                    let node_version = probe.node_version().await.ok();
                    attach::Connected {
                        probe: Box::new(probe),
                        node_version,
                    }
                }
                Err(_) => {
                    progress.say(&format!(
                        "no Node inspector announced itself: reading rss of pid {serving_pid} from \
                     /proc, without forced collections"
                    ));
                    attach::Connected {
                        probe: Box::new(ProcProbe { pid: serving_pid }),
                        node_version: None,
                    }
                }
            }
        }
        (None, None) => {
            bail!("nothing to measure: give the server's command after `--`, or an attach flag")
        }
    };
    result.target.node_version = connected.node_version;
    result.target.probe = Some(connected.probe.kind());
    result.target.cwd = target_cwd(connected.probe.as_ref(), result.target.pid).await;
    Ok(connected.probe)
}

/// The target's `process.cwd()`, or its `/proc/PID/cwd` without an
/// inspector.
async fn target_cwd(probe: &dyn Probe, pid: Option<u32>) -> Option<String> {
    if let Some(inspector) = probe.inspector()
        && let Ok(serde_json::Value::String(cwd)) =
            inspector.evaluate_in_console("process.cwd()").await
    {
        return Some(cwd);
    }
    let link = std::fs::read_link(format!("/proc/{}/cwd", pid?)).ok()?;
    Some(link.display().to_string())
}
