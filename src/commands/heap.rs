//! `leakcheck inspect` and `leakcheck diff`: the snapshot engine on files.
//! The text tables are the report's (`report::heap`).

use std::time::Instant;

use anyhow::Context;

use crate::report::heap::{diff_text, inspect_text};
use crate::report::{emit_summary, pretty_json};
use crate::settings::{DiffProps, InspectProps};
use crate::snapshot::{
    BeforeSummary, HeapGraph, ParseOptions, Totals, diff_graph, inspect_graph, keep_freed_memory,
    parse_with, summarise_before,
};

/// `only_shown_strings`: see `ParseOptions` (for `inspect`).
fn parse_file(
    path: &std::path::Path,
    threads: Option<u16>,
    only_shown_strings: bool,
) -> anyhow::Result<HeapGraph> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let size = file.metadata().ok().map(|m| m.len()).filter(|len| *len > 0);
    let mut options = ParseOptions {
        only_shown_strings,
        ..ParseOptions::default()
    };
    if let Some(threads) = threads {
        options.threads = usize::from(threads);
    }
    // The parse error keeps its source (an I/O error reading the file).
    parse_with(file, size, options).with_context(|| path.display().to_string())
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

pub fn inspect(args: InspectProps) -> anyhow::Result<()> {
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

pub fn diff(args: DiffProps) -> anyhow::Result<()> {
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

/// `leakcheck redact`: each snapshot rewritten into `out` under its own
/// name, with one key for all of them; prints the rate, for the bench.
pub fn redact(snapshots: &[std::path::PathBuf], out: &std::path::Path) -> anyhow::Result<()> {
    keep_freed_memory();
    std::fs::create_dir_all(out)
        .with_context(|| format!("--out {} cannot be created", out.display()))?;
    let redactor = crate::snapshot::Redactor::default();
    for from in snapshots {
        let name = from.file_name().ok_or_else(|| {
            anyhow::anyhow!("{} is not a file: give .heapsnapshot files", from.display())
        })?;
        let to = out.join(name);
        if to.canonicalize().ok() == from.canonicalize().ok() {
            anyhow::bail!(
                "{} would overwrite itself: give --out another folder",
                from.display()
            );
        }
        let started = Instant::now();
        let done = redactor.redact(from, &to)?;
        let seconds = started.elapsed().as_secs_f64();
        crate::report::to_stderr(&format!(
            "{}: {} strings, {} kept as names, {} redacted; {:.1} MB in {seconds:.2} s ({:.0} MB/s)\n",
            to.display(),
            done.strings,
            done.kept,
            done.strings - done.kept,
            done.bytes_in as f64 / 1e6,
            done.bytes_in as f64 / 1e6 / seconds.max(1e-9)
        ));
    }
    Ok(())
}
