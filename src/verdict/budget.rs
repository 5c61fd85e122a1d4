//! How many cycles of how much work: the fixed method's schedule, or
//! `--cycles auto`'s small cycles and budget (`sequential.rs` decides when
//! they stop). The policy lives here, beside the rule it feeds, for every
//! kind of work: a server's requests and a page's iterations differ only
//! in their defaults (`SERVER`, `PAGE`).

use std::time::Duration;

use crate::model::Series;

use super::metric::{Noise, RETENTION_SIGMAS};
use super::sequential::SequentialPlan;

/// `--cycles`: a fixed count, or small cycles until decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cycles {
    Fixed(u32),
    Auto,
}

impl std::str::FromStr for Cycles {
    type Err = String;
    fn from_str(text: &str) -> Result<Cycles, String> {
        if text.eq_ignore_ascii_case("auto") {
            return Ok(Cycles::Auto);
        }
        text.parse::<u32>()
            .map(Cycles::Fixed)
            .map_err(|_| format!("{text:?} is neither a number of cycles nor `auto`"))
    }
}

/// One kind of work's defaults, and the flags that change them.
#[derive(Debug, Clone, Copy)]
pub struct Defaults {
    /// Units per cycle of the fixed method.
    pub method_cycle: u64,
    /// Units per small cycle of `--cycles auto`.
    pub auto_cycle: u64,
    /// The most units `--cycles auto` sends per route.
    pub auto_max: u64,
    /// The flag of the cycle size and of the budget, for messages.
    pub cycle_flag: &'static str,
    pub max_flag: &'static str,
    pub unit: &'static str,
    /// Units whose growth is warm-up for `--cycles auto`'s bound.
    pub warm_up: f64,
    /// How repeatable one reading of this kind of target is.
    pub noise: Noise,
}

impl Defaults {
    /// What the budget's three groups resolve: a group's growth must
    /// exceed `RETENTION_SIGMAS` heapUsed noise floors to be retention, so
    /// below this many bytes per unit the fixed method over the same work
    /// would call a route flat or unclear, never a leak.
    pub fn resolution(&self) -> f64 {
        RETENTION_SIGMAS * self.noise.floor(&Series::HEAP_USED) / (self.auto_max / 3) as f64
    }
}

/// Requests per cycle of the fixed method (docs/src/method.md).
pub const METHOD_REQUESTS: u64 = 20_000;

/// A server's requests. Small cycles of 2 500: a ≥ 200-byte leak grows
/// 0.5 MB in one, five heapUsed noise floors, so three of them decide it;
/// and more readings bound a route that keeps nothing sooner (tuned on
/// recorded series: 2 500 bounded /churn, a bounded cache and 100 KB of
/// garbage by 20 000–27 500 requests, 5 000 by 30 000–40 000; see
/// BENCHMARKS.md, "Sequential cycles"). The budget is the fixed method's
/// 3 × 20 000, so the resolution is its 15.7 B per request.
pub const SERVER: Defaults = Defaults {
    method_cycle: METHOD_REQUESTS,
    auto_cycle: 2_500,
    auto_max: 3 * METHOD_REQUESTS,
    cycle_flag: "--requests",
    max_flag: "--max-requests",
    unit: "requests",
    warm_up: super::sequential::WARM_UP_REQUESTS,
    noise: Noise::Process,
};

/// A function's calls (`leakcheck fn`): a call costs what a request does
/// or less, and the harness's process reads as a server's does, so the
/// server's cycles, budget and resolution.
pub const FUNCTION: Defaults = Defaults {
    cycle_flag: "--calls",
    max_flag: "--max-calls",
    unit: "calls",
    ..SERVER
};

/// A page's iterations: an iteration costs milliseconds where a request
/// costs microseconds. Small cycles of 25 (a look every 75); with a page's
/// noise floor (`Noise::Page`, 16 KB) the budget of 600 resolves 246 B per
/// iteration, so a 700 B leak is decided in about 225; a page that keeps
/// nothing is bounded below the resolution after about 175 iterations,
/// near the 3 × 50 of the fixed default in wall time.
pub const PAGE: Defaults = Defaults {
    method_cycle: 50,
    auto_cycle: 25,
    auto_max: 600,
    cycle_flag: "-n",
    max_flag: "--max-iterations",
    unit: "iterations",
    warm_up: PAGE_WARM_UP_ITERATIONS,
    noise: Noise::Page,
};

/// A page's warm-up: its first clicks compile handlers and fill Blink's
/// caches; after two small cycles its after-GC heap holds (leaky.html and
/// its fixed twin, `tests/targets/pages`).
pub const PAGE_WARM_UP_ITERATIONS: f64 = 50.0;

/// A cycle's time target when no cycle size is given: "N units or T
/// seconds, whichever comes first". Short enough that a heavy route (a
/// server-side render at 40 requests/s, a function that slows as it
/// leaks) gives a reading every few seconds, so the sequential rule has
/// a dozen of them within its first minute; long enough that a fast route
/// (thousands a second) still completes its 2 500 units well within it
/// and its cycles, and so its resolution, are unchanged. With the
/// in-flight units and the reading after it, no default cycle takes 15 s.
pub const CYCLE_TIME: Duration = Duration::from_secs(5);

/// What the user asked for; `None` where a flag was not given.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked {
    pub cycles: Option<Cycles>,
    pub per_cycle: Option<u64>,
    pub resolution: Option<f64>,
    pub max_units: Option<u64>,
    /// `--cycle-time`.
    pub cycle_time: Option<Duration>,
}

/// The schedule a route runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// Cycles; with `sequential`, the most the budget allows.
    pub cycles: u32,
    pub per_cycle: u64,
    pub sequential: Option<SequentialPlan>,
    /// The smallest retention per unit that must not pass as clean: a
    /// fixed run whose cycles cannot see it is `inconclusive`.
    pub resolution: f64,
    /// Each cycle ends at its units or at this time, whichever comes
    /// first: `--cycle-time`, else `CYCLE_TIME` for `--cycles auto`
    /// without a cycle size (a count asked for is sent whole).
    pub cycle_time: Option<Duration>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BudgetError {
    #[error("--cycles must be at least 1 (the method needs 3 to tell a trend)")]
    NoCycles,
    #[error(
        "{max_flag} is --cycles auto's budget: add --cycles auto, or drop it for a fixed number \
         of cycles"
    )]
    AutoOnly { max_flag: &'static str },
    #[error(
        "{max_flag} {budget} holds fewer than 3 cycles of {per_cycle} {unit}: raise it to at \
         least {} or lower {cycle_flag}", 3 * per_cycle
    )]
    TooSmall {
        max_flag: &'static str,
        cycle_flag: &'static str,
        unit: &'static str,
        budget: u64,
        per_cycle: u64,
    },
    #[error("--resolution must be above 0 bytes per unit of work")]
    Resolution,
    #[error("{0} must be at least 1")]
    Zero(&'static str),
}

/// The schedule from the flags. A cycle size asks for the method's fixed
/// cycles; nothing asks for the sequential ones, which decide as the fixed
/// ones do, sooner.
pub fn schedule(defaults: &Defaults, asked: Asked) -> Result<Schedule, BudgetError> {
    if asked.per_cycle == Some(0) {
        return Err(BudgetError::Zero(defaults.cycle_flag));
    }
    if asked.cycle_time.is_some_and(|t| t.is_zero()) {
        return Err(BudgetError::Zero("--cycle-time"));
    }
    // The defaults' cycles end in time; a count asked for (a cycle size,
    // or the fixed method's --cycles N of 20 000) is sent whole unless
    // --cycle-time asks too.
    let cycle_time = asked.cycle_time.or(match (asked.per_cycle, asked.cycles) {
        (None, None | Some(Cycles::Auto)) => Some(CYCLE_TIME),
        _ => None,
    });
    let cycles = asked.cycles.unwrap_or(match asked.per_cycle {
        Some(_) => Cycles::Fixed(3),
        None => Cycles::Auto,
    });
    match cycles {
        Cycles::Fixed(0) => Err(BudgetError::NoCycles),
        Cycles::Fixed(cycles) => {
            if asked.max_units.is_some() {
                return Err(BudgetError::AutoOnly {
                    max_flag: defaults.max_flag,
                });
            }
            Ok(Schedule {
                cycles,
                per_cycle: asked.per_cycle.unwrap_or(defaults.method_cycle),
                sequential: None,
                resolution: resolution(defaults, asked)?,
                cycle_time,
            })
        }
        Cycles::Auto => {
            let per_cycle = asked.per_cycle.unwrap_or(defaults.auto_cycle);
            let budget = asked.max_units.unwrap_or(defaults.auto_max);
            // Looks read the cycles in three groups: the budget is a whole
            // number of looks.
            let cycles = (budget / per_cycle / 3 * 3) as u32;
            if cycles < 3 {
                return Err(BudgetError::TooSmall {
                    max_flag: defaults.max_flag,
                    cycle_flag: defaults.cycle_flag,
                    unit: defaults.unit,
                    budget,
                    per_cycle,
                });
            }
            let resolution = resolution(defaults, asked)?;
            Ok(Schedule {
                cycles,
                per_cycle,
                resolution,
                cycle_time,
                sequential: Some(SequentialPlan {
                    resolution,
                    resolution_asked: asked.resolution.is_some(),
                    max_cycles: cycles,
                    max_units: u64::from(cycles) * per_cycle,
                    warm_up_units: defaults.warm_up,
                    max_flag: defaults.max_flag,
                }),
            })
        }
    }
}

/// `--resolution`, or what the budget's three groups resolve.
fn resolution(defaults: &Defaults, asked: Asked) -> Result<f64, BudgetError> {
    let resolution = asked.resolution.unwrap_or_else(|| defaults.resolution());
    if resolution <= 0.0 || !resolution.is_finite() {
        return Err(BudgetError::Resolution);
    }
    Ok(resolution)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_size_asks_for_three_fixed_cycles_and_nothing_for_auto() {
        let fixed = schedule(
            &SERVER,
            Asked {
                per_cycle: Some(300),
                ..Asked::default()
            },
        )
        .unwrap();
        assert_eq!(
            (fixed.cycles, fixed.per_cycle, fixed.sequential),
            (3, 300, None)
        );
        let auto = schedule(&SERVER, Asked::default()).unwrap();
        assert_eq!((auto.cycles, auto.per_cycle), (24, 2_500));
        let plan = auto.sequential.unwrap();
        assert!((plan.resolution - super::super::sequential::method_resolution()).abs() < 1e-9);
    }

    #[test]
    fn the_defaults_cycles_end_in_time_and_a_count_asked_for_is_sent_whole() {
        let time = |asked: Asked| schedule(&SERVER, asked).unwrap().cycle_time;
        assert_eq!(time(Asked::default()), Some(CYCLE_TIME));
        let auto = Asked {
            cycles: Some(Cycles::Auto),
            ..Asked::default()
        };
        assert_eq!(time(auto), Some(CYCLE_TIME));
        let sized = Asked {
            per_cycle: Some(800),
            ..Asked::default()
        };
        assert_eq!(time(sized), None);
        let fixed = Asked {
            cycles: Some(Cycles::Fixed(3)),
            ..Asked::default()
        };
        assert_eq!(time(fixed), None);
        let asked = Asked {
            per_cycle: Some(800),
            cycle_time: Some(Duration::from_secs(2)),
            ..Asked::default()
        };
        assert_eq!(time(asked), Some(Duration::from_secs(2)));
        let zero = Asked {
            cycle_time: Some(Duration::ZERO),
            ..Asked::default()
        };
        assert_eq!(
            schedule(&SERVER, zero),
            Err(BudgetError::Zero("--cycle-time"))
        );
    }

    #[test]
    fn a_page_budget_resolves_what_its_groups_can() {
        let auto = schedule(&PAGE, Asked::default()).unwrap();
        assert_eq!((auto.cycles, auto.per_cycle), (24, 25));
        let resolution = auto.sequential.unwrap().resolution;
        // Under a 700 B-per-iteration leak (fuite's small-leak pages),
        // which the server's floor could not resolve in 600.
        assert!((200.0..300.0).contains(&resolution), "{resolution}");
    }

    #[test]
    fn refuses_what_cannot_run() {
        let zero = Asked {
            cycles: Some(Cycles::Fixed(0)),
            ..Asked::default()
        };
        assert_eq!(schedule(&SERVER, zero), Err(BudgetError::NoCycles));
        let small = Asked {
            max_units: Some(100),
            per_cycle: Some(50),
            cycles: Some(Cycles::Auto),
            ..Asked::default()
        };
        let error = schedule(&PAGE, small).unwrap_err().to_string();
        assert!(
            error.contains("--max-iterations 100") && error.contains("-n"),
            "{error}"
        );
        let mixed = Asked {
            cycles: Some(Cycles::Fixed(3)),
            max_units: Some(10_000),
            ..Asked::default()
        };
        assert!(matches!(
            schedule(&SERVER, mixed),
            Err(BudgetError::AutoOnly { .. })
        ));
        // A fixed run keeps the resolution it must not pass a leak above.
        let fixed = Asked {
            per_cycle: Some(300),
            resolution: Some(2048.0),
            ..Asked::default()
        };
        assert_eq!(schedule(&SERVER, fixed).unwrap().resolution, 2048.0);
        let default = Asked {
            per_cycle: Some(300),
            ..Asked::default()
        };
        let default = schedule(&SERVER, default).unwrap().resolution;
        assert!((default - SERVER.resolution()).abs() < 1e-9);
        assert_eq!("auto".parse::<Cycles>(), Ok(Cycles::Auto));
        assert!("x".parse::<Cycles>().is_err());
    }
}
