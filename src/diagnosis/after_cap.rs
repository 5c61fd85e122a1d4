//! A leak verdict whose only growth was a collection filling to its cap.
//!
//! A history trimmed to its last 1 000 entries grows by one entry per unit
//! until it is full, and the byte series reads that filling as retention.
//! When the collection check has followed every grown collection to a cap
//! (`snapshots/collections.rs`), the question left is whether the heap is
//! flat *after* the cap. This module answers it with readings taken there:
//! `AFTER_CAP_CYCLES` more cycles, each sized so that their least-squares
//! slope, with `BOUND_SIGMAS` standard errors above it and the series'
//! noise floor under its residuals (the sequential rule's bound,
//! `verdict/sequential.rs`), can fall below the route's resolution.
//!
//! - bound below the resolution: `no-retention`, the byte verdict kept as
//!   a finding, the cap named;
//! - slope clear of the resolution by the same margin: something besides
//!   the capped collection grows; the leak verdict stands;
//! - neither: `inconclusive`, with the work that would decide it.

use crate::cycle::{CycleSpec, Silent, Workload};
use crate::model::{
    Collection, CollectionState, Finding, FindingKind, RouteResult, Series, Unit, VerdictKind,
};
use crate::probe::Probe;
use crate::units::per_request;
use crate::verdict::Noise;
use crate::verdict::budget::{PAGE, SERVER};
use crate::verdict::fit::least_squares;
use crate::verdict::sequential::BOUND_SIGMAS;

/// Cycles after the cap: five readings (the one before them and four),
/// the fewest whose fit has a residual spread to speak of.
const AFTER_CAP_CYCLES: u32 = 4;

/// Units the after-cap readings span, so that a flat heap's bound falls
/// below `resolution`: with five evenly spaced readings over `U` units the
/// slope's standard error is `floor / (0.79 U)` (Σ(x − x̄)² = 0.625 U²).
/// `BOUND_SIGMAS` of them must take at most half the resolution, leaving
/// the other half to the slope a flat heap still shows by chance: `U = 2 ×
/// BOUND_SIGMAS × floor / (0.79 × resolution)`, 34 000 requests for a
/// server (0.1 MB floor, 15.7 B), 340 iterations for a page (16 KB, 246 B).
fn units_needed(noise: Noise, resolution: f64) -> u64 {
    let floor = noise.floor(&Series::HEAP_USED);
    (2.0 * BOUND_SIGMAS * floor / (0.79 * resolution)).ceil() as u64
}

/// The resolution a route is judged at when the command line names none.
pub fn default_resolution(noise: Noise) -> f64 {
    match noise {
        Noise::Page => PAGE.resolution(),
        Noise::Process => SERVER.resolution(),
    }
}

/// How the route is judged, for the readings after the cap.
pub struct AfterCap {
    /// How repeatable its readings are (a process's or a page's).
    pub noise: Noise,
    /// Bytes per unit below which it keeps nothing.
    pub resolution: f64,
    pub unit: Unit,
    /// The most one of the cycles after the cap may take.
    pub cycle_time: std::time::Duration,
}

/// Whether the verdict is a leak or undecided and every collection the
/// check followed stopped at a cap: the case this module decides.
pub fn wants_after_cap(route: &RouteResult, collections: &[Collection]) -> bool {
    let open = route
        .verdict
        .as_ref()
        .is_some_and(|v| v.kind.is_leak() || v.kind == VerdictKind::Inconclusive);
    open && !collections.is_empty()
        && collections
            .iter()
            .all(|c| c.state == CollectionState::Capped)
}

/// Runs the cycles after the cap and rewrites the verdict by what they
/// read. A probe or workload that fails leaves the verdict as it was,
/// with the failure as a finding.
pub async fn judge_after_cap(
    probe: &mut dyn Probe,
    workload: &mut dyn Workload,
    into: &mut RouteResult,
    capped: &[Collection],
    first_cycle: u32,
    judged: AfterCap,
) {
    let AfterCap {
        noise,
        resolution,
        unit,
        cycle_time,
    } = judged;
    let needed = units_needed(noise, resolution);
    let per_cycle = needed.div_ceil(u64::from(AFTER_CAP_CYCLES)).max(1);
    let scale = workload
        .planned_units()
        .map_or(1, |planned| per_cycle.div_ceil(planned.max(1)).max(1));
    let mut points = Vec::new();
    let mut sent = 0_u64;
    let read = async {
        points.push((0.0, probe.settled_sample().await?.heap_used as f64));
        for k in 0..AFTER_CAP_CYCLES {
            let spec = CycleSpec {
                number: first_cycle + k,
                scale,
                most_units: Some(per_cycle),
                brake: None,
                time: Some(cycle_time),
            };
            sent += workload.drive(spec, &Silent).await?.units.resolve(None).0;
            points.push((sent as f64, probe.settled_sample().await?.heap_used as f64));
        }
        anyhow::Ok(())
    };
    if let Err(error) = read.await {
        if let Some(verdict) = into.verdict.as_mut() {
            verdict.findings.push(Finding::new(
                FindingKind::DiagnosisFailed,
                format!("the readings after the collections' caps failed: {error:#}"),
            ));
        }
        return;
    }
    if let Some(verdict) = into.verdict.as_mut() {
        rejudge(verdict, &points, capped, noise, resolution, unit);
    }
}

/// The verdict by the heap after the cap: `points` are (units since the
/// cap, after-GC heapUsed), the first at the cap.
fn rejudge(
    verdict: &mut crate::model::Verdict,
    points: &[(f64, f64)],
    capped: &[Collection],
    noise: Noise,
    resolution: f64,
    unit: Unit,
) {
    let Some(line) = least_squares(points) else {
        return;
    };
    let mean = points.iter().map(|p| p.0).sum::<f64>() / points.len() as f64;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean).powi(2)).sum();
    let se = line.residual_sd.max(noise.floor(&Series::HEAP_USED)) / sxx.sqrt();
    let upper = line.slope + BOUND_SIGMAS * se;
    let lower = line.slope - BOUND_SIGMAS * se;
    let caps = capped
        .iter()
        .map(|c| {
            format!(
                "`{}` ({} stopped at {} entries)",
                c.name, c.kind, c.entries_after
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let unit = unit.name();
    let sent = points.last().map_or(0.0, |p| p.0);
    let after = format!(
        "after {caps} reached its cap, the heap over {sent:.0} more {unit}s: {} per {unit} (at \
         most {})",
        per_request(line.slope),
        per_request(upper)
    );
    if lower > resolution {
        verdict.findings.push(Finding::new(
            FindingKind::CappedCollection,
            format!(
                "{after}: it still grows, so something besides the cap keeps what each {unit} adds"
            ),
        ));
        return;
    }
    let earlier = format!("the byte series read {}: {}", verdict.kind, verdict.summary);
    verdict
        .findings
        .push(Finding::new(FindingKind::BytesBelowResolution, earlier));
    verdict.fails_gate = false;
    if upper < resolution {
        verdict.kind = VerdictKind::NoRetention;
        verdict.summary = format!(
            "{after}, below the {} resolution: what grew was the collection filling to its cap",
            per_request(resolution)
        );
        verdict.action =
            "Nothing to fix: a bounded collection filled to its cap. Check that its cap is the \
             size you meant."
                .to_string();
    } else {
        verdict.kind = VerdictKind::Inconclusive;
        verdict.summary = format!(
            "{after}: neither flat below the {} resolution nor clearly growing",
            per_request(resolution)
        );
        verdict.action = format!(
            "The readings after the cap ({sent:.0} {unit}s) could not bound the heap below the \
             resolution: check the route alone on a quieter machine, or accept a coarser \
             --resolution than {} per {unit}.",
            per_request(upper.max(resolution))
        );
    }
    verdict.findings.push(Finding::new(
        FindingKind::CappedCollection,
        format!("{caps}: a cap, not a leak"),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Verdict, VerdictKind};

    fn leak() -> Verdict {
        Verdict {
            kind: VerdictKind::Retention,
            fails_gate: true,
            summary: "0.26 KB kept per request".into(),
            ..Verdict::default()
        }
    }

    fn log() -> Vec<Collection> {
        vec![Collection {
            name: "recentVisits".into(),
            kind: "Array".into(),
            entries_after: 10_000,
            state: CollectionState::Capped,
            ..Collection::default()
        }]
    }

    /// Five readings over 34 000 units: `per_unit` bytes each, with a
    /// wobble of `wobble` bytes alternating around the line.
    fn readings(per_unit: f64, wobble: f64) -> Vec<(f64, f64)> {
        (0..5)
            .map(|k| {
                let x = k as f64 * 8_500.0;
                let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
                (x, 20e6 + per_unit * x + sign * wobble)
            })
            .collect()
    }

    fn judged(points: &[(f64, f64)]) -> Verdict {
        let mut verdict = leak();
        let resolution = default_resolution(Noise::Process);
        rejudge(
            &mut verdict,
            points,
            &log(),
            Noise::Process,
            resolution,
            Unit::Request,
        );
        verdict
    }

    #[test]
    fn a_flat_heap_after_the_cap_is_no_retention_with_the_cap_and_the_bytes_kept() {
        let verdict = judged(&readings(0.5, 20_000.0));
        assert_eq!(verdict.kind, VerdictKind::NoRetention, "{verdict:#?}");
        assert!(!verdict.fails_gate);
        assert!(
            verdict.summary.contains("`recentVisits`"),
            "{}",
            verdict.summary
        );
        assert!(verdict.has_finding(FindingKind::CappedCollection));
        assert!(verdict.has_finding(FindingKind::BytesBelowResolution));
    }

    #[test]
    fn a_heap_still_growing_after_the_cap_keeps_the_leak() {
        let verdict = judged(&readings(200.0, 20_000.0));
        assert_eq!(verdict.kind, VerdictKind::Retention, "{verdict:#?}");
        assert!(verdict.fails_gate);
        let finding = &verdict.findings[0].message;
        assert!(finding.contains("still grows"), "{finding}");
    }

    #[test]
    fn readings_too_scattered_to_bound_are_inconclusive_not_clean() {
        // ±1.5 MB around a flat line: no bound below 16 B per request.
        let verdict = judged(&readings(0.0, 1.5e6));
        assert_eq!(verdict.kind, VerdictKind::Inconclusive, "{verdict:#?}");
        assert!(!verdict.fails_gate);
        assert!(
            verdict.action.contains("could not bound"),
            "{}",
            verdict.action
        );
    }

    #[test]
    fn the_span_needed_bounds_a_flat_heap_below_the_resolution() {
        // A server: 34 000 requests; a page: 340 iterations.
        let server = units_needed(Noise::Process, default_resolution(Noise::Process));
        assert!((30_000..40_000).contains(&server), "{server}");
        let page = units_needed(Noise::Page, default_resolution(Noise::Page));
        assert!((300..400).contains(&page), "{page}");
    }
}
