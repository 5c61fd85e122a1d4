//! The diagnosis in a fresh process of the target: for a route whose
//! target died of its leak, or is past a brake point under its limit
//! (half of the heap limit), where two heap snapshots (each pauses the
//! process and costs about its heap again) would kill it. The fresh process gets one small warm-up cycle of the
//! route's own work, then the same diagnosis as ever, with a cycle sized
//! to the growth already measured (`route.rs`).

use crate::cycle::{CyclePlan, CycleSpec, Silent};
use crate::model::RouteResult;
use crate::session::{Fresh, Session};

use super::route::{DiagnosisProps, diagnose_route};

/// The fresh process's warm-up: enough units to compile the route's code
/// and fill its lazy caches, few enough to leave the heap near empty.
const WARM_UP_UNITS: u64 = 8;

pub async fn diagnose_fresh(
    session: &mut Session<'_>,
    plan: &CyclePlan,
    into: &mut RouteResult,
) -> anyhow::Result<()> {
    session.restart().await?;
    session.progress.say(&format!(
        "{}: diagnosis: in a fresh process of the target (the measured one died of memory, is \
         past a brake point under its limit, or has a large heap)",
        into.route
    ));
    session.launch_fresh(Fresh::default()).await?;
    let mut probe = session.fresh_probe().await?;
    let inspector = crate::probe::Probe::inspector(&probe).cloned();
    let mut workload = plan.workload(&into.route, None, inspector.as_ref());
    let warm_up = CycleSpec {
        most_units: Some(WARM_UP_UNITS),
        time: Some(crate::diagnosis::route::DIAGNOSIS_CYCLE_TIME),
        ..CycleSpec::measured(1)
    };
    workload.drive(warm_up, &Silent).await?;
    let props = DiagnosisProps {
        snapshots_dir: session.settings.method.snapshots.as_deref(),
        owns_target: true,
        unit: plan.looped.verdict.unit,
        noise: plan.looped.verdict.noise,
        resolution: plan.looped.verdict.resolution,
        progress: session.progress,
    };
    diagnose_route(&mut probe, workload.as_mut(), into, props).await;
    drop(probe);
    session.stop().await;
    Ok(())
}
