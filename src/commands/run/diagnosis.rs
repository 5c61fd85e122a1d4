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
    let label = crate::diagnose::file_label(&into.route);
    let say = |message: &str| progress.say(&format!("{}: diagnosis: {message}", into.route));
    let diagnose_plan = crate::diagnose::DiagnosePlan {
        load,
        snapshots_dir: props.snapshots.as_deref(),
        label,
        owns_target: !props.command.is_empty(),
        isolate: crate::verdict::isolates::to_diagnose(into).map(|i| i.id.clone()),
    };
    match crate::diagnose::diagnose(probe, diagnose_plan, &say).await {
        Ok(diagnosis) => {
            if let Some(verdict) = into.verdict.as_mut()
                && let Some(action) = crate::verdict::action::after_diagnosis(&diagnosis)
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
