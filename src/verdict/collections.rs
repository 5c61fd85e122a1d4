//! A page's collection check as a verdict: a collection that kept gaining
//! at least one entry per iteration past any reasonable cap (the rule is
//! `diagnosis/snapshots/collections.rs`') is a leak (`collection-growth`),
//! whatever the byte series said, because entries that small (a memo of
//! one search) or that far off the heap (a Set of buffers) are below what
//! the bytes resolve. The byte verdict it replaces stays as a finding.

use crate::model::{Collection, CollectionState, Finding, FindingKind, Unit, Verdict, VerdictKind};

/// A collection still growing past this many times its first count...
pub const PAST_FIRST_COUNT: u64 = 4;
/// ...and past this many entries is a leak on its counts alone: no cap a
/// program sets on a history or an LRU (hundreds to a few thousand
/// entries) explains it.
pub const PAST_ENTRIES: u64 = 2_000;

/// The bound a collection that had `first` entries must pass.
pub fn bound(first: u64) -> u64 {
    (PAST_FIRST_COUNT * first).max(PAST_ENTRIES)
}

fn in_state(found: &[Collection], state: CollectionState) -> Vec<&Collection> {
    found.iter().filter(|c| c.state == state).collect()
}

/// `recentSearches: Map +1.00 per iteration`.
pub fn describe(collection: &Collection, unit: Unit) -> String {
    format!(
        "{}: {} +{:.2} per {} ({} → {} entries)",
        collection.name,
        collection.kind,
        collection.per_unit,
        unit.name(),
        collection.entries_before,
        collection.entries_after
    )
}

/// The verdict after the collection check: `collection-growth` when a
/// collection grew past its bound and the bytes did not already call a
/// leak; inconclusive when a clean verdict leaves a collection still
/// growing below it; a finding per collection that stopped at its cap.
pub fn apply(verdict: &mut Verdict, found: &[Collection], unit: Unit, intervals: u32) {
    for capped in in_state(found, CollectionState::Capped) {
        verdict.findings.push(Finding::new(
            FindingKind::CappedCollection,
            format!(
                "{}: {} grew, then stopped at {} entries: a cap, not a leak",
                capped.name, capped.kind, capped.entries_after
            ),
        ));
    }
    if verdict.kind.is_leak() {
        return;
    }
    let growing = in_state(found, CollectionState::Growing);
    if let Some(first) = growing.first() {
        call_growth(verdict, first, growing.len() - 1, unit, intervals);
        return;
    }
    let undecided = in_state(found, CollectionState::Undecided);
    if let Some(first) = undecided.first()
        && verdict.kind == VerdictKind::NoRetention
    {
        verdict.kind = VerdictKind::Inconclusive;
        verdict.summary = format!(
            "{}, still growing when the collection check's work ran out, under the {} entries \
             a leak must pass",
            describe(first, unit),
            bound(first.entries_before)
        );
        verdict.action = format!(
            "Run more {unit}s per cycle (-n) so the check can follow `{}` past {} entries or \
             see it stop at a cap.",
            first.name,
            bound(first.entries_before),
            unit = unit.name()
        );
    }
}

fn call_growth(verdict: &mut Verdict, first: &Collection, others: usize, unit: Unit, cycles: u32) {
    let earlier = format!(
        "the byte series alone read {}: {}",
        verdict.kind, verdict.summary
    );
    verdict
        .findings
        .push(Finding::new(FindingKind::BytesBelowResolution, earlier));
    verdict.kind = VerdictKind::CollectionGrowth;
    verdict.fails_gate = true;
    verdict.summary = format!(
        "{} over {cycles} cycles of the collection check, past {} entries (no cap explains \
         it){}",
        describe(first, unit),
        bound(first.entries_before),
        match others {
            0 => String::new(),
            n => format!(", and {n} more collections"),
        }
    );
    verdict.action = format!(
        "Find where `{}` gains an entry per {} and remove the entry when it is no longer \
         needed (the view closes, the request ends), or bound it (an LRU of fixed size){}.",
        first.name,
        unit.name(),
        first
            .script
            .as_deref()
            .map_or(String::new(), |s| format!("; it lives in {s}"))
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collection(name: &str, state: CollectionState, first: u64, now: u64) -> Collection {
        Collection {
            name: name.into(),
            kind: "Array".into(),
            entries_before: first,
            entries_after: now,
            per_unit: 1.0,
            state,
            ..Collection::default()
        }
    }

    fn clean() -> Verdict {
        Verdict {
            kind: VerdictKind::NoRetention,
            ..Verdict::default()
        }
    }

    #[test]
    fn the_bound_is_four_times_the_first_count_and_never_under_two_thousand() {
        assert_eq!(bound(100), 2_000);
        assert_eq!(bound(1_000), 4_000);
    }

    #[test]
    fn a_capped_history_leaves_a_clean_verdict_clean_with_its_cap_named() {
        let mut verdict = clean();
        let history = collection("history", CollectionState::Capped, 150, 300);
        apply(&mut verdict, &[history], Unit::Iteration, 3);
        assert_eq!(verdict.kind, VerdictKind::NoRetention);
        assert!(!verdict.fails_gate);
        let finding = &verdict.findings[0];
        assert_eq!(finding.kind, FindingKind::CappedCollection);
        assert!(
            finding.message.contains("stopped at 300 entries"),
            "{}",
            finding.message
        );
    }

    #[test]
    fn growth_past_the_bound_is_a_leak_and_growth_below_it_undecided() {
        let mut verdict = clean();
        let memo = collection("memo", CollectionState::Growing, 150, 2_475);
        apply(&mut verdict, &[memo], Unit::Iteration, 3);
        assert_eq!(verdict.kind, VerdictKind::CollectionGrowth);
        assert!(verdict.fails_gate);
        assert!(
            verdict.summary.contains("past 2000 entries"),
            "{}",
            verdict.summary
        );

        let mut verdict = clean();
        let slow = collection("slow", CollectionState::Undecided, 150, 1_200);
        apply(&mut verdict, &[slow], Unit::Iteration, 6);
        assert_eq!(verdict.kind, VerdictKind::Inconclusive);
        assert!(
            verdict.action.contains("past 2000 entries"),
            "{}",
            verdict.action
        );
    }
}
