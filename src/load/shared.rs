//! What every connection of a run shares: the live view others read
//! (`LoadProgress`) and the run's own state (`Shared`), one per run thread.

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::error::LoadError;
use super::plan::{LoadPlan, Stop};
use super::request::PreparedRequest;
use super::stats::{ErrorKind, LoadStats};

/// Live view of a run, shared with whoever shows progress or handles Ctrl-C.
#[derive(Debug, Default)]
pub struct LoadProgress {
    completed: AtomicU64,
    errors: AtomicU64,
    stop: AtomicBool,
}

impl LoadProgress {
    /// Requests that ended so far (responses and errors).
    pub fn completed(&self) -> u64 {
        self.completed.load(Ordering::Relaxed)
    }
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
    /// Asks the run to start no more requests; those in flight finish.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// State every connection of the run shares. Single-threaded, so plain
/// `Cell`/`RefCell`: no atomics or locks on the hot path except the
/// progress counter other threads read.
pub(super) struct Shared {
    pub(super) plan: LoadPlan,
    schedule: Vec<PreparedRequest>,
    next_slot: Cell<u64>,
    pub(super) started: Instant,
    pub(super) stats: RefCell<LoadStats>,
    pub(super) progress: Arc<LoadProgress>,
    /// When the last response (of any status) arrived.
    last_answer: Cell<Option<Instant>>,
    /// Set when a whole `--timeout` window passed with nothing but timeouts.
    pub(super) stalled: Cell<bool>,
}

impl Shared {
    pub(super) fn new(plan: LoadPlan, progress: Arc<LoadProgress>) -> Result<Shared, LoadError> {
        // A scenario's requests are its steps; the plan's are not sent.
        let schedule = if plan.scenario.is_some() {
            Vec::new()
        } else {
            plan.prepare()?
        };
        Ok(Shared {
            schedule,
            plan,
            next_slot: Cell::new(0),
            started: Instant::now(),
            stats: RefCell::new(LoadStats::default()),
            progress,
            last_answer: Cell::new(None),
            stalled: Cell::new(false),
        })
    }

    /// A request that began at `began` timed out. If no response arrived
    /// since it began, every request of the last `--timeout` window timed
    /// out: the server has stopped answering, and waiting out the rest of
    /// the run (`-a / -c × --timeout`, hours with the defaults) tells
    /// nothing more. The run stops; requests in flight end within one more
    /// timeout.
    pub(super) fn note_timeout(&self, began: Instant) {
        let answered_since = self.last_answer.get().is_some_and(|t| t >= began);
        if !answered_since && !self.stalled.get() {
            self.stalled.set(true);
            self.progress.stop();
        }
    }

    /// Takes the next slot (a request, or a scenario iteration), or `None`
    /// when the run is over.
    pub(super) fn claim(&self) -> Option<u64> {
        if self.progress.stopped() {
            return None;
        }
        let slot = self.next_slot.get();
        let open = match self.plan.stop {
            Stop::Requests(n) => slot < n,
            Stop::Duration(d) => {
                let at = self.intended_start(slot).unwrap_or_else(Instant::now);
                at < self.started + d
            }
        };
        if open {
            self.next_slot.set(slot + 1);
        }
        open.then_some(slot)
    }

    /// With a rate, when slot `n` is due: latency is measured from this
    /// instant, so a server that stalls is charged for the requests it kept
    /// waiting (no coordinated omission).
    pub(super) fn intended_start(&self, slot: u64) -> Option<Instant> {
        let rate = self.plan.rate.filter(|r| *r > 0.0)?;
        Some(self.started + Duration::from_secs_f64(slot as f64 / rate))
    }

    pub(super) fn request(&self, slot: u64) -> &PreparedRequest {
        &self.schedule[(slot % self.schedule.len() as u64) as usize]
    }

    /// A response arrived: the server is answering.
    pub(super) fn note_answer(&self) {
        self.last_answer.set(Some(Instant::now()));
    }

    /// When slot `slot` starts and by when its request must be answered.
    pub(super) async fn wait_for_slot(&self, slot: u64) -> (Instant, tokio::time::Instant) {
        let intended = self.intended_start(slot);
        if let Some(at) = intended {
            tokio::time::sleep_until(at.into()).await;
        }
        let began = intended.unwrap_or_else(Instant::now);
        (began, tokio::time::Instant::from(began + self.plan.timeout))
    }

    /// A slot is over, whatever its outcome.
    pub(super) fn slot_done(&self) {
        self.progress.completed.fetch_add(1, Ordering::Relaxed);
    }

    /// An exchange failed with `kind`.
    pub(super) fn note_error(&self, kind: ErrorKind, began: Instant) {
        if kind == ErrorKind::Timeout {
            self.note_timeout(began);
        }
        self.stats.borrow_mut().record_error(kind);
        self.progress.errors.fetch_add(1, Ordering::Relaxed);
    }
}
