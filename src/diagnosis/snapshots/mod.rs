//! Naming the holder of a retention, as part of `run`: settle, turn V8's
//! inlining off on a target leakcheck launched (`inlining.rs`), snapshot A,
//! start the sampling heap profiler, one more cycle of the same load,
//! settle, read the profile, snapshot B; then the snapshot engine's diff
//! names what holds the new objects, the profile names the functions that
//! allocated what survived, and their source the line that stores into
//! the holder (`source_line.rs`).
//!
//! Snapshots stream from the inspector straight into the parser on another
//! thread (and to disk only with `--snapshots DIR`, mode 0600): leakcheck
//! never holds a snapshot's text. A snapshot pauses the target and raises
//! its rss for the rest of its life, so `run` diagnoses only after a
//! route's measured series is complete.

pub mod collections;
mod inlining;
pub mod profile;
mod source_line;
mod stored_by_name;

pub use collections::{CollectionCheck, FollowUp, check_collections, follow};

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;

use crate::inspector::snapshot::{ChunkReader, SnapshotTransferError, stream_snapshot_chunks};
use crate::inspector::{Inspector, InspectorError};
use crate::model::Diagnosis;
use crate::private_file::PrivateFile;
use crate::probe::{Probe, ProbeError};
use crate::snapshot::{
    CollectionCounts, HeapGraph, SnapshotParseError, diff_graph, grown_collections,
    summarise_before,
};

/// Bytes between two samples of the sampling heap profiler: small enough
/// that a few thousand retained records are sampled, cheap for the target.
const SAMPLING_INTERVAL: u32 = 4096;
/// Grown classes and allocation sites kept in the diagnosis.
const TOP: usize = 10;
/// A collection is listed when it gained at least this many entries per
/// unit of work: one per request or iteration is what a cache keyed by
/// the request, or a list of every opened view, gains (fuite's threshold
/// too). Growth below it is a collection filling more slowly than the
/// work, which the byte series judge.
pub const MIN_ENTRIES_PER_UNIT: f64 = 1.0;

#[derive(Debug, thiserror::Error)]
pub enum DiagnoseError {
    #[error(
        "the diagnosis needs the inspector probe (this run reads memory another way), and the \
         isolate it names must still run"
    )]
    NoInspector,
    #[error("reading memory failed")]
    Probe(#[from] ProbeError),
    #[error("the inspector failed")]
    Inspector(#[from] InspectorError),
    #[error("taking a snapshot failed")]
    Snapshot(#[from] SnapshotTransferError),
    #[error("a snapshot could not be parsed")]
    Parse(#[from] SnapshotParseError),
    #[error("the snapshot parser stopped")]
    Parser(#[from] tokio::task::JoinError),
    #[error("the extra cycle failed")]
    Work(#[from] crate::cycle::WorkError),
    #[error("cannot write the snapshot file {}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One more cycle of the route's work (a load, a page's actions),
/// answering how many units of work it did, as its workload counts them.
pub type ExtraCycle<'a> = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = Result<crate::cycle::Units, crate::cycle::WorkError>>
            + Send
            + 'a,
    >,
>;

/// What the diagnosis needs besides the probe.
pub struct DiagnosePlan<'a> {
    /// One more cycle of the route's work, run between the snapshots.
    pub work: ExtraCycle<'a>,
    /// Write the two snapshots here too (`--snapshots DIR`).
    pub snapshots_dir: Option<&'a Path>,
    /// A name for the files: the route, made safe for a file name.
    pub label: String,
    /// leakcheck started the target and will stop it, so it may change the
    /// target's JIT for precise allocation sites (see `inlining.rs`).
    pub owns_target: bool,
    /// Diagnose this worker thread or child process (`worker 1`, `pid
    /// 4242`) instead of the main isolate: the one whose heap grows.
    pub isolate: Option<String>,
}

/// A diagnosis, and where a follow-up of its grown collections starts
/// (their counts at snapshot 2 are their `entries_after`).
pub struct Diagnosed {
    pub diagnosis: Diagnosis,
    /// The isolate's inspector the snapshots were taken through.
    pub inspector: Inspector,
    /// The reading taken after the extra cycle, before snapshot 2.
    pub settled: crate::model::Sample,
}

/// Runs the diagnosis for one route; `say` reports progress to the user.
pub async fn diagnose(
    probe: &mut dyn Probe,
    plan: DiagnosePlan<'_>,
    say: &dyn Fn(&str),
) -> Result<Diagnosed, DiagnoseError> {
    // A handle of its own, so the probe stays free to take readings.
    let inspector = match &plan.isolate {
        Some(id) => probe.isolate_inspector(id),
        None => probe.inspector().cloned(),
    }
    .ok_or(DiagnoseError::NoInspector)?;
    let inspector = &inspector;
    let settled = probe.settled_sample().await?;
    // Bun's JavaScriptCore has neither V8's coverage nor its sampling heap
    // profiler: its holder comes from the snapshots alone, and says so.
    let sampling = inspector.dialect.has_heap_profiler();
    let sites_without_inlining =
        sampling && plan.owns_target && inlining::stop_inlining(inspector).await?;
    let started = Instant::now();
    say("taking heap snapshot 1 of 2: the target is paused while V8 writes it");
    let file_a = plan
        .snapshots_dir
        .map(|d| d.join(format!("{}-before.heapsnapshot", plan.label)));
    let summarise = |graph: HeapGraph| {
        let counts = CollectionCounts::of(&graph);
        (summarise_before(graph), counts)
    };
    let ((before, counts), bytes_a) =
        snapshot_into(inspector, file_a.as_deref(), summarise).await?;
    let mut seconds = started.elapsed().as_secs_f64();
    if sampling {
        inspector
            .call(
                "HeapProfiler.startSampling",
                json!({ "samplingInterval": SAMPLING_INTERVAL }),
            )
            .await?;
        say("one more cycle under the sampling heap profiler");
    } else {
        say("one more cycle (this runtime has no sampling heap profiler)");
    }
    let units = plan.work.await?;
    let after = probe.settled_sample().await?;
    let (units, _) = units.resolve(crate::cycle::served_between(Some(&settled), &after));
    // The profile adds the allocating functions to the holder; when it
    // fails, the second snapshot is still taken and the holder still named.
    let mut missing = Vec::new();
    let profile_started = Instant::now();
    let profile = match read_profile(inspector).await {
        // The report's runtime gaps say so, once for the run.
        Ok(_) if !sampling => None,
        Ok(profile) => Some(profile),
        Err(error) => {
            missing.push(format!(
                "the allocation sites are missing ({:#}); the holder comes from the snapshots alone",
                anyhow::Error::new(error)
            ));
            None
        }
    };
    let profile_seconds = profile_started.elapsed().as_secs_f64();
    // A profiler left running costs the target; a failure here changes
    // nothing the diagnosis reports.
    if sampling {
        let _ = inspector.call("HeapProfiler.stopSampling", json!({})).await;
    }
    say("taking heap snapshot 2 of 2: the target is paused while V8 writes it");
    let started_b = Instant::now();
    let file_b = plan
        .snapshots_dir
        .map(|d| d.join(format!("{}-after.heapsnapshot", plan.label)));
    // The comparison runs on the parser's thread as soon as the stream ends.
    let compare = move |graph: HeapGraph| {
        let analysis_started = Instant::now();
        let (analysis, diff) = diff_graph(&before, graph, TOP);
        let collections = grown_collections(&counts, &analysis, units, MIN_ENTRIES_PER_UNIT, TOP);
        (diff, collections, analysis_started.elapsed().as_secs_f64())
    };
    let ((diff, collections, analysis_seconds), bytes_b) =
        snapshot_into(inspector, file_b.as_deref(), compare).await?;
    seconds += started_b.elapsed().as_secs_f64() - analysis_seconds;
    let rss_after = probe.sample().await?.rss;
    let mut allocation_sites = profile
        .as_ref()
        .map(|p| profile::surviving_sites(p, TOP))
        .unwrap_or_default();
    // A profile nests one level per stack frame: dropped without recursing.
    if let Some(profile) = profile {
        crate::inspector::drop_deep(profile);
    }
    // A source that cannot be read leaves the sites as V8 gave them.
    let _ = source_line::name_holder_lines(inspector, &mut allocation_sites, &diff.holders).await;
    if !sampling && let Some(site) = stored_by_name::storing_line(inspector, &diff.holders).await {
        allocation_sites.push(site);
    }
    if !sampling
        && diff
            .holders
            .first()
            .is_some_and(|h| matches!(h.holder_class.as_str(), "Map" | "Set"))
    {
        missing.push(BUN_MAP_HOLDER.to_string());
    }
    let mut holders = diff.holders;
    name_unnamed_holders(&mut holders, &collections);
    let mut diagnosis = Diagnosis {
        isolate: plan.isolate,
        requests: units,
        elements: diff.elements.clone(),
        classes: diff
            .classes
            .into_iter()
            .filter(|c| c.size_delta > 0)
            .take(TOP)
            .collect(),
        holders,
        allocation_sites,
        collections,
        sites_without_inlining,
        snapshot_bytes: [bytes_a, bytes_b],
        snapshot_files: [file_a, file_b]
            .into_iter()
            .flatten()
            .map(|p| p.display().to_string())
            .collect(),
        snapshot_seconds: seconds,
        analysis_seconds,
        target_rss_before: settled.rss,
        target_rss_after: rss_after,
        profile_seconds,
        missing,
        known_leak: None,
    };
    crate::diagnosis::attribute::attribute(inspector, &mut diagnosis).await;
    Ok(Diagnosed {
        diagnosis,
        inspector: inspector.clone(),
        settled: after,
    })
}

/// Said when Bun's holder is a Map or Set (`snapshot/parse/jsc.rs`).
const BUN_MAP_HOLDER: &str = "Bun's snapshots list no Map or Set entries, so what only a Map \
    keeps has no retainer in them: the Map or Set with the largest storage is named as the \
    holder; confirm with the line that stores, or under Node or Deno, which show the entries";

/// Reads the sampling heap profile. `LEAKCHECK_TEST_FAIL=sampling-profile`
/// makes it fail, so a test can show that the rest of the diagnosis
/// stands without it (no real target refuses it on demand).
async fn read_profile(inspector: &Inspector) -> Result<serde_json::Value, InspectorError> {
    if !inspector.dialect.has_heap_profiler() {
        return Ok(serde_json::Value::Null);
    }
    if std::env::var("LEAKCHECK_TEST_FAIL").is_ok_and(|part| part == "sampling-profile") {
        return Err(InspectorError::Protocol {
            method: "HeapProfiler.getSamplingProfile".into(),
            message: "failed on purpose (LEAKCHECK_TEST_FAIL=sampling-profile)".into(),
        });
    }
    inspector
        .call("HeapProfiler.getSamplingProfile", json!({}))
        .await
}

/// A holder reached only through unnamed slots (`[22][2][1]…`: the scope
/// that several closures share, each stored in a different collection)
/// names nothing a person can search for; when collections grew in the
/// same cycle, they are what keeps it, and are named instead.
fn name_unnamed_holders(
    holders: &mut [crate::model::Holder],
    collections: &[crate::model::Collection],
) {
    if collections.is_empty() {
        return;
    }
    let names: Vec<&str> = collections.iter().map(|c| c.name.as_str()).collect();
    for holder in holders {
        let unnamed = holder
            .name
            .chars()
            .all(|c| c.is_ascii_digit() || c == '[' || c == ']');
        if unnamed {
            holder.name = format!("{} (the collections that grew)", names.join(", "));
        }
    }
}

/// Streams a snapshot into the parser on a blocking thread (and into a
/// file when asked), then applies `finish` to the parsed graph there.
async fn snapshot_into<T: Send + 'static>(
    inspector: &Inspector,
    file: Option<&Path>,
    finish: impl FnOnce(HeapGraph) -> T + Send + 'static,
) -> Result<(T, u64), DiagnoseError> {
    let (chunks, receiver) = std::sync::mpsc::channel::<Vec<u8>>();
    let parser = tokio::task::spawn_blocking(move || {
        crate::snapshot::parse(ChunkReader::new(receiver)).map(finish)
    });
    let file_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DiagnoseError::File { path, source }
    };
    let mut disk = match file {
        Some(path) => Some(PrivateFile::create(path).map_err(file_error(path))?),
        None => None,
    };
    let streamed = stream_snapshot_chunks(inspector, |chunk| {
        if let Some(disk) = disk.as_mut() {
            std::io::Write::write_all(disk.file(), chunk)?;
        }
        // A parser that already failed has dropped its end; its error wins.
        let _ = chunks.send(chunk.to_vec());
        Ok(())
    })
    .await;
    drop(chunks);
    let parsed = parser.await?;
    let bytes = streamed?;
    if let (Some(disk), Some(path)) = (disk, file) {
        disk.persist().map_err(file_error(path))?;
    }
    Ok((parsed?, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Collection, Holder};

    #[test]
    fn a_holder_named_by_indices_only_takes_the_growing_collections_names() {
        let holder = |name: &str| Holder {
            name: name.into(),
            ..Holder::default()
        };
        let grown = |name: &str| Collection {
            name: name.into(),
            ..Collection::default()
        };
        let mut holders = vec![holder("[22][2][1]"), holder("cache"), holder("items[3]")];
        name_unnamed_holders(&mut holders, &[grown("obj"), grown("arr")]);
        assert_eq!(holders[0].name, "obj, arr (the collections that grew)");
        assert_eq!(holders[1].name, "cache");
        assert_eq!(holders[2].name, "items[3]");
        let mut alone = vec![holder("[1]")];
        name_unnamed_holders(&mut alone, &[]);
        assert_eq!(alone[0].name, "[1]");
    }
}
