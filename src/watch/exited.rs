//! A watched process that exited mid-watch: said so, with the readings
//! taken before, and judged `memory-exhausted` when its own readings say
//! it ran out of memory. An attached process's exit status and last words
//! are not leakcheck's to read (it did not start it), so the evidence is
//! the heap against its limit, and the pace it was growing at.

use std::time::Duration;

use super::metrics;
use crate::model::{Finding, FindingKind, RouteResult, Series, VerdictKind, WatchExit};

/// A process that exits with its last after-GC heap above this share of
/// V8's heap limit ran out of memory: V8 gives up near the limit (its
/// last-resort collections free less and less), and a process that ends
/// by itself or by a deploy is nowhere near it.
const NEAR_LIMIT: f64 = 0.85;
/// Or it exits while its growth was projected to its limit within this:
/// the last readings before a death are often lost (drained every 2 s,
/// the process gone before the drain), so the last one seen can be far
/// below the limit while the pace says it was seconds away. Measured: a
/// 48 MB old space at ~2 MB/s died with its last reading at 26 % of the
/// limit, projected 36 s away.
const PROJECTED_WITHIN_S: f64 = 600.0;

/// A watched process is gone: say so, and judge whether it ran out of
/// memory from its own last reading against its heap limit.
pub(super) fn exited(route: &mut RouteResult, watched_for: Option<Duration>) {
    let after_s = watched_for.map_or(0.0, |d| d.as_secs_f64());
    let limit = route.limits.and_then(|l| l.heap_bytes);
    let last = route.cycles.last().map(|c| c.after_gc.heap_used);
    let near_limit = match (last, limit) {
        (Some(last), Some(limit)) if limit > 0 => Some(last as f64 / limit as f64),
        _ => None,
    };
    let reason = format!(
        "exited after {} watched",
        crate::units::human_duration(after_s)
    );
    if let Some(watch) = route.watch.as_mut() {
        watch.exited = Some(WatchExit {
            after_s,
            reason: reason.clone(),
            heap_share_of_limit: near_limit,
        });
    }
    // A projection exists only for a trend clear of its floor, decided or
    // not yet (a process that dies fast may die before the decision).
    let projected_s = route
        .watch
        .as_ref()
        .and_then(|w| w.reaches.as_ref())
        .map(|r| r.at_unix_s as f64 - metrics::unix_now());
    let by_pace = projected_s.is_some_and(|s| s < PROJECTED_WITHIN_S);
    let at_limit = near_limit.is_some_and(|s| s >= NEAR_LIMIT);
    if !at_limit && !by_pace {
        if let Some(verdict) = route.verdict.as_mut() {
            verdict.findings.push(Finding::new(
                FindingKind::TargetExited,
                format!("{reason}; the verdict is on the readings taken before"),
            ));
        }
        return;
    }
    let (last, limit) = (last.unwrap_or(0), limit.unwrap_or(0));
    let share = near_limit.unwrap_or(0.0);
    let mut verdict = route.verdict.take().unwrap_or_default();
    let evidence = match at_limit {
        true => "it ran out of memory".to_string(),
        false => format!(
            "its heap was projected to reach the limit {} later at the pace it grew: it most \
             likely ran out of memory",
            crate::units::human_duration(projected_s.unwrap_or(0.0).max(0.0))
        ),
    };
    verdict.kind = VerdictKind::MemoryExhausted;
    verdict.fails_gate = true;
    verdict.figure.metric = Series::HEAP_USED;
    verdict.summary = format!(
        "the process {reason} with its last after-GC heapUsed read at {:.1} MB, {:.0} % of its \
         {:.1} MB heap limit; {evidence} ({})",
        last as f64 / crate::units::MB,
        share * 100.0,
        limit as f64 / crate::units::MB,
        verdict.summary
    );
    verdict.action = format!(
        "A leak ended this process. {}",
        match route
            .diagnosis
            .as_ref()
            .and_then(|d| d.allocation_sites.first())
        {
            Some(site) => format!(
                "The site that grew while watched: `{}` at {}:{}; fix what it keeps.",
                site.function, site.url, site.line
            ),
            None => "Watch its replacement with `--snapshot`, or check the route with \
                     `leakcheck run`, to name what holds the memory."
                .into(),
        }
    );
    route.verdict = Some(verdict);
}
