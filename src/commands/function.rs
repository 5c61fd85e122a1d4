//! `leakcheck fn MODULE#EXPORT`: the harness started (`crate::function`),
//! the module loaded, the method's loop over its calls (`cycle::run_route`,
//! as for a route), the diagnosis on retention, `--teardown`, and the same
//! result, reports and exit codes as `run`. The harness is stopped by PID
//! on every path, Ctrl-C included, and its file removed with its folder.

use anyhow::Context;

use super::frame::{Frame, RunEnd};
use crate::cycle::{LoopPlan, run_route};
use crate::diagnosis::{DiagnosisProps, diagnose_route, wants_diagnosis};
use crate::function::{FunctionCalls, HARNESS};
use crate::inspector::Inspector;
use crate::model::{RouteResult, RunResult, SequentialSettings, Settings, TargetInfo, Unit};
use crate::probe::InspectorProbe;
use crate::process::{LaunchSpec, Target};
use crate::report::progress::Progress;
use crate::settings::FnProps;
use crate::verdict::{Noise, Options};

pub async fn run(props: FnProps) -> anyhow::Result<RunEnd> {
    let frame = Frame::open(
        &props.output,
        props.snapshots.as_deref(),
        props.quiet,
        false,
    )?
    .counting_calls();
    // The harness's file lives in a private folder removed with it.
    let folder = tempfile::Builder::new()
        .prefix("leakcheck-fn-")
        .tempdir()
        .context("cannot create a private folder for the function harness")?;
    let harness = folder.path().join("harness.mjs");
    std::fs::write(&harness, HARNESS).context("cannot write the function harness")?;
    let mut result = new_result(&props);
    let mut slot: Option<Target> = None;
    let (faults, mut fault) = tokio::sync::watch::channel(None::<String>);
    let work = measure(
        &mut slot,
        &props,
        &harness,
        &mut result,
        &frame.progress,
        faults,
    );
    let measured = frame.guard(work, Some(&mut fault)).await;
    let stopped = frame.stop(slot.as_mut(), "the function harness").await;
    frame.record(&mut result, measured, slot.as_ref(), stopped);
    drop(folder);
    frame.close(result)
}

/// The loop's plan for calls: the server's noise and budget, counted in calls.
fn loop_plan(props: &FnProps) -> LoopPlan {
    LoopPlan {
        cycles: props.cycles,
        verdict: Options {
            max_retained: props.max_retained,
            unit: Unit::Call,
            resolution: Some(props.resolution),
            noise: Noise::Process,
            ..Options::default()
        },
        loop_stats: true,
        sequential: props.sequential,
        stall_timeout: props.timeout,
        reading_timeout: props.inspector_timeout,
        counters: false,
        peak: true,
        memory_limit: None,
        cycle_time: props.cycle_time,
        deadline: None,
    }
}

async fn measure(
    slot: &mut Option<Target>,
    props: &FnProps,
    harness: &std::path::Path,
    result: &mut RunResult,
    progress: &Progress,
    faults: tokio::sync::watch::Sender<Option<String>>,
) -> anyhow::Result<()> {
    let mut command = vec![props.node.clone()];
    // Deno's harness reads the environment and the module under check.
    if crate::runtime::Runtime::of_program(&props.node) == crate::runtime::Runtime::Deno {
        command.extend(["run".to_string(), "--allow-all".to_string()]);
    }
    command.extend(props.node_flags.iter().cloned());
    command.push(harness.display().to_string());
    let mut env = vec![
        ("LEAKCHECK_FN_MODULE".to_string(), props.module.clone()),
        ("LEAKCHECK_FN_EXPORT".to_string(), props.export.clone()),
    ];
    env.extend(
        props
            .setup
            .clone()
            .map(|s| ("LEAKCHECK_FN_SETUP".to_string(), s)),
    );
    env.extend(
        props
            .teardown
            .clone()
            .map(|s| ("LEAKCHECK_FN_TEARDOWN".to_string(), s)),
    );
    progress.say(&format!("loading {} in a harness", props.name()));
    let target = slot.insert(Target::launch(&LaunchSpec {
        command,
        grace: props.grace,
        faults: Some(faults),
        node: true,
        node_flags: Vec::new(),
        env,
    })?);
    result.target.pid = Some(target.pid);
    result.target.command = target.command.clone();
    let url = target
        .first_announced(props.ready_timeout)
        .await
        .context("the harness's Node process did not open its inspector")?;
    let expected = crate::runtime::Runtime::of_program(&props.node);
    let (inspector, identified) =
        crate::runtime::identify(Inspector::connect(&url).await?, expected).await;
    crate::function::wait_loaded(&inspector, props.ready_timeout).await?;
    result.target.node_version = identified.node_version();
    if identified.runtime != crate::runtime::Runtime::Node {
        result.target.runtime = Some(identified.label());
        result.target.runtime_gaps = identified.runtime.gaps();
    }
    result.target.probe = Some(crate::model::ProbeKind::Inspector);
    let mut probe = InspectorProbe::new(inspector.clone(), Vec::new()).on(identified.runtime);
    result.routes.push(RouteResult {
        route: props.name(),
        pid: result.target.pid,
        ..RouteResult::default()
    });
    let into = result.routes.last_mut().expect("just pushed");
    let mut calls = FunctionCalls {
        inspector: inspector.clone(),
        calls_per_cycle: props.calls,
        concurrency: props.concurrency,
        timeout: props.timeout,
    };
    run_route(&mut probe, &loop_plan(props), &mut calls, into, progress)
        .await
        .with_context(|| props.name())?;
    if wants_diagnosis(props.diagnose, into, &probe) {
        let diagnosis = DiagnosisProps {
            snapshots_dir: props.snapshots.as_deref(),
            owns_target: true,
            unit: Unit::Call,
            noise: crate::verdict::Noise::Process,
            resolution: None,
            progress,
        };
        diagnose_route(&mut probe, &mut calls, into, diagnosis).await;
    }
    if props.teardown.is_some() {
        crate::function::teardown(&inspector, props.timeout)
            .await
            .context("--teardown")?;
    }
    Ok(())
}

fn new_result(props: &FnProps) -> RunResult {
    RunResult::starting(
        TargetInfo {
            url: props.name(),
            ..TargetInfo::default()
        },
        Settings {
            cycles: props.cycles,
            requests_per_cycle: props.calls,
            cycle_time_s: props.cycle_time.map(|t| t.as_secs_f64()),
            connections: props.concurrency as usize,
            routes: vec![props.name()],
            method: "call".into(),
            fresh: false,
            max_retained_bytes_per_request: props.max_retained,
            unit: Unit::Call,
            sequential: props.sequential.map(|seq| SequentialSettings {
                cycle_requests: props.calls,
                resolution_bytes_per_request: seq.resolution,
                max_requests: u64::from(seq.max_cycles) * props.calls,
            }),
            ..Settings::default()
        },
    )
}
