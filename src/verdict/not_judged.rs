//! The verdict of a route whose readings were never judged: the run ended
//! (an error, a reading that timed out, Ctrl-C) before its first cycle
//! completed, or with too few readings to fit. Such a route is
//! `inconclusive`, never silent: a report that shows a route with no
//! verdict reads like a pass to anyone skimming it, and a missing verdict
//! is a false all-clear by omission.

use crate::model::{Finding, FindingKind, RouteResult, Verdict, VerdictKind};

/// `inconclusive` for `route`, quoting why the run ended (`reason`, the
/// run's own error message, which names the flag or step to change).
pub fn not_judged(route: &RouteResult, reason: &str, unit: &str) -> Verdict {
    let cycles = route.cycles.len();
    let reached = match (&route.baseline, cycles) {
        // A watch has readings, no baseline of its own.
        (None, 0) if route.watch.is_some() => "before its first reading".to_string(),
        (None, _) => "before its baseline reading".to_string(),
        (Some(_), 0) => "after its baseline, before its first cycle completed".to_string(),
        (Some(_), 1) => "after one cycle, too few readings to fit".to_string(),
        (Some(_), n) => format!("after {n} cycles, before they were judged"),
    };
    let served: u64 = route.cycles.iter().map(|c| c.units).sum();
    Verdict {
        kind: VerdictKind::Inconclusive,
        fails_gate: false,
        summary: format!("not judged: the run stopped {reached} ({served} {unit}s measured)"),
        action: format!(
            "The run ended before the readings could decide: {reason}. Fix that and run again; \
             the readings taken so far are in the report."
        ),
        findings: vec![Finding::new(
            FindingKind::Partial,
            format!("{cycles} cycles completed before the run stopped: {reason}"),
        )],
        ..Verdict::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Sample;

    #[test]
    fn a_route_cut_before_its_first_cycle_is_inconclusive_with_the_reason() {
        let route = RouteResult {
            route: "/heavy".into(),
            baseline: Some(Sample::default()),
            ..RouteResult::default()
        };
        let verdict = not_judged(
            &route,
            "after cycle 1: the target did not answer",
            "request",
        );
        assert_eq!(verdict.kind, VerdictKind::Inconclusive);
        assert!(!verdict.fails_gate);
        assert!(
            verdict.summary.contains("before its first cycle"),
            "{}",
            verdict.summary
        );
        assert!(
            verdict.action.contains("the target did not answer"),
            "{}",
            verdict.action
        );
        assert!(verdict.has_finding(FindingKind::Partial));
    }

    #[test]
    fn a_route_without_a_baseline_says_so() {
        let route = RouteResult::default();
        let verdict = not_judged(&route, "interrupted by SIGINT", "call");
        assert!(
            verdict.summary.contains("before its baseline"),
            "{}",
            verdict.summary
        );
        assert!(verdict.summary.contains("0 calls"), "{}", verdict.summary);
    }
}
