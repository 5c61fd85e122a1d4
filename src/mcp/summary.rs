//! What a tool returns: the small JSON an agent reasons over, not a raw
//! result (ChromeDevTools/chrome-devtools-mcp#406). Every result with a
//! verdict carries `leak`; figures carry their unit; the paths of the full
//! JSON and HTML reports come along for a person.

use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use crate::model::{Diagnosis, Quantity, RouteResult, RunResult, Verdict, VerdictKind};
use crate::snapshot::{DiffReport, InspectReport};

#[derive(Debug, Serialize)]
pub struct RouteSummary {
    pub route: String,
    pub verdict: String,
    pub leak: bool,
    /// Kept per unit by the series that decided (`unit` says which).
    pub figure: f64,
    /// `bytes per request`, `dom.Nodes per iteration`.
    pub unit: String,
    pub summary: String,
    /// What to do: after a diagnosis, about the variable it named.
    pub action: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
    /// `file:line: code` where what grows is stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storing_line: Option<String>,
    /// `your code`, `express-session@1.18.2`, `Node`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The catalogue's reference, when the leak is a known one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known_leak: Option<String>,
    /// A soak's or a watch's projection to the memory limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projection: Option<String>,
}

pub fn kind_name(kind: VerdictKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The verdict of a whole run: the first leak's kind, else `inconclusive`
/// when any route is undecided, else the first route's.
fn overall(routes: &[RouteSummary]) -> String {
    routes
        .iter()
        .find(|r| r.leak)
        .or_else(|| routes.iter().find(|r| r.verdict == "inconclusive"))
        .or(routes.first())
        .map_or("inconclusive".to_string(), |r| r.verdict.clone())
}

pub fn route_summary(route: &RouteResult, unit: &str) -> Option<RouteSummary> {
    let verdict: &Verdict = route.verdict.as_ref()?;
    let figure = &verdict.figure;
    let unit = match figure.unit() {
        Quantity::Bytes => format!("bytes per {unit}"),
        Quantity::Count => format!("{} per {unit}", figure.metric),
    };
    let diagnosis = route.diagnosis.as_ref();
    let holder = diagnosis.and_then(|d| d.holders.first());
    let stored = diagnosis.and_then(Diagnosis::storing_site);
    Some(RouteSummary {
        route: route.route.clone(),
        verdict: kind_name(verdict.kind),
        leak: verdict.kind.is_leak(),
        figure: figure.bytes_per_request,
        unit,
        summary: verdict.summary.clone(),
        action: verdict.action.clone(),
        holder: holder.map(|h| h.name.clone()),
        storing_line: stored.map(|s| {
            format!(
                "{}:{}: {}",
                s.url,
                s.holder_line.unwrap_or(s.line),
                s.holder_line_text.as_deref().unwrap_or("").trim()
            )
        }),
        owner: holder
            .and_then(|h| h.owner.as_ref())
            .or(stored.and_then(|s| s.owner.as_ref()))
            .map(|o| o.describe()),
        known_leak: diagnosis
            .and_then(|d| d.known_leak.as_ref())
            .map(|k| format!("{} ({})", k.upstream, k.url)),
        projection: projection_of(route),
    })
}

fn projection_of(route: &RouteResult) -> Option<String> {
    let soak = route.soak.as_ref().map(|s| s.projection.as_str());
    let watch = route.watch.as_ref().map(|w| w.projection.as_str());
    soak.or(watch)
        .filter(|text| !text.is_empty())
        .map(str::to_string)
}

/// A run, soak, page, function check or watch.
pub fn of_run(result: &RunResult, exit_code: Option<i32>, json: &Path, html: &Path) -> Value {
    let unit = result.settings.unit.name();
    let routes: Vec<RouteSummary> = result
        .routes
        .iter()
        .filter_map(|r| route_summary(r, unit))
        .collect();
    json!({
        "verdict": overall(&routes),
        "leak": routes.iter().any(|r| r.leak),
        "exit_code": exit_code,
        "outcome": result.outcome.status.name(),
        "error": result.outcome.error,
        "routes": routes,
        "report_json": json,
        "report_html": html,
    })
}

/// `inspect`: the totals and the top rows.
pub fn of_inspect(report: &InspectReport, top: usize) -> Value {
    json!({
        "totals": report.totals,
        "classes": report.classes.iter().take(top).collect::<Vec<_>>(),
        "largest_retainers": report.largest_retainers.iter().take(top).collect::<Vec<_>>(),
    })
}

/// `diff`: what grew and what holds it.
pub fn of_diff(report: &DiffReport, top: usize) -> Value {
    let holders: Vec<Value> = report
        .holders
        .iter()
        .take(top)
        .map(|h| {
            json!({
                "holder": h.name,
                "class": h.class,
                "new_objects": h.objects,
                "new_bytes": h.new_bytes,
                "retained_bytes": h.retained_bytes,
                "script": h.script,
                "owner": h.owner.as_ref().map(|o| o.describe()),
                "path": h.path_text,
            })
        })
        .collect();
    json!({
        "grew": report.after.self_size as i64 - report.before.self_size as i64,
        "classes": report.classes.iter().take(top).collect::<Vec<_>>(),
        "holders": holders,
    })
}

/// `compare_results`: per route, the verdict before and now, and whether
/// the growth is gone.
pub fn of_comparison(
    previous: &RunResult,
    current: &RunResult,
    tolerance: f64,
    baseline: &str,
) -> Value {
    let comparison = crate::report::baseline::compare(previous, current, baseline, tolerance);
    let unit = current.settings.unit.name();
    let routes: Vec<Value> = current
        .routes
        .iter()
        .map(|now| {
            let before = previous
                .routes
                .iter()
                .find(|r| r.route == now.route)
                .and_then(|r| route_summary(r, unit));
            let after = route_summary(now, unit);
            let leaked = before.as_ref().is_some_and(|b| b.leak);
            let leaks = after.as_ref().is_some_and(|a| a.leak);
            let compared = comparison.routes.iter().find(|c| c.route == now.route);
            json!({
                "route": now.route,
                "before": before,
                "after": after,
                "leak": leaks,
                "growth_removed": leaked && !leaks,
                "regressed": compared.is_some_and(|c| c.regressed),
                "message": compared.map(|c| c.message.clone()),
            })
        })
        .collect();
    let removed = routes.iter().any(|r| r["growth_removed"] == true);
    json!({
        "leak": routes.iter().any(|r| r["leak"] == true),
        "growth_removed": removed,
        "regressed": comparison.regressions().next().is_some(),
        "routes": routes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(kind: VerdictKind) -> RunResult {
        RunResult {
            routes: vec![RouteResult {
                route: "/cache".into(),
                verdict: Some(Verdict {
                    kind,
                    ..Verdict::default()
                }),
                ..RouteResult::default()
            }],
            ..RunResult::default()
        }
    }

    #[test]
    fn a_fix_that_removed_the_growth_reads_growth_removed_and_no_leak() {
        let before = result(VerdictKind::Retention);
        let after = result(VerdictKind::NoRetention);
        let fixed = of_comparison(&before, &after, 0.2, "before.json");
        assert_eq!(fixed["leak"], false);
        assert_eq!(fixed["growth_removed"], true);
        assert_eq!(fixed["routes"][0]["before"]["verdict"], "retention");
        assert_eq!(fixed["routes"][0]["after"]["verdict"], "no-retention");
        let still = of_comparison(&before, &before, 0.2, "before.json");
        assert_eq!(still["leak"], true);
        assert_eq!(still["growth_removed"], false);
    }

    #[test]
    fn a_run_reads_its_first_leak_else_inconclusive_else_its_first_route() {
        let path = Path::new("r.json");
        let mut mixed = result(VerdictKind::NoRetention);
        mixed
            .routes
            .extend(result(VerdictKind::Inconclusive).routes);
        assert_eq!(
            of_run(&mixed, Some(2), path, path)["verdict"],
            "inconclusive"
        );
        mixed.routes.extend(result(VerdictKind::Retention).routes);
        let summary = of_run(&mixed, Some(1), path, path);
        assert_eq!(summary["verdict"], "retention");
        assert_eq!(summary["leak"], true);
        assert_eq!(summary["routes"][0]["unit"], "bytes per request");
    }

    #[test]
    fn a_watch_carries_its_projection_and_a_run_none() {
        let path = Path::new("r.json");
        let mut watched = result(VerdictKind::Retention);
        watched.routes[0].watch = Some(crate::model::WatchResult {
            projection: "reaches the 4.0 GB limit in about 19.3 h".into(),
            ..Default::default()
        });
        let summary = of_run(&watched, Some(1), path, path);
        assert_eq!(
            summary["routes"][0]["projection"],
            "reaches the 4.0 GB limit in about 19.3 h"
        );
        let run = of_run(&result(VerdictKind::Retention), Some(1), path, path);
        assert!(run["routes"][0].get("projection").is_none());
    }
}
