//! A target that died during the measuring. When memory killed it (V8's
//! fatal heap message, a failed allocation, the cgroup's OOM killer), the
//! route it was serving is judged on its death (`verdict::exhaustion`):
//! the readings before it stand, and a fresh process of the target names
//! the holder, since the dead one cannot be snapshotted.

use crate::model::{OutcomeStatus, RunResult, Stopped, VerdictKind};
use crate::platform::cgroup::oom_kills;
use crate::verdict::exhaustion::{Death, apply};

/// The OOM kills counted in leakcheck's own cgroup, which a launched
/// target shares: read before the run and again after a death.
pub fn oom_kills_now() -> Option<u64> {
    oom_kills(std::process::id())
}

/// Judges a failed run whose target exited on its own; returns the
/// route that died of memory with its settled readings grown (a leak to
/// diagnose), if one did.
pub fn judge_death(
    result: &mut RunResult,
    stopped: Option<Stopped>,
    in_cycle: u64,
    oom_before: Option<u64>,
) -> Option<usize> {
    // Already exited, or caught while V8 was still writing its fatal
    // report (the SIGTERM then finds it aborting): the output decides.
    let exit = match stopped {
        Some(Stopped::AlreadyExited(exit) | Stopped::Terminated(exit)) => exit,
        _ => return None,
    };
    if result.outcome.status != OutcomeStatus::Failed {
        return None;
    }
    let oom_killed = matches!((oom_before, oom_kills_now()), (Some(a), Some(b)) if b > a);
    let unit = result.settings.unit.name();
    let output = result.outcome.target_output.clone();
    let index = result.routes.len().checked_sub(1)?;
    let route = &mut result.routes[index];
    let death = Death {
        output: &output,
        exit: Some(exit),
        oom_killed,
        in_cycle,
        heap_limit: route.limits.and_then(|l| l.heap_bytes),
    };
    if !apply(route, &death, unit) {
        return None;
    }
    let verdict = route.verdict.as_ref()?;
    result.outcome.error = Some(format!(
        "the target died of memory during {}: {}",
        route.route, verdict.summary
    ));
    (verdict.kind == VerdictKind::MemoryExhausted).then_some(index)
}
