//! The diagnosis step of a run: whether a route wants it, and running it
//! so that a failure becomes a finding rather than a failed run.

use crate::cli::RunProps;
use crate::cycle::CyclePlan;
use crate::model::{Finding, FindingKind, RouteResult};
use crate::probe::Probe;
use crate::report::progress::Progress;

/// Whether a route's verdict asks for the holder, and the probe can tell.
pub(super) fn wants_diagnosis(props: &RunProps, route: &RouteResult, probe: &dyn Probe) -> bool {
    let retains = route.verdict.as_ref().is_some_and(|v| v.kind.is_leak());
    props.diagnose && retains && probe.inspector().is_some()
}

/// Runs the diagnosis for a route; a failure becomes a finding, not a
/// failed run: the measurements stand without it.
pub(super) async fn diagnose_route(
    probe: &mut dyn Probe,
    plan: &CyclePlan,
    into: &mut RouteResult,
    props: &RunProps,
    progress: &Progress,
) {
    let load = crate::cycle::route_load(plan, &into.route);
    let work = Box::pin(async move {
        let report = crate::load::LoadRun::start(load).finish().await;
        report
            .map(|r| r.requests)
            .map_err(|e| format!("{:#}", anyhow::Error::new(e)))
    });
    let owns_target = !props.command.is_empty();
    let unit = plan.verdict.unit;
    diagnose_with(
        probe,
        work,
        into,
        props.snapshots.as_deref(),
        owns_target,
        unit,
        progress,
    )
    .await;
}

/// Runs the diagnosis with `work` as its extra cycle (a load, or a page's
/// iterations) and records it, or its failure as a finding.
pub(super) async fn diagnose_with(
    probe: &mut dyn Probe,
    work: crate::diagnose::ExtraCycle<'_>,
    into: &mut RouteResult,
    snapshots_dir: Option<&std::path::Path>,
    owns_target: bool,
    unit: crate::model::Unit,
    progress: &Progress,
) {
    let label = crate::diagnose::file_label(&into.route);
    let say = |message: &str| progress.say(&format!("{}: diagnosis: {message}", into.route));
    let diagnose_plan = crate::diagnose::DiagnosePlan {
        work,
        snapshots_dir,
        label,
        owns_target,
        isolate: crate::verdict::isolates::to_diagnose(into).map(|i| i.id.clone()),
    };
    match crate::diagnose::diagnose(probe, diagnose_plan, &say).await {
        Ok(diagnosis) => {
            if let Some(verdict) = into.verdict.as_mut()
                && let Some(action) =
                    crate::verdict::action::after_diagnosis(&diagnosis, unit.name())
            {
                verdict.action = action;
            }
            into.diagnosis = Some(diagnosis);
        }
        Err(error) => {
            if let Some(verdict) = into.verdict.as_mut() {
                verdict.findings.push(Finding::new(
                    FindingKind::DiagnosisFailed,
                    format!("naming the holder failed: {:#}", anyhow::Error::new(error)),
                ));
            }
        }
    }
}
