//! The HTML report: one self-contained file (inline CSS and SVG, no script,
//! no network) that reads top-down: per route the verdict first, then the
//! charts, the cycle table and the load figures.

use std::fmt::Write;

use super::Exporter;
use super::diagnosis_view::DiagnosisView;
use super::series_view::{self, Work, figure_text};
use super::svg::{FitLine, Series, Style, legend, line_chart};
use crate::model::{self, RouteResult, RunResult, VerdictKind};
use crate::units::mb_cell;

pub struct HtmlExporter;

/// Escapes text for HTML content and attributes.
pub fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = r#"
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b1b1b; background: #fff; margin: 2rem auto; max-width: 1040px; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; } h2 { font-size: 1.2rem; margin: 2rem 0 .5rem; border-top: 1px solid #ccc; padding-top: 1rem; }
.meta { color: #444; margin: 0 0 1rem; } code { font-size: .92em; }
.verdict { border-left: 6px solid #555; padding: .5rem .9rem; background: #f6f6f6; margin: .5rem 0 1rem; }
.verdict.fails_gate { border-color: #B00020; background: #fff3f3; } .verdict.clean { border-color: #00795C; background: #f1fbf7; }
.kind { font-weight: 700; text-transform: uppercase; letter-spacing: .03em; }
.findings { margin: .3rem 0 0 1.2rem; padding: 0; } .action { margin: .3rem 0 0; }
.charts { display: flex; flex-wrap: wrap; gap: .5rem 1rem; } .charts figure { margin: 0; }
svg.chart text, svg.legend text { font: 11px system-ui, sans-serif; fill: #222; }
svg.chart .chart-title { font-weight: 600; font-size: 12px; }
svg.chart .grid { stroke: #ddd; stroke-width: 1; } svg .fit { stroke: #000; stroke-width: 1.5; stroke-dasharray: 1 3; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ccc; padding: .2rem .5rem; text-align: right; } th { background: #f0f0f0; } td.l, th.l { text-align: left; white-space: nowrap; }
.regressed { color: #B00020; font-weight: 700; }
.diagnosis { border: 1px solid #ccc; padding: .5rem .9rem; margin: 0 0 1rem; } .diagnosis ul { margin: .2rem 0 .5rem 1.2rem; padding: 0; }
@media print { body { margin: 0; max-width: none; } h2 { break-before: auto; } .charts { break-inside: avoid; } }
"#;

impl Exporter for HtmlExporter {
    fn render(&self, result: &RunResult) -> anyhow::Result<String> {
        let mut out = String::new();
        let headline = result.headline();
        let _ = write!(
            out,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>leakcheck: {}</title><style>{STYLE}</style></head><body>\n",
            esc(&headline)
        );
        let _ = writeln!(out, "<h1>leakcheck: {}</h1>", esc(&headline));
        let _ = writeln!(
            out,
            "<p class=\"meta\">Target {}, memory read through the {} probe. Load: {} on {} connections. Run {}.</p>",
            esc(&super::target_view::target_text(result)),
            esc(result.target.probe.map_or("no", |p| p.name())),
            esc(&result.settings.schedule()),
            result.settings.connections,
            esc(result.outcome.status.name())
        );
        if let Some(error) = &result.outcome.error {
            let _ = writeln!(
                out,
                "<p class=\"verdict leak\"><span class=\"kind\">Run {}</span>: {}</p>",
                esc(result.outcome.status.name()),
                esc(error)
            );
        }
        render_overview(&mut out, result);
        if let Some(comparison) = &result.comparison {
            render_comparison(&mut out, comparison);
        }
        let work = Work::of(result);
        for (index, route) in result.routes.iter().enumerate() {
            render_route(&mut out, route, index, result.settings.unit.name(), work);
        }
        let _ = writeln!(
            out,
            "<p class=\"meta\">Memory in MB (2<sup>20</sup> bytes); counted series (DOM nodes, handles, listeners, counters) as counts. After-GC readings follow a settled full collection; the fitted line is the least-squares trend of the after-GC series against the {}s done.</p>\n</body></html>",
            result.settings.unit.name()
        );
        Ok(super::paths::RelativePaths::of(result).apply(&out))
    }
}

/// One line per route at the top: what a reader needs before the details.
fn render_overview(out: &mut String, result: &RunResult) {
    let _ = writeln!(
        out,
        "<table><tr><th class=\"l\">route</th><th class=\"l\">verdict</th><th>retained / {}</th><th>after-GC heapUsed, first → last</th><th>errors</th><th>non-2xx</th></tr>",
        result.settings.unit.name()
    );
    // Found routes (dozens, none chosen by the reader): leaks first; the
    // anchors keep each route's place in the details below.
    let mut rows: Vec<(usize, &crate::model::RouteResult)> =
        result.routes.iter().enumerate().collect();
    if result.settings.discovery.is_some() {
        rows.sort_by(|(_, a), (_, b)| super::ranking::compare(a, b));
    }
    for (index, route) in rows {
        let verdict = route.verdict.as_ref().map_or("none".to_string(), |v| {
            format!(
                "{}{}",
                v.kind.name(),
                if v.fails_gate { " (leak)" } else { "" }
            )
        });
        let retained = route.figure().map_or("–".to_string(), figure_text);
        let first = route.baseline.as_ref().map(|s| s.heap_used);
        let last = route.cycles.last().map(|c| c.after_gc.heap_used);
        let series = match (first, last) {
            (Some(a), Some(b)) => format!("{} → {} MB", mb_cell(a), mb_cell(b)),
            _ => "–".to_string(),
        };
        let (errors, non_2xx) = route.failed_requests();
        let _ = writeln!(
            out,
            "<tr><td class=\"l\"><a href=\"#route-{index}\">{}</a></td><td class=\"l\">{}</td><td>{retained}</td><td>{series}</td><td>{errors}</td><td>{non_2xx}</td></tr>",
            esc(&route.route),
            esc(&verdict)
        );
    }
    out.push_str("</table>\n");
    if let Some(found) = &result.settings.discovery {
        let _ = writeln!(
            out,
            "<p class=\"meta\">Routes found: {} declared by {} ({}); {} checked, {} skipped.</p>",
            found.declared,
            esc(&found.origin),
            esc(&found.source),
            found.checked.len(),
            found.skipped.len()
        );
        if !found.skipped.is_empty() {
            out.push_str("<ul>\n");
            for skipped in &found.skipped {
                let _ = writeln!(
                    out,
                    "<li>skipped <code>{} {}</code>: {}</li>",
                    esc(&skipped.method),
                    esc(&skipped.pattern),
                    esc(&skipped.reason)
                );
            }
            out.push_str("</ul>\n");
        }
    }
}

fn render_comparison(out: &mut String, comparison: &crate::model::Comparison) {
    let _ = write!(
        out,
        "<h2>Compared with <code>{}</code></h2>\n<table><tr><th class=\"l\">route</th><th>retained / request before</th><th>now</th><th>after-GC heapUsed before</th><th>now</th><th class=\"l\">result</th></tr>\n",
        esc(&comparison.baseline)
    );
    for r in &comparison.routes {
        let _ = writeln!(
            out,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l{}\">{}</td></tr>",
            esc(&r.route),
            r.old_retained_per_request
                .map_or("–".into(), |v| series_view::value_text(&r.metric, v)),
            r.new_retained_per_request
                .map_or("–".into(), |v| series_view::value_text(&r.metric, v)),
            r.old_after_gc_heap_used.map_or("–".into(), mb_cell),
            r.new_after_gc_heap_used.map_or("–".into(), mb_cell),
            if r.regressed { " regressed" } else { "" },
            if r.regressed { "regressed" } else { "ok" }
        );
    }
    out.push_str("</table>\n");
}

fn render_route(out: &mut String, route: &RouteResult, index: usize, unit: &str, work: Work) {
    let _ = writeln!(
        out,
        "<h2 id=\"route-{index}\">Route <code>{}</code></h2>",
        esc(&route.route)
    );
    match &route.verdict {
        Some(v) => {
            let class = if v.fails_gate {
                "leak"
            } else if v.kind == VerdictKind::NoRetention {
                "clean"
            } else {
                ""
            };
            let _ = write!(
                out,
                "<div class=\"verdict {class}\"><span class=\"kind\">{}{}</span> — {}<p class=\"action\"><b>What to do:</b> {}</p>",
                v.kind.name(),
                if v.fails_gate { " (leak)" } else { "" },
                esc(&v.summary),
                esc(&v.action)
            );
            if !v.findings.is_empty() {
                out.push_str("<ul class=\"findings\">");
                for f in &v.findings {
                    let _ = write!(
                        out,
                        "<li><b>{}</b>: {}</li>",
                        esc(f.kind.name()),
                        esc(&f.message)
                    );
                }
                out.push_str("</ul>");
            }
            out.push_str("</div>\n");
        }
        None => out.push_str("<div class=\"verdict\">No cycle completed: no verdict.</div>\n"),
    }
    if let Some(line) = super::loop_view::soak_line(route) {
        let _ = writeln!(out, "<p class=\"action\"><b>Soak:</b> {}</p>", esc(&line));
    }
    for line in super::watch_view::lines(route) {
        let _ = writeln!(out, "<p class=\"action\"><b>Watch:</b> {}</p>", esc(&line));
    }
    if let Some(line) = super::schedule_view::decided_line(route, unit) {
        let _ = writeln!(out, "<p class=\"action\"><b>Cycles:</b> {}</p>", esc(&line));
    }
    render_list(
        out,
        "<b>Worker threads and child processes</b>, each judged on its own heap:",
        super::diagnosis_view::isolate_lines(route, unit),
    );
    render_list(
        out,
        "<b>What grows by count</b>, entries and listeners per unit of work:",
        super::diagnosis_view::growth_lines(route, unit),
    );
    if let Some(d) = &route.diagnosis {
        render_diagnosis(out, d);
    }
    render_list(
        out,
        "<b>Native allocations</b> the measured cycle left, by stack:",
        super::diagnosis_view::native_lines(route, unit),
    );
    render_charts(out, route);
    render_table(out, route, unit, work);
}

/// A heading (HTML, trusted) and a list of escaped lines; nothing when
/// there are no lines.
fn render_list(out: &mut String, heading: &str, lines: Vec<String>) {
    if lines.is_empty() {
        return;
    }
    let _ = write!(out, "<p>{heading}</p><ul>");
    for line in lines {
        let _ = write!(out, "<li>{}</li>", esc(&line));
    }
    out.push_str("</ul>\n");
}

/// The holder first: what a reader came for when the verdict says retention.
fn render_diagnosis(out: &mut String, d: &crate::model::Diagnosis) {
    let view = DiagnosisView::new(d);
    out.push_str(match view.from_profiles_only {
        true => "<div class=\"diagnosis\"><b>What grew</b> (allocation sites whose live sampled bytes grew from the first to the last third of the watch):<ul>",
        false => "<div class=\"diagnosis\"><b>What holds it</b> (two heap snapshots around one more cycle):<ul>",
    });
    for h in &view.holders {
        let _ = write!(
            out,
            "<li><code>{}</code> — {}{}{}: {}; {} KB new, {} KB retained by the {}<br><small><code>{}</code></small></li>",
            esc(h.name),
            esc(h.kind),
            h.script
                .as_deref()
                .map_or(String::new(), |s| format!(" in <code>{}</code>", esc(s))),
            h.owner
                .as_deref()
                .map_or(String::new(), |o| format!(", {}", esc(o))),
            esc(&h.new_objects),
            h.new_kb,
            h.retained_kb,
            esc(h.holder_class),
            esc(h.path)
        );
    }
    out.push_str("</ul>");
    if !view.sites.is_empty() {
        out.push_str(match view.from_profiles_only {
            true => {
                "<b>Allocated by</b> (sampled, grew from the first to the last third of the watch)"
            }
            false => "<b>Allocated by</b> (sampled, still alive after the cycle)",
        });
        if let Some(caveat) = view.caveat {
            out.push_str(" — ");
            out.push_str(caveat);
        }
        out.push_str(":<ul>");
        for site in &view.sites {
            let _ = write!(
                out,
                "<li><code>{}</code> {} ({}) — {} KB",
                esc(site.function),
                esc(&site.location),
                esc(&site.owner),
                site.kb
            );
            if let Some(stored) = &site.stored {
                let _ = write!(out, "<br>stored at <code>{}</code>", esc(stored));
            }
            out.push_str("</li>");
        }
        out.push_str("</ul>");
    }
    let _ = writeln!(
        out,
        "<small>Snapshots {:.1} + {:.1} MB; the target's rss went from {:.1} to {:.1} MB while they were written.</small></div>",
        view.snapshot_mb[0], view.snapshot_mb[1], view.rss_before_mb, view.rss_after_mb
    );
}

/// A chart per series `series_view::charted` picks: the verdict's first,
/// then what grew, then the memory the target reported.
fn render_charts(out: &mut String, route: &RouteResult) {
    let Some(baseline) = &route.baseline else {
        return;
    };
    let labels: Vec<String> = (0..=route.cycles.len()).map(|i| i.to_string()).collect();
    out.push_str("<div class=\"charts\">");
    for series in series_view::charted(route) {
        let (unit, scale) = series_view::chart_scale(&series);
        let read = |s: &crate::model::Sample| s.value(&series).map(|v| v / scale);
        let after_gc: Vec<Option<f64>> = std::iter::once(read(baseline))
            .chain(route.cycles.iter().map(|c| read(&c.after_gc)))
            .collect();
        let after_load: Vec<Option<f64>> = std::iter::once(None)
            .chain(route.cycles.iter().map(|c| read(&c.after_load)))
            .collect();
        let fit = fitted_line(route, &series, &after_gc, scale);
        let mut lines = vec![
            Series {
                label: "after GC",
                values: after_gc,
                style: Style::Primary,
            },
            Series {
                label: "after load",
                values: after_load,
                style: Style::Secondary,
            },
        ];
        if let Some(values) = series_view::peak_values(route, &series, scale) {
            lines.push(Series {
                label: "peak during load",
                values,
                style: Style::Peak,
            });
        }
        let _ = write!(
            out,
            "<figure data-series=\"{}\">{}</figure>",
            esc(series.name()),
            line_chart(series.name(), unit, &labels, &lines, fit.as_ref())
        );
    }
    if let Some(chart) = super::loop_view::chart(route) {
        let _ = write!(out, "<figure data-series=\"event-loop\">{chart}</figure>");
    }
    out.push_str("</div>");
    out.push_str(&legend());
    if let Some(unread) = series_view::not_read(route) {
        let _ = write!(out, "<p class=\"meta\">Not read: {}.</p>", esc(&unread));
    }
    let lines: Vec<String> = route
        .cycles
        .iter()
        .filter_map(super::loop_view::cycle_line)
        .collect();
    if !lines.is_empty() {
        out.push_str("<ul class=\"findings\">");
        for line in lines {
            let _ = write!(out, "<li>{}</li>", esc(&line));
        }
        out.push_str("</ul>\n");
    }
    out.push('\n');
}

/// The verdict's fit, drawn from its first fitted cycle to the last, through
/// the after-GC mean (the least-squares line passes through the means).
fn fitted_line(
    route: &RouteResult,
    metric: &model::Series,
    after_gc: &[Option<f64>],
    scale: f64,
) -> Option<FitLine> {
    let fit = route.verdict.as_ref()?.fit(metric)?;
    let first = fit.fitted_from_cycle as usize;
    let last = route.cycles.len();
    if last <= first {
        return None;
    }
    let mut cumulative = vec![0.0];
    for c in &route.cycles {
        cumulative.push(cumulative.last().copied().unwrap_or(0.0) + c.responses as f64);
    }
    let xs = &cumulative[first..=last];
    let ys: Vec<f64> = after_gc[first..=last]
        .iter()
        .map(|v| v.unwrap_or(0.0))
        .collect();
    let mean_x = xs.iter().sum::<f64>() / xs.len() as f64;
    let mean_y = ys.iter().sum::<f64>() / ys.len() as f64;
    let slope = fit.slope_bytes_per_request / scale;
    let at = |x: f64| mean_y + slope * (x - mean_x);
    Some(FitLine {
        from: (first as f64, at(xs[0])),
        to: (last as f64, at(xs[xs.len() - 1])),
    })
}

/// The readings per cycle: the memory the target reported, then the work
/// in its own unit (requests or iterations).
fn render_table(out: &mut String, route: &RouteResult, unit: &str, work: Work) {
    let memory = series_view::memory_columns(route);
    out.push_str("<table class=\"cycles\"><tr><th>cycle</th><th class=\"l\">reading</th>");
    for m in &memory {
        let _ = write!(out, "<th>{}</th>", m.label());
    }
    for column in work.columns() {
        let _ = write!(out, "<th>{column}</th>");
    }
    out.push_str("</tr>\n");
    let cells = |s: &crate::model::Sample| {
        memory
            .iter()
            .map(|m| format!("<td>{}</td>", mb_cell(s.get(*m))))
            .collect::<String>()
    };
    let blank = format!("<td colspan=\"{}\"></td>", work.columns().len());
    if let Some(b) = &route.baseline {
        let _ = writeln!(
            out,
            "<tr><td>0</td><td class=\"l\">after GC</td>{}{blank}</tr>",
            cells(b)
        );
    }
    for c in &route.cycles {
        let work_cells: String = work
            .cells(c)
            .iter()
            .map(|cell| format!("<td>{}</td>", esc(cell)))
            .collect();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"l\">after load</td>{}{work_cells}</tr>",
            c.cycle,
            cells(&c.after_load)
        );
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"l\">after GC</td>{}{blank}</tr>",
            c.cycle,
            cells(&c.after_gc)
        );
    }
    out.push_str("</table>\n");
    if let Some(failure) = work.first_failure(route) {
        let _ = writeln!(out, "<p>First failure: {}</p>", esc(&failure));
    }
    let parts = series_view::retained_parts(route);
    if !parts.is_empty() {
        let _ = writeln!(
            out,
            "<p>Retained per {unit}: {}</p>",
            esc(&parts.join(" · "))
        );
    }
    if let Some(peak) = series_view::peak_text(route) {
        let _ = writeln!(out, "<p>Peak during load: {}</p>", esc(&peak));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RouteDiscovery, SkippedRoute, VerdictKind};

    use crate::report::ranking::judged_route as route;

    #[test]
    fn found_routes_head_the_overview_leaks_first_keeping_their_anchors() {
        let mut result = RunResult {
            routes: vec![
                route("/a", VerdictKind::NoRetention, 2.0),
                route("/b", VerdictKind::Retention, 900.0),
            ],
            ..RunResult::default()
        };
        result.settings.discovery = Some(RouteDiscovery {
            source: "openapi".into(),
            origin: "openapi 3.1.0".into(),
            declared: 3,
            skipped: vec![SkippedRoute {
                method: "GET".into(),
                pattern: "/admin".into(),
                reason: "answered 401".into(),
            }],
            ..RouteDiscovery::default()
        });
        let html = HtmlExporter.render(&result).unwrap();
        let leak = html
            .find("<a href=\"#route-1\">/b</a>")
            .expect("the leak's row");
        let clean = html
            .find("<a href=\"#route-0\">/a</a>")
            .expect("the clean row");
        assert!(leak < clean, "{html}");
        assert!(
            html.contains("<li>skipped <code>GET /admin</code>: answered 401</li>"),
            "{html}"
        );
    }
}
