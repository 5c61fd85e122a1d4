//! `--max-time DURATION`: the whole run within a CI job's budget. The
//! estimate printed before the first route becomes a plan: before each
//! route, the time left is shared among the routes left in proportion to
//! their estimates (a route's requests at its first requests' pace, plus
//! its fixed overhead), so time a clean route saves by deciding early goes
//! to the routes after it. The route's share caps its `--cycles auto`
//! budget in requests; a route its share cannot decide says so, with what
//! it would need, and never passes unchecked. The end says how many
//! shards (`--shard I/N`) would give every route what it needs.

use std::time::Duration;

use crate::cycle::{CyclePlan, LoopPlan};
use crate::model::{RouteResult, RunResult, SequentialStop, VerdictKind};
use crate::verdict::sequential::SequentialPlan;

/// What a route costs besides its requests (a fresh target's start, the
/// settled readings, the verdict): `discover.rs`'s figure.
pub const ROUTE_OVERHEAD_S: f64 = 3.0;
/// The pace assumed for a route whose first requests were not timed
/// (listed with `--route`): a light JSON route's on this machine.
const UNKNOWN_PACE_S: f64 = 0.005;

/// One route's share of the time left.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    pub seconds: f64,
    /// The `--cycles auto` budget it buys, in requests.
    pub max_units: u64,
}

/// What a cycle costs besides its load: the forced collection and the
/// settled readings after it.
const READING_S: f64 = 0.5;

/// A route's estimate: its whole budget's requests at its pace over the
/// run's connections, no more than its cycles at their time target
/// (`cycle_time`) when cycles have one, plus the overhead.
pub fn estimate_s(
    sequential: &SequentialPlan,
    cycle_time: Option<Duration>,
    pace_s: Option<f64>,
    connections: usize,
) -> f64 {
    let pace = pace_s.unwrap_or(UNKNOWN_PACE_S);
    let by_pace = sequential.max_units as f64 * pace / connections.max(1) as f64;
    let by_time = cycle_time.map_or(f64::INFINITY, |t| {
        f64::from(sequential.max_cycles) * (t.as_secs_f64() + READING_S)
    });
    by_pace.min(by_time) + ROUTE_OVERHEAD_S
}

/// The share of the first of `estimates` (the routes left) in `left`;
/// `None` when every estimate fits.
pub fn share(
    left: Duration,
    estimates: &[f64],
    max_units: u64,
    pace_s: Option<f64>,
    connections: usize,
) -> Option<Share> {
    let total: f64 = estimates.iter().sum();
    let mine = *estimates.first()?;
    if total <= left.as_secs_f64() {
        return None;
    }
    let seconds = left.as_secs_f64() * mine / total;
    let pace = pace_s.unwrap_or(UNKNOWN_PACE_S);
    let units = ((seconds - ROUTE_OVERHEAD_S).max(0.0) * connections.max(1) as f64 / pace) as u64;
    Some(Share {
        seconds,
        max_units: units.min(max_units),
    })
}

/// The loop's plan for a route held to `share`: its `--cycles auto`
/// budget (and the cycles that carry it, whole groups of three) no more
/// than the share buys, at least one group.
pub fn within(looped: &LoopPlan, share: Share, cycle_units: u64) -> LoopPlan {
    let mut looped = looped.clone();
    if let Some(sequential) = looped.sequential.as_mut() {
        *sequential = held_to(sequential, share, cycle_units, looped.cycle_time);
        looped.cycles = sequential.max_cycles;
        // The units bound a fast route; the clock bounds a slow one, whose
        // time-bound cycles would never reach them.
        let work = (share.seconds - ROUTE_OVERHEAD_S).max(0.0);
        looped.deadline = Some(std::time::Instant::now() + Duration::from_secs_f64(work));
    }
    looped
}

/// The cycles the share buys: by its requests at the route's pace, and,
/// with time-bound cycles, by their time (a route slower than its pace
/// was taken to be still fits its share).
fn held_to(
    sequential: &SequentialPlan,
    share: Share,
    cycle_units: u64,
    cycle_time: Option<Duration>,
) -> SequentialPlan {
    let by_units = (share.max_units / cycle_units.max(1)) as u32;
    let by_time = cycle_time.map_or(u32::MAX, |t| {
        ((share.seconds - ROUTE_OVERHEAD_S).max(0.0) / (t.as_secs_f64() + READING_S)) as u32
    });
    let cycles = (by_units.min(by_time) / 3 * 3)
        .max(3)
        .min(sequential.max_cycles);
    SequentialPlan {
        max_cycles: cycles,
        max_units: u64::from(cycles) * cycle_units,
        ..*sequential
    }
}

/// A route its share did not decide: `inconclusive`, with the share and
/// what the route would need. Also when the fixed method's verdict over
/// the share's few readings read a leak: a budget the planner cut, not
/// one the user asked for, is not evidence enough (a heavy clean route
/// held to three cycles read its rss warm-up as off-heap retention); a
/// leak clear in each of three groups stops as `retention` before the
/// budget and stands.
pub fn say_share_ran_out(route: &mut RouteResult, share: Share, max_time: Duration) {
    let stopped = route.sequential.as_ref().map(|s| s.stopped);
    let Some(verdict) = route.verdict.as_mut() else {
        return;
    };
    if stopped != Some(SequentialStop::Budget) {
        return;
    }
    if verdict.kind != VerdictKind::Inconclusive {
        verdict.summary = format!(
            "not decided within its share of --max-time (the fixed method over its few \
             readings read {}: {})",
            verdict.kind.name(),
            verdict.summary
        );
        verdict.kind = VerdictKind::Inconclusive;
        verdict.fails_gate = false;
    }
    verdict.action = format!(
        "Its share of --max-time {} ({:.0} s) ran out before the readings decided: give the \
         run more time, or split the routes over more runners (--shard I/N; the run says how \
         many at its end).",
        crate::units::human_duration(max_time.as_secs_f64()),
        share.seconds,
    );
}

/// How many shards of `max_time` the routes' estimates need (each route
/// whole: a route is never split).
pub fn shards_needed(estimates: &[f64], max_time: Duration) -> u32 {
    let budget = max_time.as_secs_f64().max(1.0);
    let mut sorted = estimates.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    // First fit, the largest first: a bound good enough to advise on.
    let mut bins: Vec<f64> = Vec::new();
    for estimate in sorted {
        match bins.iter_mut().find(|b| **b + estimate <= budget) {
            Some(bin) => *bin += estimate,
            None => bins.push(estimate),
        }
    }
    (bins.len() as u32).max(1)
}

/// `--max-time` as the run goes: when it began, and each route's estimate.
pub(super) struct RunBudget {
    pub max_time: std::time::Duration,
    started: std::time::Instant,
    paces: Vec<Option<f64>>,
    estimates: Vec<f64>,
    connections: usize,
}

impl RunBudget {
    pub fn new(
        max_time: Option<std::time::Duration>,
        plan: &CyclePlan,
        routes: &[String],
        result: &RunResult,
    ) -> Option<RunBudget> {
        let max_time = max_time?;
        let sequential = plan.looped.sequential?;
        let connections = plan.load.connections;
        let paces: Vec<Option<f64>> = super::discover::paced(routes, result)
            .into_iter()
            .map(|(_, pace)| pace)
            .collect();
        let estimates = paces
            .iter()
            .map(|pace| estimate_s(&sequential, plan.looped.cycle_time, *pace, connections))
            .collect();
        Some(RunBudget {
            max_time,
            started: std::time::Instant::now(),
            paces,
            estimates,
            connections,
        })
    }

    /// The loop plan of route `index` held to its share, when the time
    /// left does not cover every route's estimate.
    pub fn share_of(&self, index: usize, plan: &CyclePlan) -> Option<(LoopPlan, Share)> {
        let left = self.max_time.saturating_sub(self.started.elapsed());
        let max_units = plan.looped.sequential?.max_units;
        let share = share(
            left,
            &self.estimates[index..],
            max_units,
            self.paces[index],
            self.connections,
        )?;
        let cycle_units = match plan.load.stop {
            crate::load::Stop::Requests(n) => n,
            crate::load::Stop::Duration(_) => return None,
        };
        Some((within(&plan.looped, share, cycle_units), share))
    }

    /// Whether route `index`'s pace is yet to be timed (a listed route).
    pub fn pace_unknown(&self, index: usize) -> bool {
        self.paces.get(index).is_some_and(Option::is_none)
    }

    /// Route `index` was timed: its estimate follows its pace.
    pub fn learn_pace(&mut self, index: usize, pace_s: f64, plan: &CyclePlan) {
        let Some(sequential) = plan.looped.sequential else {
            return;
        };
        self.paces[index] = Some(pace_s);
        self.estimates[index] = estimate_s(
            &sequential,
            plan.looped.cycle_time,
            Some(pace_s),
            self.connections,
        );
    }

    pub fn say_shards_needed(&self, progress: &crate::report::progress::Progress) {
        let total: f64 = self.estimates.iter().sum();
        let shards = shards_needed(&self.estimates, self.max_time);
        progress.say(&format!(
            "--max-time {}: the routes' estimates add up to {}; {} (each route whole)",
            crate::units::human_duration(self.max_time.as_secs_f64()),
            crate::units::human_duration(total),
            match shards {
                1 => "one runner fits them".to_string(),
                n => format!("--shard I/{n} over {n} runners would give each its whole budget"),
            }
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_fits_gives_no_route_a_cap() {
        let estimates = [10.0, 10.0];
        assert_eq!(
            share(Duration::from_secs(60), &estimates, 60_000, Some(0.001), 10),
            None
        );
    }

    #[test]
    fn the_time_left_is_shared_by_the_routes_estimates() {
        // 30 s left; this route's estimate is a third of what is left.
        let estimates = [40.0, 80.0];
        let share = share(Duration::from_secs(30), &estimates, 60_000, Some(0.01), 10).unwrap();
        assert!((share.seconds - 10.0).abs() < 1e-9);
        // (10 s − 3 s of overhead) × 10 connections / 10 ms a request.
        assert_eq!(share.max_units, 7_000);
    }

    #[test]
    fn a_share_buys_whole_groups_and_at_least_one() {
        let plan = SequentialPlan {
            resolution: 16.0,
            resolution_asked: false,
            max_cycles: 24,
            max_units: 60_000,
            warm_up_units: 0.0,
            max_flag: "--max-requests",
        };
        let share = |seconds, max_units| Share { seconds, max_units };
        let held = held_to(&plan, share(20.0, 14_000), 2_500, None);
        assert_eq!((held.max_cycles, held.max_units), (3, 7_500));
        let held = held_to(&plan, share(60.0, 40_000), 2_500, None);
        assert_eq!((held.max_cycles, held.max_units), (15, 37_500));
        let starved = held_to(&plan, share(1.0, 10), 2_500, None);
        assert_eq!(starved.max_cycles, 3);
        // Cycles of at most 5 s: 60 s buys (60 − 3) / 5.5 = 10, so 9.
        let five = Some(Duration::from_secs(5));
        let held = held_to(&plan, share(60.0, 40_000), 2_500, five);
        assert_eq!(held.max_cycles, 9);
    }

    #[test]
    fn a_leak_read_only_by_a_cut_budget_is_undecided_and_one_clear_in_its_groups_stands() {
        use crate::model::{SequentialResult, Verdict};
        let route = |stopped| RouteResult {
            verdict: Some(Verdict {
                kind: VerdictKind::OffHeapRetention,
                fails_gate: true,
                ..Verdict::default()
            }),
            sequential: Some(SequentialResult {
                decided_after_requests: 7_500,
                cycles: 3,
                group_cycles: 1,
                stopped,
                reason: String::new(),
                upper_bound_bytes_per_request: None,
            }),
            ..RouteResult::default()
        };
        let share = Share {
            seconds: 10.0,
            max_units: 7_500,
        };
        let minute = Duration::from_secs(60);
        let mut cut = route(SequentialStop::Budget);
        say_share_ran_out(&mut cut, share, minute);
        let verdict = cut.verdict.unwrap();
        assert_eq!(verdict.kind, VerdictKind::Inconclusive);
        assert!(!verdict.fails_gate);
        assert!(verdict.summary.contains("read off-heap-retention"));
        assert!(
            verdict.action.contains("--max-time 60 s (10 s)"),
            "{}",
            verdict.action
        );
        let mut clear = route(SequentialStop::Retention);
        say_share_ran_out(&mut clear, share, minute);
        assert_eq!(clear.verdict.unwrap().kind, VerdictKind::OffHeapRetention);
    }

    #[test]
    fn shards_needed_packs_whole_routes() {
        let minute = Duration::from_secs(60);
        assert_eq!(shards_needed(&[30.0, 30.0], minute), 1);
        assert_eq!(shards_needed(&[50.0, 50.0, 10.0], minute), 2);
        assert_eq!(shards_needed(&[90.0], minute), 1);
    }
}
