//! `leakcheck inspect` and `leakcheck diff`: the snapshot engine on files.
//! (clap's argument structs stop here; the engine takes paths and numbers.)

use std::fmt::Write;
use std::time::Instant;

use crate::cli::{DiffArgs, InspectArgs};
use crate::report::{emit_summary, pretty_json};
use crate::snapshot::{
    BeforeSummary, DiffReport, HeapGraph, InspectReport, ParseOptions, Totals, diff_graph,
    inspect_graph, keep_freed_memory, parse_with, summarise_before,
};
use crate::units::mb;

/// `only_shown_strings`: see `ParseOptions` (for `inspect`).
fn parse_file(
    path: &std::path::Path,
    threads: Option<u16>,
    only_shown_strings: bool,
) -> anyhow::Result<HeapGraph> {
    let file = std::fs::File::open(path)
        .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?;
    let size = file.metadata().ok().map(|m| m.len()).filter(|len| *len > 0);
    let mut options = ParseOptions {
        only_shown_strings,
        ..ParseOptions::default()
    };
    if let Some(threads) = threads {
        options.threads = usize::from(threads);
    }
    parse_with(file, size, options).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// One line on stderr with the engine's phase times, as BENCHMARKS.md quotes them.
fn report_phases(path: &std::path::Path, graph: &Totals, parsed: f64, total: f64, rest: &str) {
    let megabytes = graph.file_bytes as f64 / crate::units::MB;
    eprintln!(
        "{}: {} nodes, {} edges, {megabytes:.1} MB: parsed in {parsed:.2} s ({:.0} MB/s), {rest} in {:.2} s ({:.0} MB/s overall)",
        path.display(),
        graph.nodes,
        graph.edges,
        megabytes / parsed,
        total - parsed,
        megabytes / total
    );
}

pub fn inspect(args: InspectArgs) -> anyhow::Result<()> {
    keep_freed_memory();
    let started = Instant::now();
    let graph = parse_file(&args.snapshot, args.threads, true)?;
    let parsed = started.elapsed().as_secs_f64();
    let threads = args
        .threads
        .map_or(ParseOptions::default().threads, usize::from);
    let report = inspect_graph(graph, args.top, threads);
    let total = started.elapsed().as_secs_f64();
    let rest = "dominators, paths and classes";
    report_phases(&args.snapshot, &report.totals, parsed, total, rest);
    emit_summary(&inspect_text(&report), args.json.as_ref(), || {
        pretty_json(&report)
    })
}

/// Below this combined size the two snapshots are read at the same time,
/// one per core; above it, one after the other, the earlier one summarised
/// and freed first, so peak memory stays near that of the larger file.
const PARALLEL_DIFF_BYTES: u64 = 512 * 1024 * 1024;

fn summarise_file(path: &std::path::Path, threads: Option<u16>) -> anyhow::Result<BeforeSummary> {
    let started = Instant::now();
    let graph = parse_file(path, threads, false)?;
    let (nodes, megabytes) = (
        graph.node_count(),
        graph.file_bytes as f64 / crate::units::MB,
    );
    let summary = summarise_before(graph);
    eprintln!(
        "{}: {nodes} nodes, {megabytes:.1} MB read and summarised in {:.2} s",
        path.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(summary)
}

pub fn diff(args: DiffArgs) -> anyhow::Result<()> {
    keep_freed_memory();
    let size = |p: &std::path::Path| {
        std::fs::metadata(p)
            .map(|m| m.len())
            .unwrap_or(u64::MAX / 2)
    };
    // Small pairs are read side by side; large ones one after the other, so
    // that only one graph is in memory at a time. The phase times are the
    // later snapshot's. Side by side, the earlier snapshot is read on one
    // thread, its own: more would only compete with the later one's workers
    // (the seed-sized pair's diff took 0.21 s that way, 0.19 s this way).
    /// Threads for the earlier snapshot read beside the later one.
    const EARLIER_BESIDE_THREADS: Option<u16> = Some(1);
    let mut started = Instant::now();
    let (before, graph) = if size(&args.before) + size(&args.after) < PARALLEL_DIFF_BYTES {
        std::thread::scope(|scope| {
            let earlier = scope.spawn(|| summarise_file(&args.before, EARLIER_BESIDE_THREADS));
            let later = parse_file(&args.after, args.threads, false);
            let earlier = earlier
                .join()
                .map_err(|_| anyhow::anyhow!("reading {} failed", args.before.display()))?;
            Ok::<_, anyhow::Error>((earlier?, later?))
        })?
    } else {
        let before = summarise_file(&args.before, args.threads)?;
        started = Instant::now();
        (before, parse_file(&args.after, args.threads, false)?)
    };
    let parsed = started.elapsed().as_secs_f64();
    let (_, report) = diff_graph(&before, graph, args.top);
    let total = started.elapsed().as_secs_f64();
    report_phases(
        &args.after,
        &report.after,
        parsed,
        total,
        "dominators, paths and comparison",
    );
    emit_summary(&diff_text(&report), args.json.as_ref(), || {
        pretty_json(&report)
    })
}

fn inspect_text(r: &InspectReport) -> String {
    let mut out = String::new();
    let t = &r.totals;
    let _ = writeln!(
        out,
        "{} nodes, {} edges, {} strings; self sizes {}",
        t.nodes,
        t.edges,
        t.strings,
        mb(t.self_size as f64)
    );
    let _ = writeln!(
        out,
        "\n{:<48} {:>9} {:>12} {:>14}",
        "class", "count", "self size", "retained size"
    );
    for c in &r.classes {
        let _ = writeln!(
            out,
            "{:<48} {:>9} {:>12} {:>14}",
            clip(&c.class, 48),
            c.count,
            c.self_size,
            c.retained_size
        );
    }
    let _ = writeln!(
        out,
        "\nlargest retainers\n{:<12} {:<40} {:>12} {:>14} {:>8}",
        "id", "class", "self size", "retained size", "distance"
    );
    for o in &r.largest_retainers {
        let _ = writeln!(
            out,
            "@{:<11} {:<40} {:>12} {:>14} {:>8}",
            o.id,
            clip(&o.class, 40),
            o.self_size,
            o.retained_size,
            o.distance
        );
    }
    out
}

fn diff_text(r: &DiffReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "nodes  {} -> {}", r.before.nodes, r.after.nodes);
    let _ = writeln!(
        out,
        "\n{:<44} {:>8} {:>9} {:>8} {:>12} {:>11} {:>12}",
        "class", "# New", "# Deleted", "# Delta", "Alloc. Size", "Freed Size", "Size Delta"
    );
    for c in &r.classes {
        let _ = writeln!(
            out,
            "{:<44} {:>8} {:>9} {:>8} {:>12} {:>11} {:>12}",
            clip(&c.class, 44),
            c.new_count,
            c.deleted_count,
            c.delta_count,
            c.alloc_size,
            c.freed_size,
            c.size_delta
        );
    }
    let _ = writeln!(out, "\ngrew by self size:");
    for g in r.grew_by_self_size.iter().take(6) {
        let _ = writeln!(
            out,
            "  {:<40} {:>8} objects  {:.2} MB",
            clip(&g.key, 40),
            g.count_delta,
            g.self_size_delta as f64 / 1048576.0
        );
    }
    for h in &r.holders {
        let _ = writeln!(
            out,
            "\nheld by {} ({}): {} new {} objects, {} new, {} retained by the {} @{}",
            h.name,
            h.kind,
            h.objects,
            h.class,
            mb(h.new_bytes as f64),
            mb(h.retained_bytes as f64),
            h.holder_class,
            h.holder_id
        );
        if let Some(script) = &h.script {
            let _ = writeln!(out, "  declared in {script}");
        }
        let _ = writeln!(out, "  {}", h.path_text);
    }
    out
}

fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let cut: String = text.chars().take(width - 1).collect();
        format!("{cut}…")
    }
}
