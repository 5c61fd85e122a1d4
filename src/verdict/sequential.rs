//! `--cycles auto`: when small cycles have decided the verdict.
//!
//! Method: a group-sequential design (Jennison & Turnbull, *Group
//! Sequential Methods with Applications to Clinical Trials*, ch. 1–2), with
//! the fixed method's own rule at every look for retention and a
//! confidence bound for its absence:
//!
//! - **Retention** is looked for after every third small cycle: the cycles
//!   are read in three equal groups (after 6 cycles, groups of 2; after 12,
//!   groups of 4) and the method's reading table judges those three
//!   "cycles" exactly as it judges three fixed ones. Growth must clear
//!   `RETENTION_SIGMAS` noise per group, and rise in every group after the
//!   warm-up one. At the budget (12 × 5 000) the groups are the fixed
//!   method's own 3 × 20 000, so the last look is its answer.
//! - **No retention** is decided when the least-squares slope of every
//!   memory series (after `WARM_UP_REQUESTS` of warm-up) plus `BOUND_SIGMAS`
//!   standard errors is below the resolution. The standard error uses the
//!   larger of the residual scatter and the series' noise floor (one
//!   reading's repeatability, `metric::noise_floor`): with few readings the
//!   residual alone can be luckily small.
//! - A cycle that did no work stops the route: more load proves nothing.
//! - Otherwise the route is undecided and its verdict `inconclusive`,
//!   which is also what a run cut short reports: a flat look at a few small
//!   cycles is not yet evidence of no retention.
//!
//! Looking several times raises the chance of a wrong stop; the bench
//! (`bench/sensitivity.sh`, BENCHMARKS.md) measures it against the fixed
//! method's own agreement with itself.

use super::classify::{Options, judge};
use super::fit::least_squares;
use super::isolates::{fold_into, judge_isolates};
use super::metric::Noise;
use crate::model::{
    CycleResult, IsolateResult, RetainedPerRequest, Sample, SequentialResult, SequentialStop,
    Series, Verdict, VerdictKind,
};
use crate::units::{human_duration, per_request};

/// The fixed method's cycle: 20 000 requests (docs/src/method.md).
#[cfg(test)]
pub const METHOD_CYCLE_REQUESTS: f64 = 20_000.0;
/// What 3 × 20 000 can resolve: a cycle's growth must exceed
/// `RETENTION_SIGMAS` heapUsed noise floors (3 × 0.1 MB) to be retention,
/// which over 20 000 requests is 15.7 bytes per request. Below it the
/// fixed method calls a route flat or unclear, never a leak.
#[cfg(test)]
pub fn method_resolution() -> f64 {
    use super::metric::{RETENTION_SIGMAS, noise_floor};
    RETENTION_SIGMAS * noise_floor(&Series::HEAP_USED) / METHOD_CYCLE_REQUESTS
}
/// Standard errors above the slope for its upper bound: one-sided 97.7 %.
pub const BOUND_SIGMAS: f64 = 2.0;
/// Looks for retention come after every this many cycles (three groups).
const GROUPS: usize = 3;
/// The memory series whose bound decides "keeps nothing". rss is left out:
/// its floor (1 MB of page cache) would need hundreds of thousands of
/// requests to bound, so a route judged on rss alone runs to the budget.
const BOUNDED_SERIES: [Series; 3] = [Series::HEAP_USED, Series::EXTERNAL, Series::ARRAY_BUFFERS];

/// What decides, from `--resolution` and `--max-requests` (or a page's
/// `--max-iterations`); `budget.rs` builds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SequentialPlan {
    /// The resolution of the budget's work: `--resolution`, or what its
    /// three groups resolve (15.7 B per request). Without `--resolution`
    /// a route too slow to reach it in time is held to the resolution at
    /// its own pace instead (`pace::resolution_at_pace`).
    pub resolution: f64,
    /// `--resolution` was given: an explicit demand, kept at any pace.
    pub resolution_asked: bool,
    /// The budget in cycles of the planned size, a multiple of three.
    pub max_cycles: u32,
    /// The budget in units of work (`max_cycles` × the planned cycle): the
    /// loop may send smaller cycles than planned (a target short of
    /// headroom), and the budget is the work.
    pub max_units: u64,
    /// Units of work whose growth is warm-up for the bound (`WARM_UP_REQUESTS`
    /// for a server; far fewer iterations for a page).
    pub warm_up_units: f64,
    /// The flag that raises the budget, for what an undecided route says.
    pub max_flag: &'static str,
}

/// The route's verdict after a look, and whether to stop loading.
pub struct Look {
    pub verdict: Verdict,
    pub retained: RetainedPerRequest,
    pub isolates: Vec<IsolateResult>,
    pub state: SequentialResult,
}

impl Look {
    pub fn stops(&self) -> bool {
        self.state.stopped != SequentialStop::Undecided
    }
}

/// Looks at the readings so far. `None` before the first cycle.
pub fn look(
    baseline: &Sample,
    cycles: &[CycleResult],
    options: Options,
    plan: SequentialPlan,
) -> Option<Look> {
    let budget_resolution = plan.resolution;
    let plan = at_pace(plan, baseline, cycles, options);
    // The small cycles are judged on their readings; only the budget's
    // answer is held to the resolution (before it, more cycles come).
    let budget_options = Options {
        resolution: Some(plan.resolution),
        ..options
    };
    let options = Options {
        resolution: None,
        ..options
    };
    let raw = judged(baseline, cycles, options)?;
    let k = cycles.len();
    let served: u64 = cycles.iter().map(|c| c.units).sum();
    let bound = bound_after(
        baseline,
        cycles,
        &Series::HEAP_USED,
        plan.warm_up_units,
        options.noise,
    );
    let state = |stopped, group: usize, reason: String| SequentialResult {
        decided_after_requests: served,
        cycles: k as u32,
        group_cycles: group as u32,
        stopped,
        reason,
        upper_bound_bytes_per_request: bound.map(|b| b.upper),
    };
    if cycles.iter().any(|c| c.did_no_work() || c.load.stalled) {
        let why = "a cycle did no work: more load would prove nothing".to_string();
        return Some(raw.into_look(state(SequentialStop::Failed, 1, why)));
    }
    if k >= GROUPS && k.is_multiple_of(GROUPS) {
        let group = k / GROUPS;
        let grouped = judged(baseline, &in_groups(cycles, group), options)?;
        if grouped.verdict.kind.is_leak() {
            let why = format!(
                "growth clear of its noise in each of three groups of {} {}s",
                group as u64 * served / k as u64,
                options.unit.name()
            );
            return Some(grouped.into_look(state(SequentialStop::Retention, group, why)));
        }
        if served >= plan.max_units {
            let why = format!(
                "the budget ran out: the fixed method's verdict over three groups of {group} cycles"
            );
            let mut grouped = judged(baseline, &in_groups(cycles, group), budget_options)?;
            if grouped.verdict.kind == VerdictKind::Inconclusive {
                // The fixed method's advice counts its three readings
                // ("--cycles 6"); this run already read `k` cycles.
                grouped.verdict.action = format!(
                    "The budget ({} {} {unit}s, {k} cycles) ran out before the readings \
                     decided: raise {} to about {} so that each of the three groups carries \
                     twice the {unit}s.",
                    plan.max_flag,
                    plan.max_units,
                    plan.max_flag,
                    2 * plan.max_units,
                    unit = options.unit.name()
                );
            }
            return Some(grouped.into_look(state(SequentialStop::Budget, group, why)));
        }
    }
    if let Some(why) = bounded(baseline, cycles, &raw, plan, budget_resolution, options) {
        // A clean verdict says what it ruled out, in every report.
        let mut raw = raw;
        raw.verdict.summary = format!("{}; {why}", raw.verdict.summary);
        return Some(raw.into_look(state(SequentialStop::Bounded, 1, why)));
    }
    let why = match bound {
        Some(b) => format!(
            "at most {} per {unit} so far (upper bound), not yet below the {} resolution, and no \
             growth clear of noise",
            per_request(b.upper.max(0.0)),
            per_request(plan.resolution),
            unit = options.unit.name()
        ),
        None => "too few readings to decide".to_string(),
    };
    let summary = format!("not decided after {served} {}s: {why}", options.unit.name());
    // The rest of the budget, in the time the user has.
    let left = plan.max_units.saturating_sub(served);
    let budget_time = super::pace::units_per_second(cycles).map(|rate| left as f64 / rate);
    Some(undecided(
        raw,
        state(SequentialStop::Undecided, 1, why),
        summary,
        plan.max_flag,
        budget_time,
    ))
}

/// The plan as it holds for these cycles: without `--resolution`, a
/// server's or a function's resolution at its own pace (`pace.rs`); and
/// cycles that ended at their time target count their first two as the
/// warm-up when that is less work than `warm_up_units` (a slow route
/// would otherwise spend minutes warming up: 5 000 requests at 40 a
/// second). A shorter warm-up only leaves more growth in the bound.
fn at_pace(
    plan: SequentialPlan,
    baseline: &Sample,
    cycles: &[CycleResult],
    options: Options,
) -> SequentialPlan {
    let timed = cycles
        .iter()
        .take(WARM_UP_CYCLES)
        .any(|c| c.load.time_bound);
    let warm_up_units = match timed {
        true => {
            let first: u64 = cycles.iter().take(WARM_UP_CYCLES).map(|c| c.units).sum();
            plan.warm_up_units.min(first as f64)
        }
        false => plan.warm_up_units,
    };
    // A page's pace is its clicks', not its users': its budget (600
    // iterations) is already sized for time, and its resolution stays.
    let server_like = options.noise == Noise::Process;
    let resolution = match plan.resolution_asked || !server_like {
        true => plan.resolution,
        false => super::pace::headroom(baseline, &options.limits)
            .zip(super::pace::units_per_second(cycles))
            .map_or(plan.resolution, |(headroom, rate)| {
                super::pace::resolution_at_pace(plan.resolution, headroom, rate)
            }),
    };
    SequentialPlan {
        resolution,
        warm_up_units,
        ..plan
    }
}

/// Time-bound cycles whose work counts as warm-up at most.
const WARM_UP_CYCLES: usize = 2;

/// Why the route keeps nothing the method can see, if it does not: every
/// memory series bounded below the resolution, and the reading table on
/// the small cycles calls nothing growing.
fn bounded(
    baseline: &Sample,
    cycles: &[CycleResult],
    raw: &Judged,
    plan: SequentialPlan,
    budget_resolution: f64,
    options: Options,
) -> Option<String> {
    if !matches!(
        raw.verdict.kind,
        VerdictKind::NoRetention | VerdictKind::WorkingSet
    ) || !raw.isolates.is_empty()
    {
        // Another isolate's growth is judged on the same small cycles,
        // whose resolution is coarse: such a route runs to its budget.
        return None;
    }
    let mut highest = Bound {
        slope: f64::MIN,
        upper: f64::MIN,
    };
    for series in &BOUNDED_SERIES {
        let b = bound_after(baseline, cycles, series, plan.warm_up_units, options.noise)?;
        if b.upper >= plan.resolution {
            return None;
        }
        if b.upper > highest.upper {
            highest = b;
        }
    }
    let unit = options.unit.name();
    let at_pace = plan.resolution > budget_resolution;
    let ruled_out = match super::pace::units_per_second(cycles) {
        Some(rate) => {
            let elapsed = cycles.last().and_then(|c| c.read_at_s);
            let elapsed = elapsed.unwrap_or_else(|| cycles.iter().map(|c| c.duration_s).sum());
            super::pace::ruled_out(
                highest.upper,
                highest.slope,
                rate,
                budget_resolution,
                elapsed,
                unit,
            )
        }
        None => format!("at most {} per {unit}", per_request(highest.upper.max(0.0))),
    };
    Some(format!(
        "{ruled_out}; below the {} resolution{} (the bound: the fit plus {BOUND_SIGMAS} \
         standard errors)",
        per_request(plan.resolution),
        match at_pace {
            true => " at this pace (a leak that fills the headroom left within a week)",
            false => "",
        }
    ))
}

/// A slope and its upper bound, bytes per unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    pub slope: f64,
    pub upper: f64,
}

/// Requests whose growth is warm-up for the bound: JIT code, lazy
/// initialisation and pools grow over the first few thousand requests
/// (/churn's heap rose 0.8 MB over its first 5 000, then held within
/// ±0.1 MB). The fit starts at the first reading taken at or after it, so
/// the first cycle is always left out.
pub const WARM_UP_REQUESTS: f64 = 5_000.0;

/// The slope of `series` over the readings after a server's warm-up.
#[cfg(test)]
pub fn bound_of(baseline: &Sample, cycles: &[CycleResult], series: &Series) -> Option<Bound> {
    bound_after(baseline, cycles, series, WARM_UP_REQUESTS, Noise::Process)
}

/// The slope of `series` over the readings after `warm_up` units, with
/// `BOUND_SIGMAS` standard errors above it. Needs three readings there; a
/// series the probe cannot read has none.
fn bound_after(
    baseline: &Sample,
    cycles: &[CycleResult],
    series: &Series,
    warm_up: f64,
    noise: Noise,
) -> Option<Bound> {
    if baseline.value(series).is_none() || baseline.heap_used == 0 {
        return None;
    }
    let mut sent = 0.0;
    let mut points = Vec::with_capacity(cycles.len());
    for cycle in cycles {
        sent += cycle.units as f64;
        points.push((sent, cycle.after_gc.value(series)?));
    }
    let warm = points
        .iter()
        .position(|p| p.0 >= warm_up)
        .unwrap_or(points.len());
    let points = &points[warm..];
    if points.len() < 3 {
        return None;
    }
    let line = least_squares(points)?;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / points.len() as f64;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sd = line.residual_sd.max(noise.floor(series));
    let se = sd / sxx.sqrt();
    Some(Bound {
        slope: line.slope,
        upper: line.slope + BOUND_SIGMAS * se,
    })
}

/// The cycles read `group` at a time: one reading per group (its last),
/// the group's units and counts summed. The first `GROUPS * group` cycles.
pub fn in_groups(cycles: &[CycleResult], group: usize) -> Vec<CycleResult> {
    cycles
        .chunks(group.max(1))
        .take(GROUPS)
        .enumerate()
        .map(|(i, chunk)| {
            let last = chunk.last().expect("chunks are never empty");
            let sum = |f: fn(&CycleResult) -> u64| chunk.iter().map(f).sum();
            let mut load = last.load.clone();
            load.stalled = chunk.iter().any(|c| c.load.stalled);
            CycleResult {
                cycle: i as u32 + 1,
                requests: sum(|c| c.requests),
                responses: sum(|c| c.responses),
                errors: sum(|c| c.errors),
                non_2xx: sum(|c| c.non_2xx),
                duration_s: chunk.iter().map(|c| c.duration_s).sum(),
                units: sum(|c| c.units),
                served: chunk.iter().map(|c| c.served).sum(),
                load,
                ..last.clone()
            }
        })
        .collect()
}

/// A verdict with what it was judged from.
/// A verdict over the readings with the isolates folded in: what the
/// fixed method and each look of `--cycles auto` judge.
pub(super) struct Judged {
    pub(super) verdict: Verdict,
    pub(super) retained: RetainedPerRequest,
    pub(super) isolates: Vec<IsolateResult>,
}

impl Judged {
    fn into_look(self, state: SequentialResult) -> Look {
        Look {
            verdict: self.verdict,
            retained: self.retained,
            isolates: self.isolates,
            state,
        }
    }
}

/// The route's verdict over `cycles`, the other isolates folded in, as
/// a fixed run's is.
pub(super) fn judged(
    baseline: &Sample,
    cycles: &[CycleResult],
    options: Options,
) -> Option<Judged> {
    let (mut verdict, retained) = judge(baseline, cycles, options)?;
    let isolates = judge_isolates(baseline, cycles, options);
    fold_into(&mut verdict, &isolates, options.unit.name());
    Some(Judged {
        verdict,
        retained,
        isolates,
    })
}

/// Not decided yet: `inconclusive`, with what would decide it. The
/// small cycles' fits and slopes stay for the reports.
/// `budget_time`: seconds the rest of the budget takes at the route's pace.
fn undecided(
    raw: Judged,
    state: SequentialResult,
    summary: String,
    max_flag: &str,
    budget_time: Option<f64>,
) -> Look {
    let mut verdict = raw.verdict;
    verdict.kind = VerdictKind::Inconclusive;
    verdict.fails_gate = false;
    verdict.summary = summary;
    let within = budget_time.map_or(String::new(), |seconds| {
        format!(" (about {} more at this pace)", human_duration(seconds))
    });
    verdict.action = format!(
        "Let the run reach a decision or its budget ({max_flag}{within}), or raise {max_flag}; \
         a few small cycles cannot yet tell a small leak from none."
    );
    Look {
        verdict,
        retained: raw.retained,
        isolates: raw.isolates,
        state,
    }
}

#[cfg(test)]
#[path = "sequential_tests.rs"]
mod tests;
