//! Comparing a run with the previous release's result (`--baseline`): per
//! route, the after-GC heapUsed at the end of the series and the retained
//! bytes per request of the figure that made the new verdict (heapUsed for
//! most rows, the growing off-heap series for `off-heap-retention`), old
//! and new, and whether the route regressed.
//!
//! Tolerance: a figure regresses when it grows by more than `tolerance`
//! (a fraction, default 20 %) *and* by more than an absolute floor below
//! which the method cannot tell a change from noise, in the figure's own
//! unit: for bytes, 16 B per request (under the smallest retention found
//! reliably, BENCHMARKS.md); for a count (handles, listeners, DOM nodes, a
//! counter), its series' noise floor over the units of one cycle (4
//! handles in 2 500 requests: 0.0016 a request), what one cycle can tell;
//! and 1 MB of after-GC heap (ten times the repeatability of one reading).
//! A route whose verdict turns into a leak regresses whatever the figures.

use anyhow::Context;

use super::series_view::value_text;
use crate::model::{
    Comparison, Quantity, READABLE_SCHEMA_VERSIONS, RouteComparison, RouteResult, RunResult,
    Series, Unit,
};
use crate::units::mb;

const RETAINED_FLOOR_BYTES: f64 = 16.0;
const HEAP_FLOOR_BYTES: f64 = 1024.0 * 1024.0;

fn last_heap(route: &RouteResult) -> Option<u64> {
    route.cycles.last().map(|c| c.after_gc.heap_used)
}

/// A route's retained bytes per request of `metric`, from its fits.
fn retained(route: &RouteResult, metric: &Series) -> Option<f64> {
    let verdict = route.verdict.as_ref()?;
    verdict
        .fit(metric)
        .map(|f| f.slope_bytes_per_request)
        .or_else(|| (verdict.figure.metric == *metric).then_some(verdict.figure.bytes_per_request))
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
        .map(|now| {
            let before = old.routes.iter().find(|r| r.route == now.route);
            compare_route(before, now, tolerance, new.settings.unit)
        })
        .collect();
    Comparison {
        baseline: baseline_path.to_string(),
        tolerance,
        routes,
    }
}

/// The least growth per unit of `metric` that is a change, not noise, in
/// the figure's own unit (see the module's header).
fn retained_floor(metric: &Series, route: &RouteResult, unit: Unit) -> f64 {
    if metric.quantity() == Quantity::Bytes {
        return RETAINED_FLOOR_BYTES;
    }
    let noise = match unit {
        Unit::Iteration => crate::verdict::Noise::Page,
        _ => crate::verdict::Noise::Process,
    };
    let units: u64 = route.cycles.iter().map(|c| c.units).sum();
    let per_cycle = units as f64 / route.cycles.len().max(1) as f64;
    noise.floor(metric) / per_cycle.max(1.0)
}

fn grew(old: f64, new: f64, tolerance: f64, floor: f64) -> bool {
    new - old > floor && new > old * (1.0 + tolerance)
}

fn compare_route(
    before: Option<&RouteResult>,
    now: &RouteResult,
    tolerance: f64,
    unit: Unit,
) -> RouteComparison {
    let metric = now.figure().map_or(Series::HEAP_USED, |f| f.metric.clone());
    let old_retained = before.and_then(|b| retained(b, &metric));
    let new_retained = retained(now, &metric);
    let old_heap = before.and_then(last_heap);
    let new_heap = last_heap(now);
    let mut reasons = Vec::new();
    if let (Some(o), Some(n)) = (old_retained, new_retained)
        && grew(o.max(0.0), n, tolerance, retained_floor(&metric, now, unit))
    {
        reasons.push(format!(
            "retained {} → {} per request ({metric})",
            value_text(&metric, o),
            value_text(&metric, n)
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
    if let Some(before) = before
        && now.is_leak()
        && !before.is_leak()
    {
        reasons.push("the verdict turned into a leak".to_string());
    }
    let regressed = !reasons.is_empty();
    let message = if before.is_none() {
        format!("{}: not in the baseline, nothing to compare", now.route)
    } else if regressed {
        format!("{} regressed: {}", now.route, reasons.join("; "))
    } else {
        format!(
            "{}: retained {} → {} per request ({metric}), after-GC heapUsed {} → {}: within tolerance",
            now.route,
            old_retained.map_or("?".into(), |v| value_text(&metric, v)),
            new_retained.map_or("?".into(), |v| value_text(&metric, v)),
            old_heap.map_or("?".into(), |b| mb(b as f64)),
            new_heap.map_or("?".into(), |b| mb(b as f64)),
        )
    };
    RouteComparison {
        route: now.route.clone(),
        metric,
        old_retained_per_request: old_retained,
        new_retained_per_request: new_retained,
        old_after_gc_heap_used: old_heap,
        new_after_gc_heap_used: new_heap,
        old_verdict: before.and_then(|b| b.verdict.as_ref().map(|v| v.kind)),
        new_verdict: now.verdict.as_ref().map(|v| v.kind),
        regressed,
        message,
    }
}

/// Reads a saved result, checking it is one this version understands.
/// A version-1 file's `target_stopped` (free text then) is dropped: a
/// baseline is compared by its readings, not by how its target stopped.
/// Each verdict's `figure` (new in version 2) is rebuilt from its fits.
pub fn load_result(path: &str) -> anyhow::Result<RunResult> {
    use std::io::Read;
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {path}"))?;
    let mut text = String::new();
    file.take(MAX_RESULT_BYTES + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read {path} as text"))?;
    if text.len() as u64 > MAX_RESULT_BYTES {
        anyhow::bail!(
            "{path} is larger than {} MB: not a leakcheck result (a result of 100 routes × \
             100 cycles is about 10 MB)",
            MAX_RESULT_BYTES >> 20
        );
    }
    parse_result(&text).with_context(|| format!("{path} is not a leakcheck result"))
}

/// The largest result file read: far above any real run's, and a bound
/// for `report /dev/zero`.
pub const MAX_RESULT_BYTES: u64 = 64 * 1024 * 1024;

/// Parses a result's JSON text (see `load_result`).
pub fn parse_result(text: &str) -> anyhow::Result<RunResult> {
    if text.trim().is_empty() {
        anyhow::bail!(
            "the file is empty (a run that was killed before it wrote its report?); give a file \
             written by `leakcheck run --json FILE`"
        );
    }
    let mut value: serde_json::Value = serde_json::from_str(text)
        .context("not JSON; give a file written by `leakcheck run --json FILE`")?;
    let version = value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64);
    let newest = READABLE_SCHEMA_VERSIONS.iter().max().copied().unwrap_or(0);
    match version {
        Some(v) if READABLE_SCHEMA_VERSIONS.iter().any(|r| u64::from(*r) == v) => {}
        Some(v) if v > u64::from(newest) => anyhow::bail!(
            "it has schema version {v}, newer than this leakcheck {} reads (up to {newest}): \
             upgrade leakcheck (npm install leakcheck@latest) to read it",
            env!("CARGO_PKG_VERSION")
        ),
        Some(v) => anyhow::bail!(
            "it has schema version {v}, which this leakcheck does not read (it reads {}): \
             run the check again to write a current one",
            READABLE_SCHEMA_VERSIONS
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => anyhow::bail!(
            "it has no schema_version: give a file written by `leakcheck run --json FILE`"
        ),
    }
    if version == Some(1) {
        upgrade_from_version_1(&mut value);
    }
    serde_json::from_value(value).context("it does not match the leakcheck result schema")
}

fn upgrade_from_version_1(value: &mut serde_json::Value) {
    use serde_json::{Value, json};
    value["schema_version"] = json!(crate::model::SCHEMA_VERSION);
    if let Some(outcome) = value.get_mut("outcome").and_then(Value::as_object_mut) {
        outcome.insert("target_stopped".into(), Value::Null);
    }
    if value.pointer("/target/probe") == Some(&json!("")) {
        value["target"]["probe"] = Value::Null;
    }
    let Some(routes) = value.get_mut("routes").and_then(Value::as_array_mut) else {
        return;
    };
    for route in routes {
        let heap = route
            .pointer("/retained_bytes_per_request/heap_used")
            .cloned()
            .unwrap_or(json!(0.0));
        if let Some(verdict) = route.get_mut("verdict").and_then(Value::as_object_mut)
            && !verdict.contains_key("figure")
        {
            verdict.insert(
                "figure".into(),
                json!({ "metric": "heapUsed", "bytes_per_request": heap }),
            );
        }
    }
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

    #[test]
    fn a_future_or_empty_result_says_what_to_do() {
        let future = parse_result(r#"{"schema_version": 99}"#)
            .unwrap_err()
            .to_string();
        assert!(future.contains("schema version 99, newer"), "{future}");
        assert!(future.contains("upgrade leakcheck"), "{future}");
        assert!(!future.contains("Some("), "{future}");
        let empty = parse_result("  \n").unwrap_err().to_string();
        assert!(empty.contains("the file is empty"), "{empty}");
        let none = parse_result("{}").unwrap_err().to_string();
        assert!(none.contains("no schema_version"), "{none}");
    }

    #[test]
    fn a_counted_figure_is_held_to_its_own_floor_not_to_bytes() {
        use crate::model::{Figure, MetricFit, Trend, Verdict, VerdictKind};
        let timeouts = Series::Resource(crate::model::Resource::new(
            crate::model::ResourceFamily::ActiveResource,
            "Timeout",
        ));
        let route = |per_request: f64| RouteResult {
            route: "/r".into(),
            cycles: vec![
                crate::model::CycleResult {
                    units: 2_500,
                    ..Default::default()
                };
                3
            ],
            verdict: Some(Verdict {
                kind: VerdictKind::CounterGrowth,
                fails_gate: false,
                summary: String::new(),
                action: String::new(),
                findings: Vec::new(),
                fits: vec![MetricFit {
                    metric: timeouts.clone(),
                    slope_bytes_per_request: per_request,
                    increments: Vec::new(),
                    noise_bytes: 4.0,
                    growth_per_cycle_bytes: per_request * 2_500.0,
                    fitted_from_cycle: 1,
                    trend: Trend::Growing,
                }],
                figure: Figure {
                    metric: timeouts.clone(),
                    bytes_per_request: per_request,
                },
            }),
            ..RouteResult::default()
        };
        // From none to a Timeout every other request: a regression, though
        // 0.5 is far under the 16 "bytes" floor that held counts before.
        let compared = compare_route(Some(&route(0.0)), &route(0.5), 0.2, Unit::Request);
        assert!(compared.regressed, "{}", compared.message);
        assert!(compared.message.contains("+0.50"), "{}", compared.message);
        // The same figure again is not.
        let same = compare_route(Some(&route(0.5)), &route(0.52), 0.2, Unit::Request);
        assert!(!same.regressed, "{}", same.message);
        // Under the floor of one cycle: 2 handles in 2 500 requests.
        let noise = compare_route(Some(&route(0.0)), &route(0.0008), 0.2, Unit::Request);
        assert!(!noise.regressed, "{}", noise.message);
    }
}
