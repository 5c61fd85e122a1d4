//! The verdict's one entry point for the loop: after every cycle, the
//! route's verdict is judged again from all the readings it has, so a run
//! cut short still carries a verdict for what it saw. The fixed method
//! judges the readings (with a soak's time trend on top); `--cycles auto`
//! looks at them and says whether they decide.

use super::Options;
use super::sequential::{SequentialPlan, judged, look};
use crate::model::RouteResult;

/// Recomputes the route's verdict; whether `--cycles auto` may stop (always
/// `false` for the fixed method, which runs its cycles).
pub fn refresh(
    route: &mut RouteResult,
    options: Options,
    sequential: Option<SequentialPlan>,
) -> bool {
    match sequential {
        Some(plan) => refresh_sequential(route, options, plan),
        None => {
            refresh_fixed(route, options);
            false
        }
    }
}

fn refresh_fixed(route: &mut RouteResult, options: Options) {
    let Some(baseline) = &route.baseline else {
        return;
    };
    let Some(judged) = judged(baseline, &route.cycles, options) else {
        return;
    };
    route.verdict = Some(judged.verdict);
    route.retained_bytes_per_request = Some(judged.retained);
    route.isolates = judged.isolates;
    if options.soak {
        super::over_time::apply(route, options.noise, options.unit.name());
    }
}

/// `--cycles auto`'s look after a cycle: the route's verdict so far (an
/// undecided route reads `inconclusive`) and whether it is decided.
fn refresh_sequential(route: &mut RouteResult, options: Options, plan: SequentialPlan) -> bool {
    let Some(baseline) = &route.baseline else {
        return false;
    };
    let Some(look) = look(baseline, &route.cycles, options, plan) else {
        return false;
    };
    let decided = look.stops();
    route.verdict = Some(look.verdict);
    route.retained_bytes_per_request = Some(look.retained);
    route.isolates = look.isolates;
    route.sequential = Some(look.state);
    decided
}
