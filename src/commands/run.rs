//! `leakcheck run`: launch the target (or attach to it), check each route in
//! cycles, stop the target, report. Whatever happens after launch (an
//! error, the target dying, Ctrl-C), the target is stopped and the readings
//! taken so far are reported.

use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};

use crate::cli::RunProps;
use crate::cycle::{CyclePlan, run_route};
use crate::inspector::Inspector;
use crate::load::{LoadPlan, RequestSpec, Stop};
use crate::model::{Outcome, RouteResult, RunResult, SCHEMA_VERSION, Settings, TargetInfo};
use crate::net::{HttpTarget, accepts_connections, resolve_http};
use crate::probe::{EndpointsProbe, InspectorProbe, Probe};
use crate::report::progress::Progress;
use crate::report::{Exporter, JsonExporter, TerminalExporter, write_output};
use crate::target::{LaunchSpec, Target, port};
use crate::verdict::Options;

/// How long the inspector may take to announce itself once the app serves.
const INSPECTOR_ANNOUNCE: Duration = Duration::from_secs(5);
/// How long the port may stay busy after the target exited.
const PORT_RELEASE: Duration = Duration::from_secs(3);

/// How a run ended, for the exit code.
pub enum RunEnd {
    Clean,
    Leak,
    Failed,
}

pub async fn run(props: RunProps) -> anyhow::Result<RunEnd> {
    let http = resolve_http(&props.url, props.allow_remote)?;
    let routes = if props.routes.is_empty() {
        vec![http.path.clone()]
    } else {
        props.routes.clone()
    };
    if props.endpoints.is_some() && !props.counters.is_empty() {
        bail!(
            "--counter evaluates JavaScript through the inspector; with --endpoints every extra \
             numeric field of /mem is a counter already"
        );
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

    let progress = Progress::new(props.quiet);
    let mut result = new_result(&props, &routes);
    let mut slot: Option<Target> = None;
    let started = Instant::now();
    let measured = {
        let work = measure(&mut slot, &props, &http, &routes, &mut result, &progress);
        tokio::select! {
            outcome = work => Some(outcome),
            _ = tokio::signal::ctrl_c() => None,
        }
    };
    result.outcome = outcome_of(measured, slot.as_mut());
    if let Some(target) = slot.as_mut() {
        progress.say(&format!("stopping the target (pid {})", target.pid));
        let stopped = target.stop().await;
        result.outcome.target_stopped = Some(format!("{stopped:?}"));
        let freed = wait_port_free(http.addr).await;
        result.outcome.port_freed = Some(freed);
        if !freed {
            progress.say(&format!(
                "warning: port {} is still in use after the target stopped, {}",
                http.addr.port(),
                port::describe_holders(http.addr.port())
            ));
        }
    }
    progress.say(&format!("done in {:.2} s", started.elapsed().as_secs_f64()));
    emit(&props, &result)?;
    if let Some(error) = &result.outcome.error {
        eprintln!("error: {error}");
    }
    let load_failed = result
        .routes
        .iter()
        .any(|r| r.cycles.iter().any(|c| c.load.successes() == 0));
    if load_failed {
        eprintln!(
            "error: a route answered no request with 2xx in a cycle, so its memory figures prove \
             nothing; see the verdict above"
        );
    }
    Ok(if result.outcome.status != "complete" || load_failed {
        RunEnd::Failed
    } else if result.any_leak() {
        RunEnd::Leak
    } else {
        RunEnd::Clean
    })
}

fn outcome_of(measured: Option<anyhow::Result<()>>, target: Option<&mut Target>) -> Outcome {
    match measured {
        Some(Ok(())) => Outcome {
            status: "complete".into(),
            ..Outcome::default()
        },
        Some(Err(error)) => {
            let mut message = format!("{error:#}");
            let mut output = Vec::new();
            if let Some(target) = target {
                if let Some(status) = target.exit_status() {
                    let how = crate::target::describe_status(status);
                    message = format!("the target exited ({how}) during the run: {message}");
                }
                output = target.tail_lines();
            }
            Outcome {
                status: "failed".into(),
                error: Some(message),
                target_output: output,
                ..Outcome::default()
            }
        }
        None => {
            exit_on_second_interrupt();
            Outcome {
                status: "interrupted".into(),
                error: Some("interrupted by Ctrl-C; the readings so far are kept".into()),
                ..Outcome::default()
            }
        }
    }
}

async fn refuse_busy_port(addr: SocketAddr) -> anyhow::Result<()> {
    if accepts_connections(addr).await {
        bail!(
            "port {} on {} is already in use, {}: stop that process, or give --url the port your \
             server will listen on",
            addr.port(),
            addr.ip(),
            port::describe_holders(addr.port())
        );
    }
    Ok(())
}

/// Runs every route, (re)starting the target as `--fresh` asks. The target
/// lives in `slot` so the caller can stop it whatever happens here.
async fn measure(
    slot: &mut Option<Target>,
    props: &RunProps,
    http: &HttpTarget,
    routes: &[String],
    result: &mut RunResult,
    progress: &Progress,
) -> anyhow::Result<()> {
    let plan = cycle_plan(props, http);
    let mut probe: Option<Box<dyn Probe>> = None;
    for (index, route) in routes.iter().enumerate() {
        if props.fresh && index > 0 && slot.is_some() {
            restart_pause(slot, http.addr, progress).await?;
            probe = None;
        }
        let probe = match &mut probe {
            Some(probe) => probe,
            None => {
                if !props.command.is_empty() {
                    launch(slot, props, http, progress).await?;
                    result.target.pid = slot.as_ref().map(|t| t.pid);
                }
                probe.insert(connect_probe(slot.as_mut(), props, http, result).await?)
            }
        };
        let pid = slot.as_ref().map(|t| t.pid);
        result.routes.push(RouteResult {
            route: route.clone(),
            pid,
            ..RouteResult::default()
        });
        let into = result.routes.last_mut().expect("just pushed");
        run_route(probe.as_mut(), &plan, into, progress)
            .await
            .with_context(|| format!("route {route}"))?;
    }
    Ok(())
}

async fn launch(
    slot: &mut Option<Target>,
    props: &RunProps,
    http: &HttpTarget,
    progress: &Progress,
) -> anyhow::Result<()> {
    progress.say(&format!("starting `{}`", props.command.join(" ")));
    let target = slot.insert(Target::launch(&LaunchSpec {
        command: props.command.clone(),
        grace: props.grace,
    })?);
    target.wait_ready(http.addr, props.ready_timeout).await?;
    Ok(())
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
            port::describe_holders(addr.port())
        );
    }
    Ok(())
}

async fn connect_probe(
    target: Option<&mut Target>,
    props: &RunProps,
    http: &HttpTarget,
    result: &mut RunResult,
) -> anyhow::Result<Box<dyn Probe>> {
    if let Some(base) = &props.endpoints {
        result.target.probe = "endpoints".into();
        return Ok(Box::new(EndpointsProbe::new(http.addr, base)));
    }
    let target = target.context("the inspector probe needs a launched target")?;
    let url = target.inspector_url(http.addr, INSPECTOR_ANNOUNCE).await?;
    let inspector = Inspector::connect(&url).await?;
    let probe = InspectorProbe::new(inspector, props.counters.clone());
    result.target.node_version = probe.node_version().await.ok();
    result.target.probe = "inspector".into();
    Ok(Box::new(probe))
}

fn cycle_plan(props: &RunProps, http: &HttpTarget) -> CyclePlan {
    let request = RequestSpec {
        method: props.request.method.clone(),
        path: http.path.clone(),
        headers: props.request.headers.clone(),
        body: props.request.body.clone(),
        weight: 1,
    };
    CyclePlan {
        cycles: props.cycles,
        load: LoadPlan {
            addr: http.addr,
            host: http.host.clone(),
            requests: vec![request.clone()],
            connections: props.connections,
            stop: Stop::Requests(props.requests),
            rate: None,
            timeout: props.request.timeout,
        },
        request,
        verdict: Options {
            max_retained: props.max_retained,
        },
    }
}

fn new_result(props: &RunProps, routes: &[String]) -> RunResult {
    RunResult {
        schema_version: SCHEMA_VERSION,
        leakcheck_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at_unix_s: SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        target: TargetInfo {
            command: props.command.clone(),
            pid: None,
            probe: String::new(),
            node_version: None,
            url: props.url.clone(),
        },
        settings: Settings {
            cycles: props.cycles,
            requests_per_cycle: props.requests,
            connections: props.connections,
            routes: routes.to_vec(),
            method: props.request.method.clone(),
            fresh: props.fresh && !props.command.is_empty(),
            max_retained_bytes_per_request: props.max_retained,
        },
        routes: Vec::new(),
        outcome: Outcome::default(),
    }
}

/// After a first Ctrl-C leakcheck cleans up; a second one exits at once
/// (the target still dies: it was started with a parent-death signal).
fn exit_on_second_interrupt() {
    tokio::spawn(async {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("interrupted again: exiting now");
            std::process::exit(2);
        }
    });
}

async fn wait_port_free(addr: SocketAddr) -> bool {
    let started = Instant::now();
    while started.elapsed() < PORT_RELEASE {
        if !accepts_connections(addr).await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Terminal table on stdout (stderr when the JSON takes stdout), JSON where asked.
fn emit(props: &RunProps, result: &RunResult) -> anyhow::Result<()> {
    let table = TerminalExporter.render(result)?;
    if props.json.as_deref() == Some("-") {
        eprint!("{table}");
    } else {
        print!("{table}");
    }
    if let Some(path) = &props.json {
        write_output(path, &JsonExporter.render(result)?)?;
    }
    Ok(())
}
