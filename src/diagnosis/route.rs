//! The diagnosis step of `run`, `soak` and `page`: whether a route wants
//! it, and running it with one more cycle of the route's own workload (the
//! traffic that showed the leak: a POST sent by `--load-cmd`, a scenario,
//! a page's actions), so that a failure becomes a finding rather than a
//! failed run.

use crate::cycle::{CycleSpec, Silent, Workload};
use crate::model::{Diagnosis, Finding, FindingKind, HolderKind, RouteResult, Unit, VerdictKind};
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
    /// How repeatable the route's readings are, and the resolution it is
    /// judged at (`None`: the defaults'): for the readings after a cap.
    pub noise: crate::verdict::Noise,
    pub resolution: Option<f64>,
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
        most_units: cycle_units(into),
        brake: None,
        time: Some(DIAGNOSIS_CYCLE_TIME),
    };
    let next_cycle = extra.number + 1;
    let driven = &mut *workload;
    let work = Box::pin(async move {
        let done = driven.drive(extra, &Silent).await?;
        Ok(done.units)
    });
    let say = |message: &str| {
        props
            .progress
            .say(&format!("{}: diagnosis: {message}", into.route))
    };
    let plan = crate::diagnosis::snapshots::DiagnosePlan {
        work,
        snapshots_dir: props.snapshots_dir,
        label: crate::private_file::file_label(&into.route),
        owns_target: props.owns_target,
        isolate: crate::verdict::isolates::to_diagnose(into).map(|i| i.id.clone()),
    };
    match crate::diagnosis::snapshots::diagnose(probe, plan, &say).await {
        Ok(diagnosed) => {
            let mut diagnosis =
                follow_collections(probe, workload, diagnosed, next_cycle, into, &say).await;
            let off_heap = into
                .verdict
                .as_ref()
                .is_some_and(|v| v.kind == VerdictKind::OffHeapRetention);
            if off_heap {
                keep_off_heap_holders(&mut diagnosis);
            }
            let over_time = into
                .verdict
                .as_ref()
                .is_some_and(|v| v.kind == VerdictKind::TimeGrowth);
            // A counter's growth (listeners on `process`) keeps its own
            // action unless the snapshots found the list it grows: a
            // runtime that keeps listeners natively (Bun) shows another
            // holder, which would be the wrong thing to fix.
            let counter_kept_elsewhere = into.verdict.as_ref().is_some_and(|v| {
                v.kind == VerdictKind::CounterGrowth
                    && !diagnosis
                        .holders
                        .first()
                        .is_some_and(|h| h.kind == crate::model::HolderKind::EventListenerList)
            });
            if let Some(verdict) = into.verdict.as_mut()
                && !counter_kept_elsewhere
                && let Some(action) = crate::verdict::action::after_diagnosis(
                    &diagnosis,
                    props.unit.name(),
                    over_time,
                )
            {
                verdict.action = action;
            }
            if let Some(verdict) = into.verdict.as_mut() {
                for missing in &diagnosis.missing {
                    verdict
                        .findings
                        .push(Finding::new(FindingKind::DiagnosisFailed, missing.clone()));
                }
            }
            let capped = diagnosis.collections.clone();
            into.diagnosis = Some(diagnosis);
            if super::after_cap::wants_after_cap(into, &capped) {
                say("every grown collection stopped at a cap: reading the heap after it");
                let resolution = props
                    .resolution
                    .unwrap_or_else(|| super::after_cap::default_resolution(props.noise));
                let judged = super::after_cap::AfterCap {
                    noise: props.noise,
                    resolution,
                    unit: props.unit,
                    cycle_time: DIAGNOSIS_CYCLE_TIME,
                };
                super::after_cap::judge_after_cap(
                    probe,
                    workload,
                    into,
                    &capped,
                    next_cycle + AFTER_FOLLOW_UP,
                    judged,
                )
                .await;
            }
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

/// The diagnosis' collections followed until decided (`collections.rs`'
/// rule), within `FOLLOW_UP_GROWTH` of new bytes at the route's measured
/// rate: a target already judged leaking is not run out of memory to
/// count a list. A follow-up that fails leaves them as they were, noted.
async fn follow_collections(
    probe: &mut dyn Probe,
    workload: &mut dyn Workload,
    diagnosed: crate::diagnosis::snapshots::Diagnosed,
    next_cycle: u32,
    route: &RouteResult,
    say: &dyn Fn(&str),
) -> Diagnosis {
    let mut diagnosis = diagnosed.diagnosis;
    if diagnosis.collections.is_empty() {
        return diagnosis;
    }
    let follow_up = crate::diagnosis::snapshots::FollowUp {
        candidates: diagnosis.collections.clone(),
        settled: diagnosed.settled,
        next_cycle,
        most_units: follow_up_units(route, DIAGNOSIS_FOLLOW_UP_SECONDS),
    };
    let inspector = diagnosed.inspector;
    match crate::diagnosis::snapshots::follow(&inspector, probe, workload, follow_up, say).await {
        Ok(check) => diagnosis.collections = check.collections,
        Err(error) => diagnosis.missing.push(format!(
            "the grown collections were not followed to a cap or past one ({:#})",
            anyhow::Error::new(error)
        )),
    }
    diagnosis
}

/// New bytes the collection follow-up may add at the route's rate.
const FOLLOW_UP_GROWTH: f64 = 3.0 * DIAGNOSIS_GROWTH;
/// Follow-up units when the route measured no bytes per unit: four times
/// the work measured. A collection gaining one entry per unit since the
/// start passes four times its first count after three, and the fourth
/// leaves room for the interval that sees a cap stop it.
const FOLLOW_UP_TIMES_MEASURED: u64 = 4;
/// And never fewer than this, so a short run can still pass 2 000
/// entries (with `AIM_PAST` and a confirming interval).
const MIN_FOLLOW_UP_UNITS: u64 = 3_000;

/// And never longer than this at the route's measured pace, in the
/// diagnosis: a slow route (a Next.js page at 450 requests a second) is
/// not held for minutes to count a list its verdict did not need.
pub const DIAGNOSIS_FOLLOW_UP_SECONDS: f64 = 10.0;
/// A page's collection check decides its verdict: it may take longer.
pub const CHECK_FOLLOW_UP_SECONDS: f64 = 60.0;

/// The most units the follow-up of a route's collections may spend, in
/// `seconds` at most at the route's measured pace.
pub fn follow_up_units(route: &RouteResult, seconds_allowed: f64) -> u64 {
    let measured: u64 = route.cycles.iter().map(|c| c.units).sum();
    let seconds: f64 = route.cycles.iter().map(|c| c.load.duration_s).sum();
    let mut by_work = (FOLLOW_UP_TIMES_MEASURED * measured).max(MIN_FOLLOW_UP_UNITS);
    if seconds > 0.0 && measured > 0 {
        let pace = measured as f64 / seconds;
        by_work = by_work.min((pace * seconds_allowed).ceil() as u64).max(1);
    }
    let per_unit = route
        .verdict
        .as_ref()
        .map(|v| &v.figure)
        .filter(|f| f.unit() == crate::model::Quantity::Bytes && f.bytes_per_request > 0.0)
        .map(|f| f.bytes_per_request);
    match per_unit {
        Some(bytes) => by_work.min((FOLLOW_UP_GROWTH / bytes).ceil() as u64),
        None => by_work,
    }
}

/// New objects the diagnosis' cycle should leave: a hundred times
/// heapUsed's 0.1 MB noise floor names the holder plainly, and keeps the
/// snapshots small whatever the leak (a 650 KB-per-request leak needs 16
/// requests, not 2 500; a 0.5 KB one 20 000, not a soak's 300 000).
const DIAGNOSIS_GROWTH: f64 = 10.0 * 1024.0 * 1024.0;
/// The fewest units the diagnosis' cycle sends.
const MIN_DIAGNOSIS_UNITS: u64 = 8;

/// The longest the diagnosis' extra cycle (and each of the collection
/// check's, the native recorder's) may run: a slow route or a function
/// that slows as it leaks would otherwise take its planned units' worth
/// of minutes. Four of the loop's default cycles: the snapshots name a
/// holder by the objects a cycle added, and a function slowed to 20
/// calls a second still adds hundreds of them (its 30 s cycle added
/// 944 closures where the holder needs a few).
/// Cycle numbers the collection follow-up may use after the diagnosis'
/// cycle; the readings after a cap are numbered past them.
const AFTER_FOLLOW_UP: u32 = 100;

pub const DIAGNOSIS_CYCLE_TIME: std::time::Duration = std::time::Duration::from_secs(20);

/// The most units the diagnosis' cycle needs, from the bytes per unit the
/// verdict measured: `None` (the planned cycle) for a counted figure or
/// no growth.
pub fn cycle_units(route: &RouteResult) -> Option<u64> {
    let figure = &route.verdict.as_ref()?.figure;
    if figure.unit() != crate::model::Quantity::Bytes || figure.bytes_per_request <= 0.0 {
        return None;
    }
    let units = (DIAGNOSIS_GROWTH / figure.bytes_per_request).ceil();
    Some((units as u64).max(MIN_DIAGNOSIS_UNITS))
}

/// Classes whose objects own memory outside the V8 heap: an ArrayBuffer's
/// backing store (V8's own node for it, and the views that keep it).
const OFF_HEAP_CLASSES: [&str; 6] = [
    "system / JSArrayBufferData",
    "ArrayBuffer",
    "SharedArrayBuffer",
    "Buffer",
    "FastBuffer",
    "Uint8Array",
];

/// Off-heap growth is held on the heap only through objects that own
/// backing stores; any other holder the snapshots found (the inspector's
/// own, Node's async bookkeeping) is what the extra cycle churned, not what
/// keeps the memory. Those are dropped, so the action never sends the team
/// to a V8-internal object; with none left, the verdict's action stands.
fn keep_off_heap_holders(diagnosis: &mut Diagnosis) {
    let owning: std::collections::HashSet<u32> = diagnosis
        .holders
        .iter()
        .filter(|h| OFF_HEAP_CLASSES.contains(&h.class.as_str()))
        .map(|h| h.holder_id)
        .collect();
    diagnosis
        .holders
        .retain(|h| owning.contains(&h.holder_id) && h.kind != HolderKind::Internal);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Holder;

    #[test]
    fn off_heap_growth_keeps_only_holders_of_backing_stores() {
        let holder = |id: u32, class: &str, kind: HolderKind| Holder {
            holder_id: id,
            class: class.into(),
            kind,
            ..Holder::default()
        };
        let mut diagnosis = Diagnosis {
            holders: vec![
                holder(1, "system / JSArrayBufferData", HolderKind::ClosureVariable),
                holder(1, "Object", HolderKind::ClosureVariable),
                holder(2, "Array", HolderKind::ClosureVariable),
                holder(3, "Buffer", HolderKind::Internal),
            ],
            ..Diagnosis::default()
        };
        keep_off_heap_holders(&mut diagnosis);
        let kept: Vec<(u32, &str)> = diagnosis
            .holders
            .iter()
            .map(|h| (h.holder_id, h.class.as_str()))
            .collect();
        assert_eq!(kept, vec![(1, "system / JSArrayBufferData"), (1, "Object")]);
    }
}
