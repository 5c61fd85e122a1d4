//! What a run will do, built once from its props: the cycle plan (the
//! load of a cycle, its unit of work, the verdict's options, the external
//! driver) and the result it fills, with the settings it reports.

use std::sync::Arc;

use crate::cycle::driver_log::LogDir;
use crate::cycle::{CyclePlan, LoadCommand, LoopPlan};
use crate::load::{LoadPlan, RequestSpec, Scenario, Stop};
use crate::model::{RunResult, SequentialSettings, Settings, SoakSettings, TargetInfo, Unit};
use crate::net::HttpTarget;
use crate::settings::{RunSettings, SoakProps};
use crate::verdict::{Noise, Options};

pub(super) fn cycle_plan(
    props: &RunSettings,
    http: &HttpTarget,
    scenario: Option<Arc<Scenario>>,
) -> anyhow::Result<CyclePlan> {
    use anyhow::Context;
    let log_dir = match (&props.load.load_cmd, &props.load.driver_logs) {
        (None, _) => None,
        (Some(_), Some(dir)) => {
            crate::private_file::private_dir(dir)
                .with_context(|| format!("--driver-logs {} cannot be used", dir.display()))?;
            Some(LogDir::Kept(dir.clone()))
        }
        (Some(_), None) => Some(
            LogDir::temporary().context("cannot create a private folder for --load-cmd's logs")?,
        ),
    };
    let unit = if scenario.is_some() {
        Unit::Iteration
    } else {
        Unit::Request
    };
    let request = RequestSpec {
        method: props.load.request.method.clone(),
        path: http.path.clone(),
        headers: props.load.request.headers.clone(),
        body: props.load.request.body.clone(),
        weight: 1,
    };
    Ok(CyclePlan {
        looped: LoopPlan {
            // A soak's cycles end with its load.
            cycles: match props.load.soak {
                Some(_) => u32::MAX,
                None => props.load.cycles,
            },
            verdict: Options {
                max_retained: props.method.max_retained,
                proc_only: false,
                fixed_request: scenario_free_and_fixed(props),
                unit,
                soak: props.load.soak.is_some(),
                resolution: Some(props.load.resolution),
                noise: Noise::Process,
                limits: Default::default(),
                max_peak: props.method.max_peak,
            },
            loop_stats: props.method.loop_stats,
            sequential: props.load.sequential,
            stall_timeout: props.load.request.timeout,
            reading_timeout: props.target.inspector_timeout,
            counters: !props.target.counters.is_empty(),
            peak: props.method.peak,
            memory_limit: props.method.memory_limit,
            // A soak's intervals are its time; --load-cmd ends its cycles
            // itself.
            cycle_time: props
                .load
                .cycle_time
                .filter(|_| props.load.soak.is_none() && props.load.load_cmd.is_none()),
            deadline: None,
        },
        load: LoadPlan {
            addr: http.addr,
            host: http.host.clone(),
            requests: vec![request.clone()],
            connections: props.load.connections,
            stop: Stop::Requests(props.load.requests),
            rate: None,
            timeout: props.load.request.timeout,
            scenario,
            abort: props.load.request.abort,
        },
        request,
        load_cmd: props
            .load
            .load_cmd
            .as_ref()
            .zip(log_dir)
            .map(|(command, log_dir)| LoadCommand {
                command: command.clone(),
                base_url: format!("http://{}", http.host),
                log_dir,
            }),
        routes: Vec::new(),
    })
}

/// Whether the requests are the same bytes apart from the route (no
/// template in headers or body, no scenario, no external driver); the
/// cycle runner adds the route's own check.
fn scenario_free_and_fixed(props: &RunSettings) -> bool {
    props.load.request.scenario.is_none()
        && props.load.load_cmd.is_none()
        && props.load.request.fixed_headers_and_body
}

/// Settled readings a soak takes: one per interval, the last at the end.
pub(super) fn soak_readings(soak: &SoakProps) -> u32 {
    (soak.duration.as_secs_f64() / soak.every.as_secs_f64()).ceil() as u32
}

pub(super) fn new_result(props: &RunSettings, routes: &[String], plan: &CyclePlan) -> RunResult {
    RunResult::starting(
        TargetInfo {
            command: props.target.command.clone(),
            pid: None,
            probe: None,
            node_version: None,
            url: crate::net::redacted(&props.target.url),
            cwd: None,
            ..TargetInfo::default()
        },
        Settings {
            cycles: match &props.load.soak {
                Some(soak) => soak_readings(soak),
                None => props.load.cycles,
            },
            // A soak's intervals are measured in time, not in requests.
            requests_per_cycle: if props.load.soak.is_some() {
                0
            } else {
                props.load.requests
            },
            cycle_time_s: plan.looped.cycle_time.map(|t| t.as_secs_f64()),
            connections: props.load.connections,
            routes: routes.to_vec(),
            method: props.load.request.method.clone(),
            fresh: props.target.fresh && !props.target.command.is_empty(),
            max_retained_bytes_per_request: props.method.max_retained,
            unit: plan.looped.verdict.unit,
            scenario: plan.load.scenario.as_ref().map(|s| s.source.clone()),
            load_cmd: props.load.load_cmd.as_deref().map(crate::redact::command),
            abort: (props.load.request.abort > 0.0).then_some(props.load.request.abort),
            soak: props.load.soak.as_ref().map(|soak| SoakSettings {
                duration_s: soak.duration.as_secs_f64(),
                every_s: soak.every.as_secs_f64(),
                rate: soak.rate,
            }),
            watch: None,
            sequential: props.load.sequential.map(|seq| SequentialSettings {
                cycle_requests: props.load.requests,
                resolution_bytes_per_request: seq.resolution,
                max_requests: u64::from(seq.max_cycles) * props.load.requests,
            }),
            discovery: None,
            shard: None,
            invocation: None,
        },
    )
}
