//! The diagnosis step of `run`, `soak` and `page`: whether a route wants
//! it, and running it with one more cycle of the route's own workload (the
//! traffic that showed the leak: a POST sent by `--load-cmd`, a scenario,
//! a page's actions), so that a failure becomes a finding rather than a
//! failed run.

use crate::cycle::{CycleSpec, Silent, Workload};
use crate::model::{Finding, FindingKind, RouteResult, Unit};
use crate::probe::Probe;
use crate::report::progress::Progress;

/// Whether a route's verdict asks for the holder, and the probe can tell.
pub fn wants_diagnosis(enabled: bool, route: &RouteResult, probe: &dyn Probe) -> bool {
    let retains = route.verdict.as_ref().is_some_and(|v| v.kind.is_leak());
    enabled && retains && probe.inspector().is_some()
}

/// What the diagnosis needs besides the probe, the workload and the route.
pub struct DiagnosisProps<'a> {
    pub snapshots_dir: Option<&'a std::path::Path>,
    /// leakcheck started the target and will stop it.
    pub owns_target: bool,
    pub unit: Unit,
    pub progress: &'a Progress,
}

/// Runs the diagnosis for a route; a failure becomes a finding, not a
/// failed run: the measurements stand without it.
pub async fn diagnose_route(
    probe: &mut dyn Probe,
    workload: &mut dyn Workload,
    into: &mut RouteResult,
    props: DiagnosisProps<'_>,
) {
    // With `--cycles auto` the group of small cycles that decided: a small
    // leak was seen only over several.
    let scale = into
        .sequential
        .as_ref()
        .map_or(1, |s| u64::from(s.group_cycles.max(1)));
    let extra = CycleSpec {
        number: into.cycles.len() as u32 + 1,
        scale,
    };
    let work = Box::pin(async move {
        let done = workload.drive(extra, &Silent).await?;
        Ok(done.units)
    });
    let say = |message: &str| {
        props
            .progress
            .say(&format!("{}: diagnosis: {message}", into.route))
    };
    let plan = crate::diagnose::DiagnosePlan {
        work,
        snapshots_dir: props.snapshots_dir,
        label: crate::private_file::file_label(&into.route),
        owns_target: props.owns_target,
        isolate: crate::verdict::isolates::to_diagnose(into).map(|i| i.id.clone()),
    };
    match crate::diagnose::diagnose(probe, plan, &say).await {
        Ok(diagnosis) => {
            if let Some(verdict) = into.verdict.as_mut()
                && let Some(action) =
                    crate::verdict::action::after_diagnosis(&diagnosis, props.unit.name())
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
