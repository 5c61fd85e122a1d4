//! Work that slows as it goes: time per unit of work rising cycle over
//! cycle. A request or call that registers a listener, a middleware or a
//! hook and never removes it both keeps memory and makes every later unit
//! walk a longer list, so it does more work than the one before; the
//! slowdown is often visible sooner than the bytes, and beside growth it
//! is the leak's strongest evidence.
//!
//! Method: the time per unit of each cycle (its load's wall time over the
//! units it completed). A slowdown needs every cycle after the first to
//! take at least `RISE_RATIO` times the first's time per unit, and the
//! last at least `SLOWDOWN_RATIO` times: a busy machine's jitter moves a
//! cycle's pace by tens of per cent, not every later cycle by half again
//! and the last by double. Later cycles are not compared with each other:
//! time-bound cycles of a slowing function complete fewer units each, so
//! its pace rises by only a third from one late cycle to the next, within
//! the jitter (a strict rise in every pair failed a try of the fixed test under the
//! whole suite, Node 22). Three cycles suffice, as a leak's retention is decided on
//! three: JIT warm-up makes the first cycle the slowest of a healthy
//! route, the opposite direction, so it never reads as one.

use crate::model::{CycleResult, Finding, FindingKind, VerdictKind};

/// The last cycle's time per unit over the first's that counts as a
/// slowdown: a machine's noise moves a cycle's pace by tens of per cent
///,
/// work that grows per unit doubles it within a few cycles.
pub const SLOWDOWN_RATIO: f64 = 2.0;
/// Every cycle after the first at least this many times the first's.
pub const RISE_RATIO: f64 = 1.5;
/// The fewest cycles a slowdown is judged on.
const MIN_CYCLES: usize = 3;

/// Seconds per unit of each cycle; `None` for a cycle that completed
/// nothing.
fn paces(cycles: &[CycleResult]) -> Vec<Option<f64>> {
    cycles
        .iter()
        .map(|c| (c.units > 0 && c.duration_s > 0.0).then(|| c.duration_s / c.units as f64))
        .collect()
}

/// The `slowdown` finding, when every cycle after the first took at least
/// half again the first's time per unit and the last at least twice.
pub fn finding(cycles: &[CycleResult], unit: &str, kind: VerdictKind) -> Option<Finding> {
    let paces: Vec<f64> = paces(cycles).into_iter().collect::<Option<_>>()?;
    if paces.len() < MIN_CYCLES {
        return None;
    }
    let (first, last) = (paces[0], *paces.last()?);
    let rises = paces[1..].iter().all(|pace| *pace >= RISE_RATIO * first);
    if !rises || last < SLOWDOWN_RATIO * first {
        return None;
    }
    let meaning = match kind.is_leak() {
        true => {
            "and what it keeps grows with it: something is added per unit and never removed \
                 (a listener, middleware or hook list that every later one walks)"
        }
        false => {
            "though the memory read shows no leak: look for a list or map walked per unit \
                  that grows"
        }
    };
    Some(Finding::new(
        FindingKind::Slowdown,
        format!(
            "{} per {unit} in cycle 1, {} in cycle {}: each {unit} does more work than the one \
             before, {meaning}",
            time_text(first),
            time_text(last),
            cycles.len()
        ),
    ))
}

/// "1.2 ms", "87 ms", "2.4 s".
fn time_text(seconds: f64) -> String {
    match seconds {
        s if s >= 1.0 => format!("{s:.1} s"),
        s if s >= 0.01 => format!("{:.0} ms", s * 1000.0),
        s if s >= 0.001 => format!("{:.1} ms", s * 1000.0),
        s => format!("{:.0} µs", s * 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycles(seconds_per_unit: &[f64]) -> Vec<CycleResult> {
        seconds_per_unit
            .iter()
            .enumerate()
            .map(|(i, pace)| CycleResult {
                cycle: i as u32 + 1,
                units: 1000,
                duration_s: pace * 1000.0,
                ..CycleResult::default()
            })
            .collect()
    }

    #[test]
    fn work_that_grows_per_call_is_a_slowdown_with_its_figures() {
        let found = finding(
            &cycles(&[0.0012, 0.004, 0.02, 0.087]),
            "call",
            VerdictKind::Retention,
        )
        .unwrap();
        assert_eq!(found.kind, FindingKind::Slowdown);
        assert!(
            found
                .message
                .starts_with("1.2 ms per call in cycle 1, 87 ms in cycle 4"),
            "{}",
            found.message
        );
        assert!(found.message.contains("never removed"), "{}", found.message);
    }

    #[test]
    fn a_late_cycle_a_little_faster_than_the_one_before_still_reads_as_slowing() {
        // Time-bound cycles of a slowing function, the last held up less
        // than the one before it by the machine.
        let found = finding(
            &cycles(&[0.0014, 0.0034, 0.0045, 0.0042]),
            "call",
            VerdictKind::Retention,
        );
        assert!(found.is_some());
    }

    #[test]
    fn jitter_and_a_slow_first_cycle_are_not_a_slowdown() {
        // Up and down by a third: a busy machine.
        let busy = cycles(&[0.001, 0.001, 0.0013, 0.0011, 0.0014]);
        assert!(finding(&busy, "request", VerdictKind::NoRetention).is_none());
        // One late cycle held up twice as long: not every later one.
        let busy = cycles(&[0.001, 0.0012, 0.0021, 0.0011]);
        assert!(finding(&busy, "request", VerdictKind::NoRetention).is_none());
        // Rising every step, but by 40 % in all: not twice.
        let creeping = cycles(&[0.001, 0.001, 0.0011, 0.0012, 0.0014]);
        assert!(finding(&creeping, "request", VerdictKind::NoRetention).is_none());
        // A slow first cycle (JIT warm-up) is the opposite direction.
        let warming = cycles(&[0.005, 0.001, 0.0011, 0.0012]);
        assert!(finding(&warming, "request", VerdictKind::NoRetention).is_none());
        // Too few cycles to tell.
        assert!(finding(&cycles(&[0.001, 0.004]), "call", VerdictKind::Retention).is_none());
    }
}
