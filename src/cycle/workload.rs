//! The seam between the method's loop and what a cycle's work is.
//!
//! A cycle is "drive a known amount of work, then read". What the work is
//! differs: the built-in generator's requests (fixed, templated, aborting,
//! or a scenario's iterations; `generator.rs`), the team's own load tool
//! (`--load-cmd`, `external.rs`), a soak's interval of a constant load
//! (`soak.rs`) or a browser page's action list (`crate::page`). Each is a
//! `Workload`; the loop in `mod.rs` drives any of them, builds every
//! `CycleResult`, and the diagnosis' extra cycle asks the same workload for
//! one more cycle, so the holder is found under the traffic that showed
//! the leak.
//!
//! Dropping a workload's future (Ctrl-C, a target that died, a deadline)
//! stops its work: the generator thread stops sending, the driver's
//! process group is killed, a page stops between actions.

use async_trait::async_trait;

use super::CycleObserver;
use crate::model::{DriverRun, LoadReport};

/// Which cycle to drive.
#[derive(Debug, Clone, Default)]
pub struct CycleSpec {
    /// 1-based; the diagnosis' extra cycle is numbered after the last.
    pub number: u32,
    /// How many planned cycles' worth of work: 1 for a measured cycle; the
    /// diagnosis of a `--cycles auto` route asks for the group of small
    /// cycles that decided it (a small leak was seen only over several).
    pub scale: u64,
    /// At most this many units, whatever the plan and the scale: the loop
    /// shrinks the cycles of a target that is running out of headroom, and
    /// the diagnosis sizes its cycle to the leak already measured. Work
    /// measured in time (a soak's interval, a page) may ignore it.
    pub most_units: Option<u64>,
    /// Pulled (by the peak sampler) to end the work early: no unit starts
    /// after it, those in flight finish and are counted.
    pub brake: Option<Brake>,
    /// The cycle's time target: no unit starts after it, those in flight
    /// finish and are counted (`LoadReport::time_bound`), so a cycle of
    /// slow work ends in time and the fit divides by what it completed.
    /// Work measured in time already (a soak's interval) ignores it, and
    /// so does `--load-cmd`, whose command decides its own end.
    pub time: Option<std::time::Duration>,
}

impl CycleSpec {
    pub fn measured(number: u32) -> CycleSpec {
        CycleSpec {
            number,
            scale: 1,
            ..CycleSpec::default()
        }
    }

    /// The units this cycle sends, given the plan's units per cycle.
    pub fn units_of(&self, planned: u64) -> u64 {
        let scaled = planned.saturating_mul(self.scale.max(1));
        self.most_units
            .map_or(scaled, |most| scaled.min(most.max(1)))
    }

    pub fn braked(&self) -> bool {
        self.brake.as_ref().is_some_and(Brake::pulled)
    }
}

/// A flag shared between the one who ends a cycle early and the work.
#[derive(Debug, Clone, Default)]
pub struct Brake(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Brake {
    pub fn pull(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn pulled(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// What the fit divides by, as the workload knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Units {
    /// Counted by the workload itself: responses, or iterations that ran
    /// every step.
    Counted(u64),
    /// Sent by something leakcheck does not count (`--load-cmd`): the
    /// target's own count of requests served decides, else what the driver
    /// was asked to send.
    Served { asked: u64 },
    /// Counted while the work goes on past the reading (a soak): the
    /// target's count is taken at another moment and cannot be compared.
    Running(u64),
}

impl Units {
    /// What the fit divides by, and the target's own count as the cycle
    /// records it, given what the target counted between the readings.
    pub fn resolve(self, served: Option<u64>) -> (u64, Option<u64>) {
        match self {
            Units::Counted(n) => (n, served),
            // The target's own count; without one (not Node), the count
            // the driver was asked for.
            Units::Served { asked } => (served.unwrap_or(asked), served),
            Units::Running(n) => (n, None),
        }
    }
}

/// One cycle's work, done.
#[derive(Debug, Clone)]
pub struct Work {
    pub report: LoadReport,
    pub driver: Option<DriverRun>,
    pub units: Units,
}

/// Why a workload could not do its cycle (not: its requests failed, which
/// the report counts).
#[derive(Debug, thiserror::Error)]
pub enum WorkError {
    #[error("the load could not run")]
    Load(#[from] crate::load::LoadError),
    #[error("--load-cmd could not run")]
    Driver(#[from] DriverError),
    #[error("the page stopped answering")]
    Page(#[from] crate::probe::ProbeError),
    #[error(
        "`{action}` did not return within {} s (--timeout), and the page answers nothing: its \
         main thread is blocked (a script that never returns), so nothing more can be read; \
         the readings so far are kept",
        limit.as_secs_f64()
    )]
    Blocked {
        action: String,
        limit: std::time::Duration,
    },
    #[error("the function harness could not run the calls: {0}")]
    Harness(String),
}

/// Why `--load-cmd` could not be run for a cycle (not: it exited non-zero,
/// which fails the cycle with its output).
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error("cannot write the --load-cmd log {}", path.display())]
    Log {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start --load-cmd through sh")]
    Spawn(#[source] std::io::Error),
}

#[async_trait]
pub trait Workload: Send {
    /// Units of work a measured cycle plans (for progress); `None` when a
    /// cycle is measured in time.
    fn planned_units(&self) -> Option<u64>;

    /// Whether every unit sends the same bytes (no template, scenario or
    /// external driver): a route that keeps memory for identical work is
    /// a plain leak, not a cache filling with distinct keys.
    fn fixed_work(&self) -> bool {
        false
    }

    /// Drives one cycle's work and reports what was done. Progress goes to
    /// `observer.load_progress`.
    async fn drive(
        &mut self,
        cycle: CycleSpec,
        observer: &dyn CycleObserver,
    ) -> Result<Work, WorkError>;

    /// Whether another measured cycle can follow (a soak's load ends with
    /// its duration).
    fn more(&self) -> bool {
        true
    }

    /// Hears every cycle recorded into the route, to keep what only this
    /// kind of work reports (a soak's projection) current.
    fn recorded(&mut self, _route: &mut crate::model::RouteResult, _observer: &dyn CycleObserver) {}

    /// Ends what the work keeps running past the last measured cycle's
    /// reading (a soak's load goes on through its last reading, so every
    /// reading is taken under the same load), and completes the route with
    /// what only the end reports.
    async fn wind_down(&mut self, _route: &mut crate::model::RouteResult) -> Result<(), WorkError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Units;

    #[test]
    fn the_fit_divides_by_the_workloads_count_or_the_targets() {
        assert_eq!(Units::Counted(10).resolve(Some(12)), (10, Some(12)));
        assert_eq!(Units::Served { asked: 300 }.resolve(Some(1)), (1, Some(1)));
        assert_eq!(Units::Served { asked: 300 }.resolve(None), (300, None));
        // A soak's reading: the target's count is from another moment.
        assert_eq!(Units::Running(40).resolve(Some(55)), (40, None));
    }
}
