//! Runs a `LoadPlan`: one thread with a single-threaded tokio runtime drives
//! every connection, like `wrk -t1`. One thread is the right size here: the
//! generator shares a small machine with the server it measures, and a
//! second generator thread takes a core from the target.

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::plan::{LoadPlan, PreparedRequest, Stop};
use super::stats::{ErrorKind, LoadStats};
use crate::model::LoadReport;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("nothing accepts connections on {0}: start the server first, or check the URL's port")]
    Refused(SocketAddr),
    #[error("cannot connect to {addr}")]
    Connect {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("the load generator thread failed")]
    Thread(#[source] std::io::Error),
    #[error("the load generator stopped unexpectedly")]
    Stopped(#[from] tokio::task::JoinError),
    #[error("the load generator thread panicked")]
    Panicked,
    #[error("a request cannot be prepared: {0}")]
    Request(#[from] super::plan::PrepareError),
}

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

/// A run in progress on its own thread. Dropping it (its owner
/// interrupted, a diagnosis cut short) stops the sending: no request starts
/// after the drop, those in flight finish.
pub struct LoadRun {
    pub progress: Arc<LoadProgress>,
    done: oneshot::Receiver<Result<LoadReport, LoadError>>,
}

impl LoadRun {
    pub fn start(plan: LoadPlan) -> LoadRun {
        let progress = Arc::new(LoadProgress::default());
        let (send, done) = oneshot::channel();
        let shared_progress = progress.clone();
        let spawned = std::thread::Builder::new()
            .name("leakcheck-load".into())
            .spawn(move || {
                let _ = send.send(run_on_this_thread(plan, shared_progress));
            });
        if let Err(e) = spawned {
            let (send, failed) = oneshot::channel();
            let _ = send.send(Err(LoadError::Thread(e)));
            return LoadRun {
                progress,
                done: failed,
            };
        }
        LoadRun { progress, done }
    }

    pub async fn finish(mut self) -> Result<LoadReport, LoadError> {
        (&mut self.done).await.unwrap_or(Err(LoadError::Panicked))
    }
}

impl Drop for LoadRun {
    fn drop(&mut self) {
        // After `finish` nothing runs any more and this changes nothing.
        self.progress.stop();
    }
}

fn run_on_this_thread(
    plan: LoadPlan,
    progress: Arc<LoadProgress>,
) -> Result<LoadReport, LoadError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(LoadError::Thread)?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        preflight(plan.addr).await?;
        let shared = Rc::new(Shared::new(plan, progress)?);
        let scenario = shared.plan.scenario.clone();
        let workers: Vec<_> = (0..shared.plan.connections.max(1))
            .map(|index| match &scenario {
                Some(scenario) => tokio::task::spawn_local(super::vu::run_virtual_user(
                    shared.clone(),
                    scenario.clone(),
                    index,
                )),
                None => {
                    tokio::task::spawn_local(super::worker::drive_connection(shared.clone(), index))
                }
            })
            .collect();
        for worker in workers {
            worker.await?;
        }
        let stalled = shared.stalled.get();
        let interrupted = shared.progress.stopped() && !stalled;
        let elapsed = shared.started.elapsed();
        let mut report = shared
            .stats
            .borrow()
            .summarise(elapsed, interrupted, scenario.is_some());
        report.stalled = stalled;
        Ok(report)
    })
}

/// One connection before the run, so that a wrong port is one clear error
/// instead of thousands of counted refusals.
async fn preflight(addr: SocketAddr) -> Result<(), LoadError> {
    match tokio::net::TcpStream::connect(addr).await {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            Err(LoadError::Refused(addr))
        }
        Err(source) => Err(LoadError::Connect { addr, source }),
    }
}

/// State every connection of the run shares. Single-threaded, so plain
/// `Cell`/`RefCell`: no atomics or locks on the hot path except the
/// progress counter other threads read.
pub(super) struct Shared {
    pub(super) plan: LoadPlan,
    schedule: Vec<PreparedRequest>,
    next_slot: Cell<u64>,
    started: Instant,
    pub(super) stats: RefCell<LoadStats>,
    pub(super) progress: Arc<LoadProgress>,
    /// When the last response (of any status) arrived.
    last_answer: Cell<Option<Instant>>,
    /// Set when a whole `--timeout` window passed with nothing but timeouts.
    stalled: Cell<bool>,
}

impl Shared {
    fn new(plan: LoadPlan, progress: Arc<LoadProgress>) -> Result<Shared, LoadError> {
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
