//! The collection check: does an Array, Map, Set or plain Object gain at
//! least one entry per unit of work, and keep gaining past any cap a
//! correct program would set? The byte series of a page resolve about
//! 250 B per iteration; a memo cache gaining one 100-byte entry per search
//! stays under that, and a Set of buffers keeps its bytes where the heap
//! series do not look. Counting entries sees both (`snapshot/collections.rs`).
//!
//! Counting alone cannot tell a leak from a bounded collection that is
//! still filling: a history capped at 1 000 entries grows by one per
//! iteration for its first thousand. So a collection that grew is
//! followed, cycle after cycle, until one of two things happens:
//!
//! - its growth stops, or slows to under half its rate (`STILL_GROWING`,
//!   the converging rule of the byte series): a cap, `capped`, named with
//!   the count it stopped at;
//! - it has kept growing past **both** `PAST_FIRST_COUNT` times the
//!   entries it had at the first snapshot and `PAST_ENTRIES` entries: no
//!   cap a program sets on a history or an LRU explains that (they are
//!   sized in hundreds to a few thousand), so it is `growing`, a leak.
//!
//! A collection must grow in at least two intervals to be called either
//! way, so one that filled once (an index built lazily) never is. The
//! follow-ups carry the slowest collection still undecided past its bound
//! (`AIM_PAST`), the first time half the way, within the work the caller
//! allows; what is still growing below its bound when that runs out is
//! `undecided`.
//!
//! A page's snapshot is a few MB and parses in tens of milliseconds; the
//! check costs its cycles.

use super::{DiagnoseError, MIN_ENTRIES_PER_UNIT, TOP, snapshot_into};
use crate::cycle::{CycleSpec, Silent, Workload, served_between};
use crate::inspector::Inspector;
use crate::model::{Collection, CollectionState, Sample};
use crate::probe::Probe;
use crate::snapshot::{Analysis, CollectionCounts, HeapGraph, grown_collections};
use crate::verdict::collections::bound;

/// The later rate must be at least this share of the earlier one: a
/// collection whose growth halved is filling up to a cap.
const STILL_GROWING: f64 = 0.5;
/// A follow-up aims this far past the bound, so a collection growing a
/// little slower than before still crosses it in one interval.
const AIM_PAST: f64 = 1.25;
/// Follow-up intervals at most after the one that found the growth: with
/// the sizing above, two or three decide; the rest absorb a rate that fell.
const MOST_FOLLOW_UPS: u32 = 5;

/// What the check found: every collection that grew in its first
/// interval, with what following it decided, leaks first.
#[derive(Debug, Default)]
pub struct CollectionCheck {
    pub collections: Vec<Collection>,
    /// Intervals the check ran (the first included).
    pub intervals: u32,
}

/// Where a follow-up starts: the collections that grew (counted at the
/// last snapshot), and how much more work may be spent.
pub struct FollowUp {
    pub candidates: Vec<Collection>,
    /// The reading the last snapshot was taken after.
    pub settled: Sample,
    /// The number of the next cycle.
    pub next_cycle: u32,
    /// Units of work the follow-ups may spend in all.
    pub most_units: u64,
}

/// The page's collection check: snapshot, one cycle, snapshot, then the
/// collections that grew followed until they are decided.
pub async fn check_collections(
    probe: &mut dyn Probe,
    workload: &mut dyn Workload,
    first_cycle: u32,
    most_units: u64,
    say: &dyn Fn(&str),
) -> Result<CollectionCheck, DiagnoseError> {
    let inspector = probe
        .inspector()
        .cloned()
        .ok_or(DiagnoseError::NoInspector)?;
    say("collection check: snapshot 1");
    let before = probe.settled_sample().await?;
    let (counts, _) =
        snapshot_into(&inspector, None, |g: HeapGraph| CollectionCounts::of(&g)).await?;
    say("collection check: one more cycle, then snapshot 2");
    let cycle = CycleSpec {
        time: Some(crate::diagnosis::route::DIAGNOSIS_CYCLE_TIME),
        ..CycleSpec::measured(first_cycle)
    };
    let done = workload.drive(cycle, &Silent).await?;
    let settled = probe.settled_sample().await?;
    let (units, _) = done.units.resolve(served_between(Some(&before), &settled));
    let compare = move |graph: HeapGraph| {
        let analysis = Analysis::new(graph);
        grown_collections(&counts, &analysis, units, MIN_ENTRIES_PER_UNIT, TOP)
    };
    let candidates = snapshot_into(&inspector, None, compare).await?.0;
    let follow_up = FollowUp {
        candidates,
        settled,
        next_cycle: first_cycle + 1,
        most_units,
    };
    follow(&inspector, probe, workload, follow_up, say).await
}

/// Follows the collections that grew until each is capped, past its
/// bound, or the work allowed runs out.
pub async fn follow(
    inspector: &Inspector,
    probe: &mut dyn Probe,
    workload: &mut dyn Workload,
    from: FollowUp,
    say: &dyn Fn(&str),
) -> Result<CollectionCheck, DiagnoseError> {
    let FollowUp {
        mut candidates,
        mut settled,
        mut next_cycle,
        most_units: mut left,
    } = from;
    for c in &mut candidates {
        c.state = CollectionState::Undecided;
    }
    let mut intervals = 1;
    // Work that cannot carry even one collection to its bound decides
    // none of them (a slow route's budget): no snapshot is spent on it.
    let reachable = undecided(&candidates)
        .any(|c| units_to_decide(std::slice::from_ref(c)).is_some_and(|u| u <= left));
    if !reachable {
        say(
            "collection check: the work allowed cannot carry a growing collection past its bound; left undecided",
        );
    }
    for _ in 0..MOST_FOLLOW_UPS * u32::from(reachable) {
        let Some(needed) = units_to_decide(&candidates) else {
            break;
        };
        // The first follow-up goes half the way: a cap reached late in one
        // long interval reads as growth at a lower but steady rate, and the
        // second half shows it stopped. The later ones go the whole way
        // (halving each would never arrive).
        let wanted = match intervals {
            1 => needed.div_ceil(2),
            _ => needed,
        }
        .min(left);
        if wanted == 0 {
            break;
        }
        say(&format!(
            "collection check: following {} growing collection(s) for {wanted} more units of work",
            undecided(&candidates).count()
        ));
        let spec = CycleSpec {
            number: next_cycle,
            scale: scale_for(wanted, workload.planned_units()),
            most_units: Some(wanted),
            brake: None,
            time: Some(crate::diagnosis::route::DIAGNOSIS_CYCLE_TIME),
        };
        let done = workload.drive(spec, &Silent).await?;
        let after = probe.settled_sample().await?;
        let (units, _) = done.units.resolve(served_between(Some(&settled), &after));
        settled = after;
        next_cycle += 1;
        intervals += 1;
        left = left.saturating_sub(units.max(1));
        let (counts, _) =
            snapshot_into(inspector, None, |g: HeapGraph| CollectionCounts::of(&g)).await?;
        for c in candidates
            .iter_mut()
            .filter(|c| c.state == CollectionState::Undecided)
        {
            decide(c, counts.get(c.node_id), units);
        }
    }
    // Freed between the snapshots: neither a leak nor a cap to name.
    candidates.retain(|c| c.entries_after > 0 || c.state != CollectionState::Capped);
    candidates.sort_by_key(|c| match c.state {
        CollectionState::Growing => 0,
        CollectionState::Undecided => 1,
        CollectionState::Capped => 2,
    });
    Ok(CollectionCheck {
        collections: candidates,
        intervals,
    })
}

fn undecided(candidates: &[Collection]) -> impl Iterator<Item = &Collection> {
    candidates
        .iter()
        .filter(|c| c.state == CollectionState::Undecided)
}

/// Units the next interval needs to carry every undecided collection past
/// its bound at its rate; `None` when none is left.
fn units_to_decide(candidates: &[Collection]) -> Option<u64> {
    undecided(candidates)
        .map(|c| {
            let missing = bound(c.entries_before).saturating_sub(c.entries_after) as f64;
            let units = AIM_PAST * missing / c.per_unit.max(MIN_ENTRIES_PER_UNIT);
            (units.ceil() as u64).max(1)
        })
        .max()
}

/// Planned cycles' worth of work covering `wanted` units.
fn scale_for(wanted: u64, planned: Option<u64>) -> u64 {
    planned.map_or(1, |p| wanted.div_ceil(p.max(1)).max(1))
}

/// One follow-up's count for a collection: `now` entries (`None` once it
/// is gone) after `units` units of work.
fn decide(c: &mut Collection, now: Option<u32>, units: u64) {
    let now = u64::from(now.unwrap_or(0));
    let rate = (now as f64 - c.entries_after as f64) / units.max(1) as f64;
    c.entries_after = now;
    if rate < STILL_GROWING * c.per_unit {
        c.state = CollectionState::Capped;
        return;
    }
    c.per_unit = c.per_unit.min(rate);
    if now >= bound(c.entries_before) {
        c.state = CollectionState::Growing;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grew(first: u64, now: u64, per_unit: f64) -> Collection {
        Collection {
            entries_before: first,
            entries_after: now,
            per_unit,
            state: CollectionState::Undecided,
            ..Collection::default()
        }
    }

    #[test]
    fn a_history_that_stops_at_its_cap_is_capped_there() {
        let mut history = grew(150, 175, 1.0);
        decide(&mut history, Some(1_000), 2_300);
        // 825 entries over 2 300 units: under half the rate it had.
        assert_eq!(history.state, CollectionState::Capped);
        assert_eq!(history.entries_after, 1_000);
    }

    #[test]
    fn a_memo_growing_past_its_bound_at_its_rate_is_growing() {
        let mut memo = grew(150, 175, 1.0);
        decide(&mut memo, Some(2_475), 2_300);
        assert_eq!(memo.state, CollectionState::Growing);
        assert!((memo.per_unit - 1.0).abs() < 1e-9);
        let mut short = grew(150, 175, 1.0);
        decide(&mut short, Some(1_175), 1_000);
        assert_eq!(short.state, CollectionState::Undecided);
    }

    #[test]
    fn the_follow_up_is_sized_for_the_last_to_cross_its_bound() {
        let candidates = vec![grew(150, 175, 1.0), grew(1_000, 1_050, 2.0)];
        // 1.25 × (2 000 − 175) / 1 and 1.25 × (4 000 − 1 050) / 2.
        assert_eq!(units_to_decide(&candidates), Some(2_282));
        assert_eq!(scale_for(2_282, Some(25)), 92);
        assert_eq!(scale_for(2_282, None), 1);
        let mut decided = candidates;
        decided
            .iter_mut()
            .for_each(|c| c.state = CollectionState::Capped);
        assert_eq!(units_to_decide(&decided), None);
    }
}
