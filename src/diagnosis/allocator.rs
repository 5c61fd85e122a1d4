//! The allocator A/B: rss that grows in malloc's heap while no native
//! stack keeps memory in proportion to the work is what glibc's allocator
//! does under threads (an arena per thread, freed chunks it does not give
//! back), not a leak. The route's whole check is rerun in a fresh process
//! under each other setting; if the growth goes away under one, the
//! verdict is allocator fragmentation, with the setting that fixed it.
//!
//! Whole, not just as many cycles as were measured: tried in session 18,
//! four fixed cycles under `MALLOC_ARENA_MAX=2` still showed the arenas'
//! first growth on zlib's threadpool (Node 24), the trial read "still
//! grows", and a route that keeps nothing was called `off-heap-retention`.

use crate::cycle::{CyclePlan, run_route};
use crate::model::{AllocatorSetting, AllocatorTrial, RouteResult, Series, VerdictKind};
use crate::session::{Fresh, Session};

/// Debian's and Ubuntu's `libjemalloc2`.
const JEMALLOC: &str = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";

/// The settings tried, in order: fewer glibc arenas (what most "rss grows
/// under the threadpool" reports are fixed by), then another allocator.
fn settings() -> Vec<(String, String)> {
    let mut settings = vec![("MALLOC_ARENA_MAX".to_string(), "2".to_string())];
    if std::path::Path::new(JEMALLOC).exists() {
        settings.push(("LD_PRELOAD".to_string(), JEMALLOC.to_string()));
    }
    settings
}

/// Reruns the route's check under each setting until one stops the growth.
pub async fn trial(
    session: &mut Session<'_>,
    plan: &CyclePlan,
    measured: &RouteResult,
) -> anyhow::Result<AllocatorTrial> {
    let route = measured.route.as_str();
    let mut trial = AllocatorTrial::default();
    for (name, value) in settings() {
        let setting = format!("{name}={value}");
        session.restart().await?;
        session.progress.say(&format!(
            "{route}: allocator A/B: the check again with {setting}"
        ));
        let fresh = Fresh {
            node_flags: Vec::new(),
            env: vec![(name, value)],
        };
        session.launch_fresh(fresh).await?;
        let mut probe = session.fresh_probe().await?;
        let mut workload = plan.workload(route, None, crate::probe::Probe::inspector(&probe));
        let mut rerun = RouteResult {
            route: route.to_string(),
            ..RouteResult::default()
        };
        run_route(
            &mut probe,
            &plan.looped,
            workload.as_mut(),
            &mut rerun,
            &crate::cycle::Silent,
        )
        .await?;
        let verdict = rerun.verdict.as_ref();
        let still_grows = verdict.is_none_or(|v| v.kind.is_leak());
        // Clean by the verdict's own rule, not merely not proven: an
        // inconclusive rerun fixes nothing.
        let clean = verdict
            .is_some_and(|v| matches!(v.kind, VerdictKind::NoRetention | VerdictKind::WorkingSet));
        let rss = verdict
            .and_then(|v| v.fit(&Series::RSS))
            .map_or(0.0, |f| f.slope_bytes_per_request);
        trial.trials.push(AllocatorSetting {
            setting: setting.clone(),
            rss_bytes_per_unit: rss,
            still_grows,
        });
        if clean {
            trial.fixed_by = Some(setting);
            break;
        }
    }
    Ok(trial)
}
