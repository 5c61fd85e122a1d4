//! A page's collection check as a verdict: a collection that gained at
//! least one entry per iteration in each interval of the check is a leak
//! (`collection-growth`), whatever the byte series said, because entries
//! that small (a memo of one search) or that far off the heap (a Set of
//! buffers) are below what the bytes resolve. The byte verdict it
//! replaces stays as a finding.

use crate::model::{Collection, Finding, FindingKind, Unit, Verdict, VerdictKind};

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

/// Turns `verdict` into `collection-growth` when `found` is not empty and
/// the bytes did not already call a leak.
pub fn apply(verdict: &mut Verdict, found: &[Collection], unit: Unit, intervals: u32) {
    let Some(first) = found.first() else {
        return;
    };
    if verdict.kind.is_leak() {
        return;
    }
    let earlier = format!(
        "the byte series alone read {}: {}",
        verdict.kind, verdict.summary
    );
    verdict
        .findings
        .push(Finding::new(FindingKind::BytesBelowResolution, earlier));
    verdict.kind = VerdictKind::CollectionGrowth;
    verdict.fails_gate = true;
    let others = found.len() - 1;
    verdict.summary = format!(
        "{} in each of {intervals} cycles of the collection check{}",
        describe(first, unit),
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
