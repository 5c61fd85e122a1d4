//! The human summary: per route, the method's table of readings in MB with one
//! decimal, the retained bytes per request, and the verdict.

use std::fmt::Write;

use super::Exporter;
use super::diagnosis_view::DiagnosisView;
use crate::model::Sample;
use crate::model::{OutcomeStatus, RouteResult, RunResult, Unit};
use crate::units::{mb_cell, per_request};

pub struct TerminalExporter;

impl Exporter for TerminalExporter {
    fn render(&self, result: &RunResult) -> anyhow::Result<String> {
        let mut out = String::new();
        let s = &result.settings;
        writeln!(
            out,
            "target: {} (pid {}, {} {}, probe {})",
            if result.target.command.is_empty() {
                result.target.url.clone()
            } else {
                result.target.command.join(" ")
            },
            result.target.pid.map_or("?".into(), |p| p.to_string()),
            result.settings.runtime().to_lowercase(),
            result.target.node_version.as_deref().unwrap_or("?"),
            result.target.probe.map_or("none", |p| p.name())
        )?;
        let how = match (&s.scenario, &s.load_cmd) {
            (Some(file), _) => format!(" of scenario {file}"),
            (_, Some(command)) => format!(", driven by `{command}`"),
            _ => String::new(),
        };
        writeln!(
            out,
            "load:   {}{how}, {} connection{}{}",
            s.schedule(),
            s.connections,
            if s.connections == 1 { "" } else { "s" },
            s.abort
                .map_or(String::new(), |a| format!(", {:.0} % hung up", a * 100.0))
        )?;
        for route in &result.routes {
            out.push('\n');
            render_route(&mut out, route, result.settings.unit)?;
        }
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
        Ok(out)
    }
}

const HEADER: &str = "cycle  reading        rss  heapTotal  heapUsed  external  arrayBuffers   requests  errors  non-2xx    req/s";

fn memory_cells(sample: &Sample) -> String {
    format!(
        "{:>7}  {:>9}  {:>8}  {:>8}  {:>12}",
        mb_cell(sample.rss),
        mb_cell(sample.heap_total),
        mb_cell(sample.heap_used),
        mb_cell(sample.external),
        mb_cell(sample.array_buffers)
    )
}

fn render_route(out: &mut String, route: &RouteResult, unit: Unit) -> std::fmt::Result {
    writeln!(out, "route {}  (memory in MB)", route.route)?;
    writeln!(out, "{HEADER}")?;
    if let Some(baseline) = &route.baseline {
        writeln!(
            out,
            "{:>5}  {:<10} {}",
            0,
            "after GC",
            memory_cells(baseline)
        )?;
    }
    for cycle in &route.cycles {
        writeln!(
            out,
            "{:>5}  {:<10} {}  {:>9}  {:>6}  {:>7}  {:>7.0}",
            cycle.cycle,
            "after load",
            memory_cells(&cycle.after_load),
            cycle.requests,
            cycle.errors,
            cycle.non_2xx,
            cycle.load.requests_per_second
        )?;
        writeln!(
            out,
            "{:>5}  {:<10} {}",
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
    if let Some(r) = &route.retained_bytes_per_request {
        writeln!(
            out,
            "retained per {}: heapUsed {} · external {} · arrayBuffers {} · rss {}",
            unit.name(),
            per_request(r.heap_used),
            per_request(r.external),
            per_request(r.array_buffers),
            per_request(r.rss)
        )?;
    }
    for line in route.cycles.iter().filter_map(super::loop_view::cycle_line) {
        writeln!(out, "loop  {line}")?;
    }
    if let Some(line) = super::loop_view::soak_line(route) {
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
        writeln!(
            out,
            "  allocated at {} {} [{}] ({} KB sampled, still alive)",
            site.function, site.location, site.owner, site.kb
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
