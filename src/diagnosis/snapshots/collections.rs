//! The collection check of a page: does an Array, Map, Set or plain
//! Object gain at least one entry per iteration, cycle after cycle? The
//! byte series of a page resolve about 250 B per iteration; a memo cache
//! gaining one 100-byte entry per search stays under that, and a Set of
//! buffers keeps its bytes where the heap series do not look. Counting
//! entries sees both (`snapshot/collections.rs`).
//!
//! Snapshot, a cycle of the route's own work, snapshot, another cycle,
//! snapshot: a collection is reported only when it grew by at least
//! `MIN_ENTRIES_PER_UNIT` per iteration in both intervals, so one that
//! filled once (a lazily built index) is not. A page's snapshot is a few
//! MB and parses in tens of milliseconds; the check costs the two cycles.

use super::{DiagnoseError, MIN_ENTRIES_PER_UNIT, TOP, snapshot_into};
use crate::cycle::{CycleSpec, Silent, Workload, served_between};
use crate::model::Collection;
use crate::probe::Probe;
use crate::snapshot::{Analysis, CollectionCounts, HeapGraph, grown_collections};

/// Intervals a collection must grow in.
pub const INTERVALS: u32 = 2;

/// The collections that grew in every interval; `first_cycle` numbers
/// the check's cycles after the route's own.
pub async fn check_collections(
    probe: &mut dyn Probe,
    workload: &mut dyn Workload,
    first_cycle: u32,
    say: &dyn Fn(&str),
) -> Result<Vec<Collection>, DiagnoseError> {
    let inspector = probe
        .inspector()
        .cloned()
        .ok_or(DiagnoseError::NoInspector)?;
    say("collection check: snapshot 1");
    let mut before = probe.settled_sample().await?;
    let (mut counts, _) =
        snapshot_into(&inspector, None, |g: HeapGraph| CollectionCounts::of(&g)).await?;
    let mut steady: Option<Vec<Collection>> = None;
    for interval in 0..INTERVALS {
        say(&format!(
            "collection check: one more cycle, then snapshot {}",
            interval + 2
        ));
        let spec = CycleSpec::measured(first_cycle + interval);
        let done = workload.drive(spec, &Silent).await?;
        let after = probe.settled_sample().await?;
        let (units, _) = done.units.resolve(served_between(Some(&before), &after));
        before = after;
        let earlier = std::mem::take(&mut counts);
        let compare = move |graph: HeapGraph| {
            let next = CollectionCounts::of(&graph);
            let analysis = Analysis::new(graph);
            let grown = grown_collections(&earlier, &analysis, units, MIN_ENTRIES_PER_UNIT, TOP);
            (grown, next)
        };
        let ((grown, next), _) = snapshot_into(&inspector, None, compare).await?;
        counts = next;
        steady = Some(match steady {
            None => grown,
            Some(kept) => in_both(kept, &grown),
        });
        if steady.as_ref().is_some_and(Vec::is_empty) {
            break;
        }
    }
    Ok(steady.unwrap_or_default())
}

/// The later rate must be at least this share of the earlier one: a
/// collection whose growth halved is filling up to a cap (the converging
/// rule of the byte series, `verdict::metric`), not growing without end.
const STILL_GROWING: f64 = 0.5;

/// The collections of `earlier` that grew again in `later`, at no less
/// than half the rate: their first count, their last, and the slower of
/// the two rates.
fn in_both(earlier: Vec<Collection>, later: &[Collection]) -> Vec<Collection> {
    earlier
        .into_iter()
        .filter_map(|first| {
            let again = later
                .iter()
                .find(|c| c.node_id == first.node_id)
                .filter(|c| c.per_unit >= STILL_GROWING * first.per_unit)?;
            Some(Collection {
                entries_after: again.entries_after,
                per_unit: first.per_unit.min(again.per_unit),
                ..first
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grown(id: u32, before: u64, after: u64, per_unit: f64) -> Collection {
        Collection {
            name: format!("c{id}"),
            kind: "Map".into(),
            entries_before: before,
            entries_after: after,
            per_unit,
            node_id: id,
            ..Collection::default()
        }
    }

    #[test]
    fn only_what_grew_in_both_intervals_stays_at_the_slower_rate() {
        let first = vec![
            grown(1, 0, 25, 1.0),
            grown(2, 3, 53, 2.0),
            grown(4, 0, 100, 4.0),
        ];
        // 4 slowed to a quarter of its rate: a collection reaching its cap.
        let second = vec![
            grown(2, 53, 78, 1.0),
            grown(3, 0, 40, 1.6),
            grown(4, 100, 125, 1.0),
        ];
        let kept = in_both(first, &second);
        assert_eq!(kept.len(), 1);
        assert_eq!(
            (
                kept[0].node_id,
                kept[0].entries_before,
                kept[0].entries_after
            ),
            (2, 3, 78)
        );
        assert_eq!(kept[0].per_unit, 1.0);
    }
}
