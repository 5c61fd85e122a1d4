//! Comparing a run with the previous release's result (`--baseline`): per
//! route, the after-GC heapUsed at the end of the series and the retained
//! bytes per request, old and new, and whether the route regressed.
//!
//! Tolerance: a figure regresses when it grows by more than `tolerance`
//! (a fraction, default 20 %) *and* by more than an absolute floor below
//! which the method cannot tell a change from noise: 16 B per request
//! (under the smallest retention found reliably, BENCHMARKS.md) and 1 MB of
//! after-GC heap (ten times the repeatability of one reading). A route
//! whose verdict turns into a leak regresses whatever the figures.

pub use crate::model::{Comparison, RouteComparison};
use crate::model::{RouteResult, RunResult};
use crate::units::{mb, per_request};

pub const DEFAULT_TOLERANCE: f64 = 0.20;
const RETAINED_FLOOR_BYTES: f64 = 16.0;
const HEAP_FLOOR_BYTES: f64 = 1024.0 * 1024.0;

fn last_heap(route: &RouteResult) -> Option<u64> {
    route.cycles.last().map(|c| c.after_gc.heap_used)
}

/// Compares every route of `new` with the route of the same path in `old`.
pub fn compare(
    old: &RunResult,
    new: &RunResult,
    baseline_path: &str,
    tolerance: f64,
) -> Comparison {
    let routes = new
        .routes
        .iter()
        .map(
            |now| match old.routes.iter().find(|r| r.route == now.route) {
                Some(before) => compare_route(before, now, tolerance),
                None => RouteComparison {
                    route: now.route.clone(),
                    old_retained_per_request: None,
                    new_retained_per_request: now.retained_bytes_per_request.map(|r| r.heap_used),
                    old_after_gc_heap_used: None,
                    new_after_gc_heap_used: last_heap(now),
                    old_verdict: None,
                    new_verdict: now.verdict.as_ref().map(|v| v.kind.name().to_string()),
                    regressed: false,
                    message: format!("{}: not in the baseline, nothing to compare", now.route),
                },
            },
        )
        .collect();
    Comparison {
        baseline: baseline_path.to_string(),
        tolerance,
        routes,
    }
}

fn grew(old: f64, new: f64, tolerance: f64, floor: f64) -> bool {
    new - old > floor && new > old * (1.0 + tolerance)
}

fn compare_route(before: &RouteResult, now: &RouteResult, tolerance: f64) -> RouteComparison {
    let old_retained = before.retained_bytes_per_request.map(|r| r.heap_used);
    let new_retained = now.retained_bytes_per_request.map(|r| r.heap_used);
    let old_heap = last_heap(before);
    let new_heap = last_heap(now);
    let was_leak = before.verdict.as_ref().is_some_and(|v| v.leak);
    let is_leak = now.verdict.as_ref().is_some_and(|v| v.leak);
    let mut reasons = Vec::new();
    if let (Some(o), Some(n)) = (old_retained, new_retained)
        && grew(o.max(0.0), n, tolerance, RETAINED_FLOOR_BYTES)
    {
        reasons.push(format!(
            "retained {} → {} per request",
            per_request(o),
            per_request(n)
        ));
    }
    if let (Some(o), Some(n)) = (old_heap, new_heap)
        && grew(o as f64, n as f64, tolerance, HEAP_FLOOR_BYTES)
    {
        reasons.push(format!(
            "after-GC heapUsed {} → {}",
            mb(o as f64),
            mb(n as f64)
        ));
    }
    if is_leak && !was_leak {
        reasons.push("the verdict turned into a leak".to_string());
    }
    let regressed = !reasons.is_empty();
    let message = if regressed {
        format!("{} regressed: {}", now.route, reasons.join("; "))
    } else {
        format!(
            "{}: retained {} → {} per request, after-GC heapUsed {} → {}: within tolerance",
            now.route,
            old_retained.map_or("?".into(), per_request),
            new_retained.map_or("?".into(), per_request),
            old_heap.map_or("?".into(), |b| mb(b as f64)),
            new_heap.map_or("?".into(), |b| mb(b as f64)),
        )
    };
    RouteComparison {
        route: now.route.clone(),
        old_retained_per_request: old_retained,
        new_retained_per_request: new_retained,
        old_after_gc_heap_used: old_heap,
        new_after_gc_heap_used: new_heap,
        old_verdict: before.verdict.as_ref().map(|v| v.kind.name().to_string()),
        new_verdict: now.verdict.as_ref().map(|v| v.kind.name().to_string()),
        regressed,
        message,
    }
}

/// Reads a saved result, checking it is one this version understands.
pub fn load_result(path: &str) -> anyhow::Result<RunResult> {
    use anyhow::Context;
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{path} is not JSON; give a file written by --json"))?;
    let version = value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64);
    if version != Some(u64::from(crate::model::SCHEMA_VERSION)) {
        anyhow::bail!(
            "{path} has schema_version {version:?}; this leakcheck reads version {}",
            crate::model::SCHEMA_VERSION
        );
    }
    serde_json::from_value(value)
        .with_context(|| format!("{path} does not match the leakcheck result schema"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_needs_both_the_fraction_and_the_floor() {
        assert!(!grew(400.0, 450.0, 0.2, 16.0), "12 % is within tolerance");
        assert!(grew(400.0, 900.0, 0.2, 16.0));
        assert!(!grew(2.0, 10.0, 0.2, 16.0), "five-fold but under the floor");
    }
}
