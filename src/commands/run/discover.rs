//! The run's routes when none is given: the target started (it is the
//! first route's target, so no process is started for nothing), its
//! routes found (`crate::routes::find`), each sent its first requests, the
//! ones that only err skipped with their reason, and the run's length
//! estimated before the first is measured.

use crate::cycle::CyclePlan;
use crate::model::{FoundRoute, RouteDiscovery, RunResult, SkippedRoute};
use crate::probe::Probe;
use crate::routes::find::{Found, Reach, find};
use crate::routes::first_requests;
use crate::session::Session;

/// Seconds a route costs besides its requests: a fresh target's start,
/// the settled readings (a forced collection each), the verdict. Measured
/// on the demo: 1.5 to 3 s a route for a clean route decided at the auto
/// budget on this machine.
const ROUTE_OVERHEAD_S: f64 = 3.0;

/// The routes to check, and the probe of the target started to find
/// them (the first route's).
pub(super) async fn routes_to_check(
    session: &mut Session<'_>,
    plan: &mut CyclePlan,
    given: Vec<String>,
    result: &mut RunResult,
) -> anyhow::Result<(Vec<String>, Option<Box<dyn Probe>>)> {
    let settings = session.settings;
    let Some(discovery) = &settings.load.discovery else {
        return Ok((given, None));
    };
    if session.launches() {
        session.launch().await?;
        result.target.pid = session.target().map(|t| t.pid);
    }
    let probe = session.probe(result).await?;
    let reach = Reach {
        inspector: probe.inspector(),
        command: &settings.target.command,
    };
    let Some(found) = find(discovery, reach).await? else {
        session.progress.say(&format!(
            "no route source found (no --openapi, no Next.js build, no known router in the app): \
             checking {} alone; give --route, or --openapi",
            given.join(", ")
        ));
        return Ok((given, Some(probe)));
    };
    let report = first_answers(session, plan, &found).await;
    let names: Vec<String> = report.checked.iter().map(|r| r.name.clone()).collect();
    if names.is_empty() {
        anyhow::bail!(
            "none of the {} routes found ({}) can be checked: {}",
            found.declared,
            found.origin,
            report
                .skipped
                .iter()
                .map(|s| format!("{} {}: {}", s.method, s.pattern, s.reason))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    plan.routes = found
        .plan
        .routes
        .into_iter()
        .filter(|r| names.contains(&r.name))
        .collect();
    result.settings.routes = names.clone();
    result.settings.discovery = Some(report);
    Ok((names, Some(probe)))
}

/// Sends every found route its first requests: the ones that only err
/// are skipped, a redirect is noted, and the pace makes the estimate.
async fn first_answers(session: &Session<'_>, plan: &CyclePlan, found: &Found) -> RouteDiscovery {
    let progress = session.progress;
    let request = &plan.request;
    let timeout = plan.load.timeout;
    let mut report = RouteDiscovery {
        source: found.source.name().to_string(),
        origin: found.origin.clone(),
        declared: found.declared as u64,
        skipped: found
            .plan
            .skipped
            .iter()
            .map(|s| SkippedRoute {
                method: s.method.clone(),
                pattern: s.pattern.clone(),
                reason: s.reason.clone(),
            })
            .collect(),
        ..RouteDiscovery::default()
    };
    progress.say(&format!(
        "routes: {} declared by {} ({}); sending each its first {} requests",
        found.declared,
        found.origin,
        found.source.name(),
        first_requests::FIRST_REQUESTS
    ));
    let mut seconds_per_request = Vec::new();
    for route in &found.plan.routes {
        let answers = first_requests::send(
            session.http.addr,
            &session.http.host,
            route,
            &request.method,
            &request.headers,
            timeout,
        )
        .await;
        let method = route.method_or(&request.method).to_string();
        let pattern = route.pattern.clone().unwrap_or_else(|| route.path.clone());
        if let Some(reason) = answers.skip_reason() {
            progress.say(&format!("routes: skipping {method} {pattern}: {reason}"));
            report.skipped.push(SkippedRoute {
                method,
                pattern,
                reason,
            });
            continue;
        }
        seconds_per_request.push(answers.seconds);
        report.checked.push(FoundRoute {
            name: route.name.clone(),
            method,
            pattern,
            path: route.path.clone(),
            note: answers.redirect(),
            pace_s: Some(answers.seconds),
        });
    }
    // Side by side (`-j`), the routes' time is shared by the workers.
    let jobs = session
        .settings
        .load
        .jobs
        .clamp(1, report.checked.len().max(1));
    report.estimate_s = estimate(plan, &seconds_per_request).map(|s| s / jobs as f64);
    if let Some(seconds) = report.estimate_s {
        progress.say(&format!(
            "routes: checking {} of {} ({} skipped), about {} in all{}",
            report.checked.len(),
            found.declared,
            report.skipped.len(),
            crate::units::human_duration(seconds),
            if jobs > 1 {
                format!(" ({jobs} side by side)")
            } else {
                String::new()
            }
        ));
    }
    report
}

/// The run's length: each route's requests at its first requests' pace
/// over the run's connections (the most a route sends: the auto budget,
/// or the fixed cycles'), plus its overhead. An upper bound for a clean
/// route `--cycles auto` decides early.
fn estimate(plan: &CyclePlan, seconds_per_request: &[f64]) -> Option<f64> {
    if seconds_per_request.is_empty() {
        return None;
    }
    let requests = match plan.looped.sequential {
        Some(sequential) => sequential.max_units as f64,
        None => {
            let per_cycle = match plan.load.stop {
                crate::load::Stop::Requests(n) => n as f64,
                crate::load::Stop::Duration(d) => {
                    return Some(d.as_secs_f64() * seconds_per_request.len() as f64);
                }
            };
            per_cycle * f64::from(plan.looped.cycles)
        }
    };
    let connections = plan.load.connections.max(1) as f64;
    Some(
        seconds_per_request
            .iter()
            .map(|s| requests * s / connections + ROUTE_OVERHEAD_S)
            .sum(),
    )
}

/// `--shard I/N`: the part of `routes` this runner checks (see
/// `crate::routes::shard` for the rule), recorded in the result with the
/// whole list the merge checks the shards against.
pub(super) fn this_shard(
    shard: Option<crate::routes::shard::Shard>,
    routes: Vec<String>,
    plan: &mut CyclePlan,
    result: &mut RunResult,
    progress: &crate::report::progress::Progress,
) -> Vec<String> {
    let Some(shard) = shard else {
        return routes;
    };
    let mut shards = crate::routes::shard::split(&paced(&routes, result), shard.count);
    let kept = std::mem::take(&mut shards[shard.index as usize - 1]);
    progress.say(&format!(
        "shard {}/{}: {} of the {} routes{}",
        shard.index,
        shard.count,
        kept.len(),
        routes.len(),
        if kept.is_empty() {
            " (more shards than routes): nothing to check here"
        } else {
            ""
        }
    ));
    if !plan.routes.is_empty() {
        plan.routes.retain(|r| kept.contains(&r.name));
    }
    result.settings.routes = kept.clone();
    result.settings.shard = Some(crate::model::ShardInfo {
        index: shard.index,
        count: shard.count,
        all_routes: routes,
    });
    kept
}

/// Each route with the pace its first requests showed, when they were
/// sent (found routes; a listed one has none): what the shards, `-j` and
/// `--max-time` weigh routes by.
pub(super) fn paced(routes: &[String], result: &RunResult) -> Vec<(String, Option<f64>)> {
    let discovery = result.settings.discovery.as_ref();
    routes
        .iter()
        .map(|r| (r.clone(), discovery.and_then(|d| d.pace_of(r))))
        .collect()
}
