//! What a watch can afford to show of a leak: the allocation sites that
//! grew (from the sampling profiles, with source maps and owners), and,
//! only when asked and when the memory left allows it, one heap snapshot.
//!
//! The snapshot's budget: V8 pauses the target while it writes the
//! snapshot and builds it in native memory of about the heap's size again.
//! It is taken only when the headroom (the tightest rss limit minus the
//! current rss; without a limit, the machine's available memory) exceeds
//! twice the heap, so that writing it cannot be what kills the process.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use super::sites::SiteSampler;
use crate::inspector::Inspector;
use crate::inspector::snapshot::stream_snapshot_chunks;
use crate::model::{Diagnosis, RouteResult, WatchSnapshot};
use crate::private_file::PrivateFile;
use crate::report::progress::Progress;
use crate::units::MB;

/// Sites named at most.
const TOP_SITES: usize = 10;

/// Names the sites that grew, for a route whose verdict is a leak.
pub async fn name_sites(inspector: &Inspector, sampler: &SiteSampler, route: &mut RouteResult) {
    if !route.is_leak() {
        return;
    }
    let sites = sampler.grown(TOP_SITES);
    let mut diagnosis = Diagnosis {
        requests: route.watch.as_ref().and_then(|w| w.served).unwrap_or(0),
        ..Diagnosis::default()
    };
    if sites.is_empty() {
        diagnosis.missing.push(format!(
            "no allocation site's live sampled bytes grew between the first and the last third \
             of the watch ({} profiles at one sample per {} KB): watch longer, or lower \
             --sample-interval",
            sampler.profiles(),
            sampler.interval() / 1024
        ));
    }
    diagnosis.allocation_sites = sites;
    crate::diagnosis::attribute::attribute(inspector, &mut diagnosis).await;
    route.diagnosis = Some(diagnosis);
}

/// Takes one heap snapshot into `dir` when the headroom allows.
pub async fn snapshot_within_headroom(
    inspector: &Inspector,
    route: &RouteResult,
    dir: &Path,
    interrupted: bool,
    progress: &Progress,
) -> WatchSnapshot {
    let not_taken = |why: String| WatchSnapshot {
        file: None,
        bytes: None,
        not_taken: Some(why),
    };
    if interrupted {
        return not_taken(
            "the watch was interrupted: a snapshot pauses the target, and was not asked for then"
                .into(),
        );
    }
    let Some(last) = route.cycles.last() else {
        return not_taken("no reading was taken to size the snapshot against".into());
    };
    let heap = last.after_gc.heap_total;
    let limits = route.limits.unwrap_or_default();
    let (headroom, of) = match limits.rss_limit() {
        Some((limit, name)) => (limit.saturating_sub(last.after_gc.rss), name),
        None => (
            crate::platform::procfs::memory_available().unwrap_or(0),
            "this machine's available memory",
        ),
    };
    if headroom <= 2 * heap {
        return not_taken(format!(
            "the headroom under {of} is {:.0} MB, not more than twice the heap ({:.0} MB): \
             writing a snapshot could push the process over it",
            headroom as f64 / MB,
            heap as f64 / MB
        ));
    }
    let file = dir.join(format!(
        "{}-watch.heapsnapshot",
        crate::private_file::file_label(&route.route)
    ));
    progress.say("taking a heap snapshot: the target is paused while V8 writes it");
    let started = Instant::now();
    match write_snapshot(inspector, &file).await {
        Ok(bytes) => {
            progress.say(&format!(
                "{}: {:.1} MB in {:.1} s",
                file.display(),
                bytes as f64 / MB,
                started.elapsed().as_secs_f64()
            ));
            WatchSnapshot {
                file: Some(file.display().to_string()),
                bytes: Some(bytes),
                not_taken: None,
            }
        }
        Err(error) => not_taken(format!("the snapshot failed: {error:#}")),
    }
}

async fn write_snapshot(inspector: &Inspector, path: &Path) -> anyhow::Result<u64> {
    let mut file = PrivateFile::create(path)?;
    let bytes = stream_snapshot_chunks(inspector, |chunk| file.file().write_all(chunk)).await?;
    file.persist()?;
    Ok(bytes)
}
