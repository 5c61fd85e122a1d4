//! The human summary: per route, the method's table of readings in MB with one
//! decimal, the retained bytes per request, and the verdict.

use std::fmt::Write;

use super::Exporter;
use super::diagnosis_view::DiagnosisView;
use super::series_view::{self, Work};
use crate::model::{OutcomeStatus, RouteResult, RunResult, Sample, Unit};
use crate::units::mb_cell;

pub struct TerminalExporter;

impl Exporter for TerminalExporter {
    fn render(&self, result: &RunResult) -> anyhow::Result<String> {
        let mut out = String::new();
        let s = &result.settings;
        writeln!(
            out,
            "target: {}, probe {}",
            super::target_view::target_text(result),
            result.target.probe.map_or("none", |p| p.name())
        )?;
        for gap in &result.target.runtime_gaps {
            writeln!(out, "        not read: {gap}")?;
        }
        let how = match (&s.scenario, &s.load_cmd) {
            (Some(file), _) => format!(" of scenario {file}"),
            (_, Some(command)) => format!(", driven by `{command}`"),
            _ => String::new(),
        };
        if s.watch.is_some() {
            writeln!(out, "watch:  {}", s.schedule())?;
        } else {
            writeln!(
                out,
                "load:   {}{how}, {} connection{}{}",
                s.schedule(),
                s.connections,
                if s.connections == 1 { "" } else { "s" },
                s.abort
                    .map_or(String::new(), |a| format!(", {:.0} % hung up", a * 100.0))
            )?;
        }
        if let Some(found) = &s.discovery {
            writeln!(
                out,
                "routes: {} of {} declared by {} ({}), {} skipped",
                found.checked.len(),
                found.declared,
                found.origin,
                found.source,
                found.skipped.len()
            )?;
        }
        let work = Work::of(result);
        for route in &result.routes {
            out.push('\n');
            render_route(&mut out, route, result.settings.unit, work)?;
        }
        super::ranking::render(&mut out, result, result.settings.unit.name())?;
        if result.outcome.status != OutcomeStatus::Complete {
            writeln!(
                out,
                "\nrun {}: {}",
                result.outcome.status,
                result.outcome.error.as_deref().unwrap_or("")
            )?;
            if !result.outcome.target_output.is_empty() {
                writeln!(out, "last output of the target:")?;
                for line in result.outcome.target_output.iter().rev().take(10).rev() {
                    writeln!(out, "  | {line}")?;
                }
            }
        }
        Ok(super::paths::RelativePaths::of(result).apply(&out))
    }
}

/// Right-aligned cells, each at least as wide as its header.
fn row(cells: &[String], headers: &[&str]) -> String {
    cells
        .iter()
        .zip(headers)
        .map(|(cell, header)| format!("{cell:>width$}", width = header.len().max(7)))
        .collect::<Vec<_>>()
        .join("  ")
}

fn render_route(out: &mut String, route: &RouteResult, unit: Unit, work: Work) -> std::fmt::Result {
    writeln!(out, "route {}  (memory in MB)", route.route)?;
    let memory = series_view::memory_columns(route);
    let memory_headers: Vec<&str> = memory.iter().map(|m| m.label()).collect();
    let work_headers = work.columns();
    writeln!(
        out,
        "cycle  reading     {}  {}",
        row(
            &memory_headers
                .iter()
                .map(|h| h.to_string())
                .collect::<Vec<_>>(),
            &memory_headers
        ),
        row(
            &work_headers
                .iter()
                .map(|h| h.to_string())
                .collect::<Vec<_>>(),
            work_headers
        )
    )?;
    let memory_cells = |sample: &Sample| {
        let cells: Vec<String> = memory.iter().map(|m| mb_cell(sample.get(*m))).collect();
        row(&cells, &memory_headers)
    };
    if let Some(baseline) = &route.baseline {
        writeln!(
            out,
            "{:>5}  {:<10}  {}",
            0,
            "after GC",
            memory_cells(baseline)
        )?;
    }
    for cycle in &route.cycles {
        if route.watch.is_some() {
            // A watch's reading is one, taken after the target's own collection.
            let at = format!("at {:.0} s", cycle.read_at_s.unwrap_or(0.0));
            writeln!(
                out,
                "{:>5}  {at:<10}  {}  {}",
                cycle.cycle,
                memory_cells(&cycle.after_gc),
                row(&work.cells(cycle), work_headers)
            )?;
            continue;
        }
        writeln!(
            out,
            "{:>5}  {:<10}  {}  {}",
            cycle.cycle,
            "after load",
            memory_cells(&cycle.after_load),
            row(&work.cells(cycle), work_headers)
        )?;
        writeln!(
            out,
            "{:>5}  {:<10}  {}",
            cycle.cycle,
            "after GC",
            memory_cells(&cycle.after_gc)
        )?;
        if let Some(driver) = &cycle.driver {
            writeln!(
                out,
                "       --load-cmd: {} in {:.1} s, {} {}s served; output in {}",
                driver.exit,
                driver.duration_s,
                cycle.units,
                unit.name(),
                driver.log
            )?;
            if driver.outlived > 0 {
                writeln!(
                    out,
                    "       --load-cmd left {} processes running past its end (a background \
                     job, setsid or a double fork); leakcheck stopped them",
                    driver.outlived
                )?;
            }
        }
    }
    if let Some(unread) = series_view::not_read(route) {
        writeln!(out, "not read: {unread}")?;
    }
    if let Some(failure) = work.first_failure(route) {
        writeln!(out, "first failure: {failure}")?;
    }
    let parts = series_view::retained_parts(route);
    if !parts.is_empty() {
        writeln!(out, "retained per {}: {}", unit.name(), parts.join(" · "))?;
    }
    if let Some(peak) = series_view::peak_text(route) {
        writeln!(out, "peak during load: {peak}")?;
    }
    for line in route.cycles.iter().filter_map(super::loop_view::cycle_line) {
        writeln!(out, "loop  {line}")?;
    }
    if let Some(line) = super::loop_view::soak_line(route) {
        writeln!(out, "{line}")?;
    }
    for line in super::watch_view::lines(route) {
        writeln!(out, "{line}")?;
    }
    if let Some(line) = super::schedule_view::decided_line(route, unit.name()) {
        writeln!(out, "{line}")?;
    }
    for line in super::diagnosis_view::isolate_lines(route, unit.name()) {
        writeln!(out, "isolate {line}")?;
    }
    for line in super::diagnosis_view::growth_lines(route, unit.name()) {
        writeln!(out, "{line}")?;
    }
    match &route.verdict {
        Some(v) => {
            writeln!(
                out,
                "verdict: {}{}: {}",
                v.kind.name(),
                if v.fails_gate { " (leak)" } else { "" },
                v.summary
            )?;
            writeln!(out, "  what to do: {}", v.action)?;
            for finding in &v.findings {
                writeln!(out, "  note ({}): {}", finding.kind, finding.message)?;
            }
        }
        None => writeln!(out, "verdict: none (no cycle completed)")?,
    }
    if let Some(d) = &route.diagnosis {
        render_diagnosis(out, d, unit)?;
    }
    let mut native = super::diagnosis_view::native_lines(route, unit.name()).into_iter();
    if let Some(first) = native.next() {
        writeln!(out, "{first}")?;
    }
    for line in native {
        writeln!(out, "  {line}")?;
    }
    Ok(())
}

fn render_diagnosis(out: &mut String, d: &crate::model::Diagnosis, unit: Unit) -> std::fmt::Result {
    let view = DiagnosisView::new(d);
    if view.from_profiles_only {
        writeln!(
            out,
            "evidence: the allocation sites whose live sampled bytes grew from the first to the \
             last third of the watch (V8's sampling heap profiler)"
        )?;
        for missing in &d.missing {
            writeln!(out, "  missing: {missing}")?;
        }
    } else {
        writeln!(
            out,
            "diagnosis{}: one more cycle of {} {}s between two heap snapshots ({:.1} + {:.1} MB); target rss {:.1} → {:.1} MB",
            view.isolate.map_or(String::new(), |i| format!(" of {i}")),
            view.requests,
            unit.name(),
            view.snapshot_mb[0],
            view.snapshot_mb[1],
            view.rss_before_mb,
            view.rss_after_mb
        )?;
    }
    for h in &view.holders {
        writeln!(
            out,
            "  held by `{}` ({}{}){}: {}; {} KB new, {} KB retained by the {} @{}",
            h.name,
            h.kind,
            h.script
                .as_deref()
                .map_or(String::new(), |s| format!(", {s}")),
            h.owner
                .as_deref()
                .map_or(String::new(), |o| format!(", {o}")),
            h.new_objects,
            h.new_kb,
            h.retained_kb,
            h.holder_class,
            h.holder_id
        )?;
        writeln!(out, "    {}", h.path)?;
    }
    for site in &view.sites {
        if site.by_name {
            writeln!(
                out,
                "  stored at {} [{}] (found by the holder's name in the source: this runtime \
                 samples no allocations)",
                site.location, site.owner
            )?;
            if let Some(stored) = &site.stored {
                writeln!(out, "    {stored}")?;
            }
            continue;
        }
        writeln!(
            out,
            "  allocated at {} {} [{}] ({} KB {})",
            site.function, site.location, site.owner, site.kb, view.site_bytes
        )?;
        if let Some(stored) = &site.stored {
            writeln!(out, "    {stored}")?;
        }
        if let Some(note) = site.note {
            writeln!(out, "    (source map: {note}; the compiled place is shown)")?;
        }
    }
    if let Some(caveat) = view.caveat {
        writeln!(out, "  ({caveat})")?;
    }
    Ok(())
}
