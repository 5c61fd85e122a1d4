//! `leakcheck run`: launch the target, check each route in cycles, stop the
//! target, report. Whatever happens after launch (an error, the target
//! dying, Ctrl-C), the target is stopped and the readings taken so far are
//! reported.

use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};

use crate::cli::RunProps;
use crate::cycle::{CyclePlan, run_route};
use crate::inspector::Inspector;
use crate::load::{LoadPlan, RequestSpec, Stop};
use crate::model::{Outcome, RouteResult, RunResult, SCHEMA_VERSION, Settings, TargetInfo};
use crate::net::{HttpTarget, accepts_connections, resolve_http};
use crate::probe::InspectorProbe;
use crate::report::progress::Progress;
use crate::report::{Exporter, JsonExporter, TerminalExporter, write_output};
use crate::target::{LaunchSpec, Target, port};

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
    refuse_busy_port(http.addr).await?;

    let progress = Progress::new(props.quiet);
    let mut result = new_result(&props, &routes);
    progress.say(&format!("starting `{}`", props.command.join(" ")));
    let mut target = Target::launch(&LaunchSpec {
        command: props.command.clone(),
        grace: props.grace,
    })?;
    result.target.pid = Some(target.pid);

    let started = Instant::now();
    let measured = {
        let work = measure(&mut target, &props, &http, &routes, &mut result, &progress);
        tokio::select! {
            outcome = work => Some(outcome),
            _ = tokio::signal::ctrl_c() => None,
        }
    };
    let outcome = match measured {
        Some(Ok(())) => Outcome {
            status: "complete".into(),
            ..Outcome::default()
        },
        Some(Err(error)) => {
            let mut message = format!("{error:#}");
            if let Some(status) = target.exit_status() {
                message = format!(
                    "the target exited ({}) during the run: {message}",
                    crate::target::describe_status(status)
                );
            }
            Outcome {
                status: "failed".into(),
                error: Some(message),
                target_output: target.tail_lines(),
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
    };
    result.outcome = outcome;
    progress.say(&format!("stopping the target (pid {})", target.pid));
    let stopped = target.stop().await;
    result.outcome.target_stopped = Some(format!("{stopped:?}"));
    result.outcome.port_freed = Some(wait_port_free(http.addr).await);
    if result.outcome.port_freed == Some(false) {
        progress.say(&format!(
            "warning: port {} is still in use after the target stopped, {}",
            http.addr.port(),
            port::describe_holders(http.addr.port())
        ));
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

async fn measure(
    target: &mut Target,
    props: &RunProps,
    http: &HttpTarget,
    routes: &[String],
    result: &mut RunResult,
    progress: &Progress,
) -> anyhow::Result<()> {
    target.wait_ready(http.addr, props.ready_timeout).await?;
    let url = target.inspector_url(http.addr, INSPECTOR_ANNOUNCE).await?;
    let inspector = Inspector::connect(&url).await?;
    let mut probe = InspectorProbe::new(inspector, Vec::new());
    result.target.node_version = probe.node_version().await.ok();
    let plan = cycle_plan(props, http);
    for route in routes {
        result.routes.push(RouteResult {
            route: route.clone(),
            ..RouteResult::default()
        });
        let into = result.routes.last_mut().expect("just pushed");
        run_route(&mut probe, &plan, into, progress)
            .await
            .with_context(|| format!("route {route}"))?;
    }
    Ok(())
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
            probe: "inspector".into(),
            node_version: None,
            url: props.url.clone(),
        },
        settings: Settings {
            cycles: props.cycles,
            requests_per_cycle: props.requests,
            connections: props.connections,
            routes: routes.to_vec(),
            method: props.request.method.clone(),
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
