//! The closing table of a run over many routes (found ones above all): a
//! person reads which of dozens leaks before any route's details. Leaks
//! first, then the undecided, then the clean; within each, by what a
//! route keeps per unit of work, the most first. One line each: the
//! verdict, the figure, and the holder the diagnosis named.

use std::fmt::Write;

use crate::model::{RouteResult, RunResult, VerdictKind};

/// Where a verdict ranks: leaks, then undecided, then clean.
fn group(route: &RouteResult) -> u8 {
    match route.verdict.as_ref().map(|v| v.kind) {
        Some(kind) if kind.is_leak() => 0,
        Some(VerdictKind::Inconclusive) | None => 1,
        Some(_) => 2,
    }
}

/// Bytes (or counts) kept per unit, as the verdict's figure says.
fn kept(route: &RouteResult) -> f64 {
    route
        .verdict
        .as_ref()
        .map_or(0.0, |v| v.figure.bytes_per_request)
}

fn figure_text(route: &RouteResult) -> String {
    route
        .figure()
        .map_or("-".to_string(), super::series_view::figure_text)
}

fn holder(route: &RouteResult) -> String {
    route
        .diagnosis
        .as_ref()
        .and_then(|d| d.holders.first())
        .map_or(String::new(), |h| format!("`{}`", h.name))
}

/// Leaks first, then the undecided, then the clean; the most kept first.
pub fn compare(a: &RouteResult, b: &RouteResult) -> std::cmp::Ordering {
    group(a).cmp(&group(b)).then(kept(b).total_cmp(&kept(a)))
}

/// The routes in ranked order.
pub fn ranked(result: &RunResult) -> Vec<&RouteResult> {
    let mut routes: Vec<&RouteResult> = result.routes.iter().collect();
    routes.sort_by(|a, b| compare(a, b));
    routes
}

/// The table, when the run checked more than one route.
pub fn render(out: &mut String, result: &RunResult, unit: &str) -> std::fmt::Result {
    if result.routes.len() < 2 {
        return Ok(());
    }
    let rows = ranked(result);
    let width = rows.iter().map(|r| r.route.len()).max().unwrap_or(5).max(5);
    writeln!(
        out,
        "\nroutes, leaks first, by what each keeps per {unit} ({} checked):",
        rows.len()
    )?;
    writeln!(
        out,
        "  {:<width$}  {:<19}  {:<22}  HOLDER",
        "ROUTE", "VERDICT", "KEPT"
    )?;
    for route in rows {
        let verdict = route
            .verdict
            .as_ref()
            .map_or("-".to_string(), |v| v.kind.to_string());
        writeln!(
            out,
            "  {:<width$}  {:<19}  {:<22}  {}",
            route.route,
            verdict,
            figure_text(route),
            holder(route)
        )?;
    }
    if let Some(found) = &result.settings.discovery {
        for skipped in &found.skipped {
            writeln!(
                out,
                "  skipped {} {}: {}",
                skipped.method, skipped.pattern, skipped.reason
            )?;
        }
    }
    Ok(())
}

/// A route with a verdict of `kind` keeping `bytes` per unit: what the
/// reports' ranking tests are made of.
#[cfg(test)]
pub(crate) fn judged_route(name: &str, kind: VerdictKind, bytes: f64) -> RouteResult {
    use crate::model::{Figure, Verdict};
    RouteResult {
        route: name.into(),
        verdict: Some(Verdict {
            kind,
            figure: Figure {
                bytes_per_request: bytes,
                ..Figure::default()
            },
            ..Verdict::default()
        }),
        ..RouteResult::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use judged_route as route;

    #[test]
    fn leaks_come_first_then_undecided_then_clean_each_by_what_it_keeps() {
        let result = RunResult {
            routes: vec![
                route("/clean-big", VerdictKind::NoRetention, 9.0),
                route("/small-leak", VerdictKind::Retention, 40.0),
                route("/undecided", VerdictKind::Inconclusive, 12.0),
                route("/big-leak", VerdictKind::Retention, 1500.0),
                route("/clean", VerdictKind::NoRetention, 1.0),
            ],
            ..RunResult::default()
        };
        let order: Vec<&str> = ranked(&result).iter().map(|r| r.route.as_str()).collect();
        assert_eq!(
            order,
            [
                "/big-leak",
                "/small-leak",
                "/undecided",
                "/clean-big",
                "/clean"
            ]
        );
        let mut text = String::new();
        render(&mut text, &result, "request").unwrap();
        assert!(text.contains("routes, leaks first"), "{text}");
    }
}
