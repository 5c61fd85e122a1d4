//! The human summary: per route, the seed's table of readings in MB with one
//! decimal, the retained bytes per request, and the verdict.

use std::fmt::Write;

use super::Exporter;
use crate::model::{RouteResult, RunResult};
use crate::probe::Sample;
use crate::units::{mb_cell, per_request};

pub struct TerminalExporter;

impl Exporter for TerminalExporter {
    fn render(&self, result: &RunResult) -> anyhow::Result<String> {
        let mut out = String::new();
        let s = &result.settings;
        writeln!(
            out,
            "target: {} (pid {}, node {}, probe {})",
            if result.target.command.is_empty() {
                result.target.url.clone()
            } else {
                result.target.command.join(" ")
            },
            result.target.pid.map_or("?".into(), |p| p.to_string()),
            result.target.node_version.as_deref().unwrap_or("?"),
            result.target.probe
        )?;
        writeln!(
            out,
            "load:   {} cycles × {} requests, {} connections",
            s.cycles, s.requests_per_cycle, s.connections
        )?;
        for route in &result.routes {
            out.push('\n');
            render_route(&mut out, route)?;
        }
        if result.outcome.status != "complete" {
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

fn render_route(out: &mut String, route: &RouteResult) -> std::fmt::Result {
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
    }
    if let Some(r) = &route.retained_bytes_per_request {
        writeln!(
            out,
            "retained per request: heapUsed {} · external {} · arrayBuffers {} · rss {}",
            per_request(r.heap_used),
            per_request(r.external),
            per_request(r.array_buffers),
            per_request(r.rss)
        )?;
    }
    match &route.verdict {
        Some(v) => {
            writeln!(
                out,
                "verdict: {}{}: {}",
                v.kind.name(),
                if v.leak { " (leak)" } else { "" },
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
        render_diagnosis(out, d)?;
    }
    Ok(())
}

fn render_diagnosis(out: &mut String, d: &crate::model::Diagnosis) -> std::fmt::Result {
    writeln!(
        out,
        "diagnosis: one more cycle of {} requests between two heap snapshots ({:.1} + {:.1} MB); target rss {} → {} MB",
        d.requests,
        d.snapshot_bytes[0] as f64 / 1e6,
        d.snapshot_bytes[1] as f64 / 1e6,
        mb_cell(d.target_rss_before),
        mb_cell(d.target_rss_after)
    )?;
    for group in d.holders_by_object().into_iter().take(3) {
        let h = group[0];
        let new_bytes: u64 = group.iter().map(|h| h.new_bytes).sum();
        writeln!(
            out,
            "  held by `{}` ({}{}): {}; {} KB new, {} KB retained by the {} @{}",
            h.name,
            h.kind,
            h.script
                .as_deref()
                .map_or(String::new(), |s| format!(", {s}")),
            crate::model::new_objects_text(&group),
            new_bytes / 1024,
            h.retained_bytes / 1024,
            h.holder_class,
            h.holder_id
        )?;
        writeln!(out, "    {}", h.path_text)?;
    }
    for site in d.allocation_sites.iter().take(3) {
        writeln!(
            out,
            "  allocated at {} {}:{}:{} ({} KB sampled, still alive)",
            site.function,
            site.url,
            site.line,
            site.column,
            site.bytes / 1024
        )?;
        if let (Some(line), Some(text)) = (site.holder_line, &site.holder_line_text) {
            writeln!(out, "    line {line}: {text}")?;
        }
    }
    if !d.allocation_sites.is_empty() && !d.sites_without_inlining {
        writeln!(out, "  ({})", crate::model::Diagnosis::INLINING_CAVEAT)?;
    }
    Ok(())
}
