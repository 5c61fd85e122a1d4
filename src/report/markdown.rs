//! The Markdown summary for a pull request or a CI step summary: one
//! GitHub-flavoured table (verdict per route, retained per request,
//! after-GC series), the findings as a list, and the baseline comparison.
//! No raw HTML, so it renders anywhere GFM does.

use std::fmt::Write;

use super::Exporter;
use super::diagnosis_view::DiagnosisView;
use super::series_view::{self, Work, figure_text};
use crate::model::RunResult;
use crate::units::MB;

pub struct MarkdownExporter;

/// Makes text safe inside a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

impl Exporter for MarkdownExporter {
    fn render(&self, result: &RunResult) -> anyhow::Result<String> {
        let mut out = String::new();
        let _ = writeln!(out, "### leakcheck: {}\n", result.headline());
        let connections = match result.settings.watch {
            Some(_) => String::new(),
            None => format!(", {} connections", result.settings.connections),
        };
        let _ = writeln!(
            out,
            "Target {}. {}{connections}, {} probe. Run {}.\n",
            super::target_view::target_text(result),
            result.settings.schedule(),
            result.target.probe.map_or("no", |p| p.name()),
            result.outcome.status
        );
        for gap in &result.target.runtime_gaps {
            let _ = writeln!(out, "- not read: {gap}");
        }
        if !result.target.runtime_gaps.is_empty() {
            out.push('\n');
        }
        let work = Work::of(result);
        let failures = match work {
            Work::Requests => "errors / non-2xx",
            Work::Iterations => "failed iterations",
            Work::Served => "requests served",
        };
        let _ = writeln!(
            out,
            "| route | verdict | retained / {} | after-GC heapUsed (MB) | {failures} |",
            result.settings.unit.name()
        );
        let _ = writeln!(out, "|---|---|--:|---|--:|");
        // Found routes (dozens, none chosen by the reader): leaks first.
        let rows: Vec<&crate::model::RouteResult> = match &result.settings.discovery {
            Some(_) => super::ranking::ranked(result),
            None => result.routes.iter().collect(),
        };
        for route in rows {
            let verdict = route.verdict.as_ref().map_or("none".to_string(), |v| {
                format!("{}{}", v.kind.name(), if v.fails_gate { " ⚠" } else { "" })
            });
            let retained = route.figure().map_or("–".to_string(), figure_text);
            let series: Vec<String> = route
                .after_gc_series()
                .map(|s| format!("{:.1}", s.heap_used as f64 / MB))
                .collect();
            let (errors, non_2xx) = route.failed_requests();
            let failed = match work {
                Work::Requests => format!("{errors} / {non_2xx}"),
                Work::Iterations => errors.to_string(),
                Work::Served => route
                    .watch
                    .as_ref()
                    .and_then(|w| w.served)
                    .map_or("–".into(), |n| n.to_string()),
            };
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {failed} |",
                cell(&route.route),
                verdict,
                retained,
                series.join(" → "),
            );
        }
        if let Some(found) = &result.settings.discovery {
            let _ = writeln!(
                out,
                "\nRoutes found: {} declared by {} ({}); {} checked, {} skipped.",
                found.declared,
                found.origin,
                found.source,
                found.checked.len(),
                found.skipped.len()
            );
            for skipped in &found.skipped {
                let _ = writeln!(
                    out,
                    "- skipped `{} {}`: {}",
                    skipped.method,
                    cell(&skipped.pattern),
                    skipped.reason
                );
            }
        }
        out.push('\n');
        for route in &result.routes {
            let Some(v) = &route.verdict else { continue };
            let _ = writeln!(
                out,
                "- `{}`: {}. *What to do:* {}",
                cell(&route.route),
                v.summary,
                v.action
            );
            for f in &v.findings {
                let _ = writeln!(out, "  - {}: {}", f.kind, f.message);
            }
            for line in route.cycles.iter().filter_map(super::loop_view::cycle_line) {
                let _ = writeln!(out, "  - {line}");
            }
            if let Some(line) = super::loop_view::soak_line(route) {
                let _ = writeln!(out, "  - {line}");
            }
            for line in super::watch_view::lines(route) {
                let _ = writeln!(out, "  - {line}");
            }
            if let Some(peak) = super::series_view::peak_text(route) {
                let _ = writeln!(out, "  - peak during load: {peak}");
            }
            let unit = result.settings.unit.name();
            if let Some(line) = super::schedule_view::decided_line(route, unit) {
                let _ = writeln!(out, "  - {line}");
            }
            for line in super::diagnosis_view::isolate_lines(route, result.settings.unit.name()) {
                let _ = writeln!(out, "  - isolate {}", cell(&line));
            }
            for line in super::diagnosis_view::growth_lines(route, unit) {
                let _ = writeln!(out, "  - {}", cell(&line));
            }
            if let Some(d) = &route.diagnosis {
                render_diagnosis(&mut out, d);
            }
            for line in super::diagnosis_view::native_lines(route, unit) {
                let _ = writeln!(out, "  - {}", cell(&line));
            }
        }
        if let Some(error) = &result.outcome.error {
            let _ = writeln!(out, "\n**Run {}:** {}", result.outcome.status, error);
        }
        if let Some(comparison) = &result.comparison {
            let _ = writeln!(out, "\n#### Compared with `{}`\n", comparison.baseline);
            let _ = writeln!(
                out,
                "| route | retained / request before | now | after-GC heapUsed before | now | result |"
            );
            let _ = writeln!(out, "|---|--:|--:|--:|--:|---|");
            for r in &comparison.routes {
                let mbs = |b: Option<u64>| {
                    b.map_or("–".to_string(), |b| format!("{:.1} MB", b as f64 / MB))
                };
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} | {} | {} |",
                    cell(&r.route),
                    r.old_retained_per_request
                        .map_or("–".into(), |v| series_view::value_text(&r.metric, v)),
                    r.new_retained_per_request
                        .map_or("–".into(), |v| series_view::value_text(&r.metric, v)),
                    mbs(r.old_after_gc_heap_used),
                    mbs(r.new_after_gc_heap_used),
                    if r.regressed { "**regressed**" } else { "ok" }
                );
            }
        }
        Ok(super::paths::RelativePaths::of(result).apply(&out))
    }
}

/// The holders and sites under a route's verdict, as list items.
fn render_diagnosis(out: &mut String, d: &crate::model::Diagnosis) {
    let view = DiagnosisView::new(d);
    for h in &view.holders {
        let _ = writeln!(
            out,
            "  - held by `{}` ({}{}){}: {}; {} KB retained",
            cell(h.name),
            h.kind,
            h.script
                .as_deref()
                .map_or(String::new(), |s| format!(", `{s}`")),
            h.owner
                .as_deref()
                .map_or(String::new(), |o| format!(", {o}")),
            h.new_objects,
            h.retained_kb
        );
    }
    for site in &view.sites {
        let _ = writeln!(
            out,
            "  - allocated by `{}` at `{}` ({}; {} KB {})",
            site.function, site.location, site.owner, site.kb, view.site_bytes
        );
        if let Some(stored) = &site.stored {
            let _ = writeln!(out, "    - stored at `{}`", stored.replace('`', "'"));
        }
    }
    if let Some(caveat) = view.caveat {
        let _ = writeln!(out, "  - ({caveat})");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RouteDiscovery, SkippedRoute, VerdictKind};

    use crate::report::ranking::judged_route as route;

    #[test]
    fn found_routes_are_ranked_leaks_first_with_the_skipped_named() {
        let mut result = RunResult {
            routes: vec![
                route("/a", VerdictKind::NoRetention, 2.0),
                route("/b", VerdictKind::Retention, 900.0),
            ],
            ..RunResult::default()
        };
        let given = MarkdownExporter.render(&result).unwrap();
        assert!(given.find("`/a`") < given.find("`/b`"), "{given}");
        result.settings.discovery = Some(RouteDiscovery {
            source: "app".into(),
            origin: "express 4".into(),
            declared: 3,
            skipped: vec![SkippedRoute {
                method: "POST".into(),
                pattern: "/orders".into(),
                reason: "add --methods POST".into(),
            }],
            ..RouteDiscovery::default()
        });
        let found = MarkdownExporter.render(&result).unwrap();
        assert!(found.find("`/b`") < found.find("`/a`"), "{found}");
        assert!(
            found.contains("- skipped `POST /orders`: add --methods POST"),
            "{found}"
        );
    }
}
