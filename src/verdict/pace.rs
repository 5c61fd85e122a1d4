//! The resolution at a route's own pace: what "keeps nothing" must rule
//! out, in the units an operator reads.
//!
//! The budget's resolution (15.7 B per request, what 3 × 20 000 requests
//! resolve) is a count of requests: a route serving 10 000 requests a
//! second reaches it in seconds, one rendering a page in 25 ms at 40 a
//! second needs 25 minutes, so a 60-route app cannot be checked in a CI
//! job. What matters to the process is not bytes per request but how
//! soon they fill it: 15.7 B per request at 40 requests/s is 2.3 MB/h,
//! which fills a 4 GB heap in about 75 days.
//!
//! Rule (docs/src/method.md, "The resolution at a route's pace"): without
//! `--resolution`, a route is held to the larger of the budget's
//! resolution and the retention per unit that would fill the headroom it
//! has left (its heap limit less its baseline heap, or its memory limit
//! less its baseline rss, whichever is smaller) within `HORIZON` at the
//! pace it sustained in its cycles:
//!
//! ```text
//! resolution = max(15.7 B, headroom / (units per second × HORIZON))
//! ```
//!
//! A route fast enough (over ~450 requests/s against a 4 GB heap) keeps
//! the budget's resolution unchanged; a slow one is called clean once a
//! leak that would kill it within a week is ruled out, and the verdict
//! says what it ruled out per request and per hour, and how much longer
//! the budget's resolution would take. `--resolution` is an explicit
//! demand, kept at any pace.

use crate::model::{CycleResult, Limits, Sample};
use crate::units::{MB, human_duration, per_request};

/// How soon a leak must fill the headroom to be one the default verdict
/// may not call clean: a week, longer than the life of most deployed
/// processes between releases or restarts, so a leak hidden by it is
/// one the platform's own restarts outrun at that pace.
pub const HORIZON_S: f64 = 7.0 * 24.0 * 3600.0;

/// Units a second over `cycles`, counting their load's own time only.
pub fn units_per_second(cycles: &[CycleResult]) -> Option<f64> {
    let units: u64 = cycles.iter().map(|c| c.units).sum();
    let seconds: f64 = cycles.iter().map(|c| c.duration_s).sum();
    (seconds > 0.0 && units > 0).then(|| units as f64 / seconds)
}

/// The bytes the target can still grow by before the tightest limit in
/// force: its V8 heap limit against its baseline heapUsed, its memory
/// limit against its baseline rss.
pub fn headroom(baseline: &Sample, limits: &Limits) -> Option<u64> {
    let heap = limits
        .heap_bytes
        .map(|limit| limit.saturating_sub(baseline.heap_used));
    let rss = limits
        .rss_limit()
        .map(|(limit, _)| limit.saturating_sub(baseline.rss));
    heap.into_iter().chain(rss).min()
}

/// The resolution at this pace: the larger of `budget` and what fills
/// `headroom` within `HORIZON_S` at `rate` units a second.
pub fn resolution_at_pace(budget: f64, headroom: u64, rate: f64) -> f64 {
    budget.max(headroom as f64 / (rate * HORIZON_S))
}

/// "5.8 MB/h at this route's 40 requests/s": `per_unit` at `rate`.
pub fn per_hour_text(per_unit: f64, rate: f64, unit: &str) -> String {
    format!(
        "{:.1} MB/h at this route's {} {unit}s/s",
        per_unit.max(0.0) * rate * 3600.0 / MB,
        significant(rate)
    )
}

/// About how much longer at the same pace an upper bound of `upper`
/// (`slope` plus its margin) would take to fall below `target`, after
/// `elapsed_s` of cycles: the margin shrinks about as the work's span to
/// the power 1.5 (readings evenly spread over it). `None` when the slope
/// itself is above the target: no length rules it out.
pub fn time_to_resolve(slope: f64, upper: f64, target: f64, elapsed_s: f64) -> Option<f64> {
    if upper <= target {
        return Some(0.0);
    }
    let slope = slope.max(0.0);
    if slope >= target || elapsed_s <= 0.0 {
        return None;
    }
    let longer = ((upper - slope) / (target - slope)).powf(2.0 / 3.0);
    Some((longer - 1.0) * elapsed_s)
}

/// What a clean verdict ruled out: "at most 40 B per request: 5.8 MB/h at
/// this route's 40 requests/s; 15.7 B would take about 10 min more".
pub fn ruled_out(
    upper: f64,
    slope: f64,
    rate: f64,
    budget: f64,
    elapsed_s: f64,
    unit: &str,
) -> String {
    let mut text = format!(
        "at most {} per {unit}: {}",
        per_request(upper.max(0.0)),
        per_hour_text(upper, rate, unit)
    );
    if upper > budget {
        match time_to_resolve(slope, upper, budget, elapsed_s) {
            Some(more) => text.push_str(&format!(
                "; {} would take about {} more (--resolution {:.0}B)",
                per_request(budget),
                human_duration(more.max(1.0)),
                budget.ceil()
            )),
            None => text.push_str(&format!(
                "; the slope so far, {}, does not rule out {}: a longer run would tell \
                 (--resolution {:.0}B)",
                per_request(slope.max(0.0)),
                per_request(budget),
                budget.ceil()
            )),
        }
    }
    text
}

fn significant(rate: f64) -> String {
    match rate {
        r if r >= 100.0 => format!("{r:.0}"),
        r if r >= 10.0 => format!("{r:.1}"),
        r => format!("{r:.2}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fast_route_keeps_the_budget_s_resolution_and_a_slow_one_its_pace_s() {
        let four_gb = 4u64 << 30;
        // 10 000 requests/s: 0.7 B a week's fill, so the budget's 15.7 B.
        assert_eq!(resolution_at_pace(15.7, four_gb, 10_000.0), 15.7);
        // 40 requests/s: ~178 B per request fills 4 GB in a week.
        let slow = resolution_at_pace(15.7, four_gb, 40.0);
        assert!((170.0..185.0).contains(&slow), "{slow}");
    }

    #[test]
    fn the_headroom_is_the_tightest_limit_less_what_the_baseline_holds() {
        let baseline = Sample {
            heap_used: 100 << 20,
            rss: 200 << 20,
            ..Sample::default()
        };
        let limits = Limits {
            heap_bytes: Some(4 << 30),
            stated_bytes: Some(1 << 30),
            ..Limits::default()
        };
        assert_eq!(headroom(&baseline, &limits), Some((1 << 30) - (200 << 20)));
        assert_eq!(headroom(&baseline, &Limits::default()), None);
    }

    #[test]
    fn a_clean_verdict_says_what_it_ruled_out_per_hour_and_how_long_more() {
        let text = ruled_out(40.0, 2.0, 40.0, 15.7, 100.0, "request");
        assert!(
            text.starts_with("at most 40 B per request: 5.5 MB/h"),
            "{text}"
        );
        assert!(text.contains("40.0 requests/s"), "{text}");
        assert!(text.contains("16 B would take about"), "{text}");
        // Below the budget's resolution already: nothing more to say.
        let fine = ruled_out(10.0, 1.0, 9000.0, 15.7, 10.0, "request");
        assert!(!fine.contains("would take"), "{fine}");
        // A slope above the target: no length rules it out.
        assert_eq!(time_to_resolve(20.0, 40.0, 15.7, 100.0), None);
        let more = time_to_resolve(0.0, 40.0, 15.7, 100.0).unwrap();
        assert!((80.0..100.0).contains(&more), "{more}");
    }
}
