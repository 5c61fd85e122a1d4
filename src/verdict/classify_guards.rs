//! The guards a clean or leaking row must pass before it stands, each
//! turning it `inconclusive` with what would decide: a trend needs two
//! steps after warm-up (`require_a_trend`), every serving process must
//! have been read (`unless_unread`), and a clean row must rule out a leak
//! of the resolution (`unless_unresolved`, with `resolvable`).

use super::{Choice, Context};
use crate::model::{CycleResult, Series, Trend, VerdictKind};
use crate::units::per_request;
use crate::verdict::metric::Noise;

/// The smallest retention per unit the readings of `cycles` can tell from
/// none (see `Context::unless_unresolved`); infinite with fewer than two
/// readings after the warm-up cycle.
pub fn resolvable(cycles: &[CycleResult], noise: Noise) -> f64 {
    let mut sent = 0.0;
    let mut points = Vec::with_capacity(cycles.len());
    for cycle in cycles {
        sent += cycle.units as f64;
        points.push(sent);
    }
    let read = if points.len() > 2 {
        &points[1..]
    } else {
        &points[..]
    };
    if read.len() < 2 {
        return f64::INFINITY;
    }
    let mean = read.iter().sum::<f64>() / read.len() as f64;
    let sxx: f64 = read.iter().map(|x| (x - mean).powi(2)).sum();
    if sxx <= 0.0 {
        return f64::INFINITY;
    }
    crate::verdict::sequential::BOUND_SIGMAS * noise.floor(&Series::HEAP_USED) / sxx.sqrt()
}

impl Context<'_> {
    /// A clean row from cycles too small to see a leak of the resolution
    /// is no all-clear: `-a 300 --cycles 3` reads 0.56 KB per request as
    /// flat. What the readings can resolve is the `--cycles auto` bound's
    /// width for a route that keeps nothing: `BOUND_SIGMAS` standard errors
    /// of the slope fitted through the readings after the warm-up cycle,
    /// with the heapUsed noise floor as their scatter. It depends only on
    /// how much work each reading follows, so it says in advance what a
    /// design can see: 3 × 20 000 requests resolve 14 B per request, 3 ×
    /// 2 000 141 B, a soak's six intervals of 5 000 requests 13 B.
    pub(super) fn unless_unresolved(&self, choice: Choice) -> Choice {
        let Some(resolution) = self.options.resolution else {
            return choice;
        };
        let clean = matches!(
            choice.kind,
            VerdictKind::NoRetention | VerdictKind::WorkingSet
        );
        if !clean || self.proc_only {
            return choice;
        }
        let resolvable = resolvable(self.cycles, self.options.noise);
        if resolvable <= resolution {
            return choice;
        }
        let per_cycle = self.cycles.iter().map(|c| c.units).max().unwrap_or(0);
        // Resolvable scales as 1 / work per reading: the same cycles, larger.
        let needed = (per_cycle as f64 * resolvable / resolution).ceil() as u64;
        let unit = self.unit();
        let shown = |bytes: f64| {
            if bytes.is_finite() {
                per_request(bytes)
            } else {
                "any size".to_string()
            }
        };
        let action = if self.options.soak {
            format!(
                "Soak longer, or at a higher rate: each interval needs about {needed} {unit}s \
                 (-R × --every) to see {} per {unit}; or pass --resolution {} if leaks below it \
                 do not matter to you.",
                shown(resolution),
                shown(resolvable)
            )
        } else {
            format!(
                "Let --cycles auto decide (drop --cycles and the cycle size), or send about \
                 {needed} {unit}s per cycle; or pass --resolution {} if leaks below it do not \
                 matter to you.",
                shown(resolvable)
            )
        };
        self.choice(
            VerdictKind::Inconclusive,
            format!(
                "{}, but {} {unit}s in {} cycles can only rule out a leak above {} per {unit} \
                 (the resolution asked for is {})",
                choice.summary,
                self.cycles.iter().map(|c| c.units).sum::<u64>(),
                self.cycles.len(),
                shown(resolvable),
                shown(resolution)
            ),
            &action,
        )
    }

    /// A leak is growth "by a similar amount each cycle": it needs two
    /// steps after the warm-up cycle to be told from warm-up (JIT code,
    /// pools, caches that fill once). With fewer, growth is inconclusive,
    /// never a leak: `--cycles 1` on a route that keeps nothing read
    /// `retention` every time, `--cycles 2` one run in thirteen.
    /// A clean row needs every request's process read. When the processes
    /// leakcheck reads began fewer requests than were answered, others
    /// served the rest (a cluster worker whose inspector did not start, a
    /// second server on the port) and their memory may grow unseen: a
    /// clean verdict would be a false all-clear.
    pub(super) fn unless_unread(&self, choice: Choice) -> Choice {
        if choice.kind.is_leak() || choice.kind == VerdictKind::Inconclusive {
            return choice;
        }
        let unread = self.cycles.iter().find_map(|c| {
            c.served_by_builtin_load()
                .filter(|served| *served < c.responses)
                .map(|served| (c, served))
        });
        let Some((cycle, served)) = unread else {
            return choice;
        };
        self.choice(
            VerdictKind::Inconclusive,
            format!(
                "{}, but in cycle {} the processes leakcheck reads began only {served} of the {} \
                 answered {}s: another process served the rest, and its memory was not read",
                choice.summary,
                cycle.cycle,
                cycle.responses,
                self.unit()
            ),
            "Make every serving process readable (a cluster's workers need inspectors of their \
             own: cluster.setupPrimary({ inspectPort: 0 })), or check nothing else listens on \
             the port; then run again.",
        )
    }

    pub(super) fn require_a_trend(&self, choice: Choice) -> Choice {
        const STEPS_FOR_A_TREND: usize = 2;
        let steps = self.steps_after_warm_up();
        let grows = choice.kind.is_leak()
            || (choice.kind == VerdictKind::Inconclusive
                && self.fits.iter().any(|f| f.trend == Trend::Unclear));
        if steps >= STEPS_FOR_A_TREND || !grows {
            return choice;
        }
        let more = STEPS_FOR_A_TREND + 1 - self.cycles.len();
        self.choice(
            VerdictKind::Inconclusive,
            format!(
                "{}: {} measured cycle{} cannot tell a trend from warm-up ({} would be read as {})",
                self.series_text(&choice.figure),
                self.cycles.len(),
                if self.cycles.len() == 1 { "" } else { "s" },
                per_request(self.slope(&choice.figure)),
                choice.kind
            ),
            &if self.options.soak {
                format!(
                    "Soak longer (-d) or read more often (--every) for {more} more settled \
                     reading{}: the first interval's growth is warm-up, and a leak must then \
                     grow in two more.",
                    if more == 1 { "" } else { "s" }
                )
            } else {
                format!(
                    "Run {more} more cycle{} (--cycles {}): the first cycle's growth is warm-up, \
                     and a leak must then grow in two more.",
                    if more == 1 { "" } else { "s" },
                    STEPS_FOR_A_TREND + 1
                )
            },
        )
    }
}
