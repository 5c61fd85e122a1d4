//! Peak pressure: stable is not safe. The settled readings say what a
//! route keeps; the peak sampler's highest reading during the load says
//! whether the process survives serving it. A route that keeps 36 MB but
//! peaks at 3 GB of rss kills a 2 GB container at its peak, with no leak.
//! These findings hold the route's peak against the limits in force, and
//! `--max-peak` makes the peak a CI gate.

use crate::model::{CycleResult, Finding, FindingKind, Peak};
use crate::units::{MB, mb};

use super::Options;

/// A peak within this share of a limit is pressure: the collector runs
/// flat out near its heap limit, and a container has no margin for a
/// burst.
pub const NEAR_LIMIT: f64 = 0.8;
/// rss peaking at this many times what the route keeps...
const PEAK_OVER_KEPT: f64 = 8.0;
/// ...and above this many bytes is worth saying even with no limit known:
/// below it, any container that runs Node holds the peak.
const PEAK_WORTH_SAYING: f64 = 512.0 * MB;

/// The highest readings of every cycle's load.
pub fn route_peak(cycles: &[CycleResult]) -> Option<Peak> {
    cycles.iter().filter_map(|c| c.peak).reduce(Peak::max)
}

/// What the peak says; `leak`: the route's verdict is a leak (the peak is
/// then not "instead of" one). A peak over `--max-peak` is an
/// `over-max-peak` finding, which fails the run at its end
/// (`commands/outcome.rs`), whatever later steps make of the row.
pub fn judge_peak(cycles: &[CycleResult], options: &Options, leak: bool) -> Vec<Finding> {
    let mut findings = Vec::new();
    let Some(peak) = route_peak(cycles) else {
        return findings;
    };
    let limits = options.limits;
    let share = |value: u64, limit: u64| value as f64 / limit as f64;
    let mut pressed = false;
    if let Some(limit) = limits.heap_bytes
        && share(peak.heap_used, limit) >= NEAR_LIMIT
    {
        pressed = true;
        findings.push(Finding::new(
            FindingKind::PeakPressure,
            format!(
                "heapUsed peaked at {} during the load, {:.0} % of the heap limit {}: the \
                 process runs out of heap at its peak, leak or not; fewer concurrent requests, \
                 smaller responses, or a larger heap",
                mb(peak.heap_used as f64),
                100.0 * share(peak.heap_used, limit),
                mb(limit as f64)
            ),
        ));
    }
    if let Some((limit, what)) = limits.rss_limit()
        && share(peak.rss, limit) >= NEAR_LIMIT
    {
        pressed = true;
        findings.push(Finding::new(
            FindingKind::PeakPressure,
            format!(
                "rss peaked at {} during the load, {:.0} % of {what} ({}): a container of \
                 that size is killed at its peak{}",
                mb(peak.rss as f64),
                100.0 * share(peak.rss, limit),
                mb(limit as f64),
                if leak { "" } else { ", not of a leak" }
            ),
        ));
    }
    let kept = cycles
        .last()
        .map_or(0.0, |c| (c.after_gc.heap_used + c.after_gc.external) as f64);
    if !pressed
        && !leak
        && peak.rss as f64 > PEAK_WORTH_SAYING
        && peak.rss as f64 > PEAK_OVER_KEPT * kept
    {
        findings.push(Finding::new(
            FindingKind::PeakPressure,
            format!(
                "peaks at {} rss during the load while keeping {}: a container smaller than \
                 the peak dies at its peak, not of a leak; give --memory-limit to hold it \
                 against the production limit, or --max-peak to gate it",
                mb(peak.rss as f64),
                mb(kept)
            ),
        ));
    }
    if let Some(most) = options.max_peak {
        // rss where the probe reads it; a page or endpoint target's heap.
        let (value, what) = match peak.rss {
            0 => (peak.heap_used, "heapUsed"),
            rss => (rss, "rss"),
        };
        if value > most {
            findings.push(Finding::new(
                FindingKind::OverMaxPeak,
                format!(
                    "{what} peaked at {}, over --max-peak {}: failed",
                    mb(value as f64),
                    mb(most as f64)
                ),
            ));
        }
    }
    findings
}

/// Cycles shrunk or ended early to keep the target below half a limit.
/// Cycles that ended at their time target are the schedule's, not the
/// limit's, and are left out.
pub fn headroom(cycles: &[CycleResult], options: &Options) -> Option<Finding> {
    let braked = cycles
        .iter()
        .filter(|c| c.peak.is_some_and(|p| p.braked))
        .count();
    let sized = || {
        cycles
            .iter()
            .filter(|c| !c.load.time_bound)
            .map(|c| c.units)
    };
    let largest = sized().max()?;
    let smallest = sized().min()?;
    if braked == 0 && smallest * 2 > largest {
        return None;
    }
    let limits = options.limits;
    let limit = match (limits.heap_bytes, limits.rss_limit()) {
        (Some(heap), _) => format!("its heap limit {}", mb(heap as f64)),
        (None, Some((rss, what))) => format!("{what} {}", mb(rss as f64)),
        (None, None) => "its limit".to_string(),
    };
    let unit = options.unit.name();
    Some(Finding::new(
        FindingKind::Headroom,
        format!(
            "cycles of {smallest} to {largest} {unit}s{}: the target was kept below half of \
             {limit}, so the verdict came before the leak could kill it",
            match braked {
                0 => String::new(),
                n => format!(", {n} ended early when the load passed half"),
            }
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Limits, Sample};

    fn cycle(units: u64, rss: u64, heap_used: u64, braked: bool) -> CycleResult {
        CycleResult {
            units,
            after_gc: Sample {
                heap_used: 36 << 20,
                ..Sample::default()
            },
            peak: Some(Peak {
                rss,
                heap_used,
                samples: 4,
                braked,
                ..Peak::default()
            }),
            ..CycleResult::default()
        }
    }

    #[test]
    fn a_clean_route_that_peaks_far_above_what_it_keeps_is_pressure() {
        let cycles = [cycle(2_500, 3_100 << 20, 200 << 20, false)];
        let findings = judge_peak(&cycles, &Options::default(), false);
        assert_eq!(findings.len(), 1);
        assert!(
            findings[0].message.contains("3100.0 MB rss"),
            "{}",
            findings[0].message
        );
        // Under the gate it fails.
        let gated = Options {
            max_peak: Some(2 << 30),
            ..Options::default()
        };
        let over = judge_peak(&cycles, &gated, false);
        assert!(
            over.iter().any(|f| f.kind == FindingKind::OverMaxPeak),
            "{over:?}"
        );
    }

    #[test]
    fn near_a_limit_is_pressure_and_far_below_is_not() {
        let limits = Limits {
            stated_bytes: Some(1 << 30),
            heap_bytes: Some(4 << 30),
            ..Limits::default()
        };
        let options = Options {
            limits,
            ..Options::default()
        };
        let near = [cycle(2_500, 900 << 20, 100 << 20, false)];
        let findings = judge_peak(&near, &options, false);
        assert!(
            findings[0].message.contains("--memory-limit"),
            "{findings:?}"
        );
        let far = [cycle(2_500, 200 << 20, 100 << 20, false)];
        assert!(judge_peak(&far, &options, false).is_empty());
    }

    #[test]
    fn shrunk_or_braked_cycles_say_so() {
        let options = Options::default();
        let even = [cycle(2_500, 0, 0, false), cycle(2_500, 0, 0, false)];
        assert!(headroom(&even, &options).is_none());
        let shrunk = [cycle(2_500, 0, 0, false), cycle(150, 0, 0, false)];
        assert!(headroom(&shrunk, &options).is_some());
        let braked = [cycle(400, 0, 0, true)];
        let finding = headroom(&braked, &options).unwrap();
        assert!(
            finding.message.contains("ended early"),
            "{}",
            finding.message
        );
    }
}
