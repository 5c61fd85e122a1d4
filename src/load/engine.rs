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

use super::connection::{Connection, ExchangeError};
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

/// A run in progress on its own thread.
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

    pub async fn finish(self) -> Result<LoadReport, LoadError> {
        self.done.await.unwrap_or(Err(LoadError::Panicked))
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
        let shared = Rc::new(Shared::new(plan, progress));
        let workers: Vec<_> = (0..shared.plan.connections.max(1))
            .map(|_| tokio::task::spawn_local(drive_connection(shared.clone())))
            .collect();
        for worker in workers {
            worker.await?;
        }
        let stalled = shared.stalled.get();
        let interrupted = shared.progress.stopped() && !stalled;
        let elapsed = shared.started.elapsed();
        let mut report = shared.stats.borrow().summarise(elapsed, interrupted);
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
struct Shared {
    plan: LoadPlan,
    schedule: Vec<PreparedRequest>,
    next_slot: Cell<u64>,
    started: Instant,
    stats: RefCell<LoadStats>,
    progress: Arc<LoadProgress>,
    /// When the last response (of any status) arrived.
    last_answer: Cell<Option<Instant>>,
    /// Set when a whole `--timeout` window passed with nothing but timeouts.
    stalled: Cell<bool>,
}

impl Shared {
    fn new(plan: LoadPlan, progress: Arc<LoadProgress>) -> Shared {
        Shared {
            schedule: plan.prepare(),
            plan,
            next_slot: Cell::new(0),
            started: Instant::now(),
            stats: RefCell::new(LoadStats::default()),
            progress,
            last_answer: Cell::new(None),
            stalled: Cell::new(false),
        }
    }

    /// A request that began at `began` timed out. If no response arrived
    /// since it began, every request of the last `--timeout` window timed
    /// out: the server has stopped answering, and waiting out the rest of
    /// the run (`-a / -c × --timeout`, hours with the defaults) tells
    /// nothing more. The run stops; requests in flight end within one more
    /// timeout.
    fn note_timeout(&self, began: Instant) {
        let answered_since = self.last_answer.get().is_some_and(|t| t >= began);
        if !answered_since && !self.stalled.get() {
            self.stalled.set(true);
            self.progress.stop();
        }
    }

    /// Takes the next request slot, or `None` when the run is over.
    fn claim(&self) -> Option<u64> {
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
    fn intended_start(&self, slot: u64) -> Option<Instant> {
        let rate = self.plan.rate.filter(|r| *r > 0.0)?;
        Some(self.started + Duration::from_secs_f64(slot as f64 / rate))
    }

    fn request(&self, slot: u64) -> &PreparedRequest {
        &self.schedule[(slot % self.schedule.len() as u64) as usize]
    }
}

async fn drive_connection(shared: Rc<Shared>) {
    let mut connection: Option<Connection> = None;
    let mut opened_before = false;
    while let Some(slot) = shared.claim() {
        let intended = shared.intended_start(slot);
        if let Some(at) = intended {
            tokio::time::sleep_until(at.into()).await;
        }
        let began = intended.unwrap_or_else(Instant::now);
        let deadline = tokio::time::Instant::from(began + shared.plan.timeout);
        let request = shared.request(slot);
        let outcome = tokio::time::timeout_at(
            deadline,
            send_with_retry(&shared, &mut connection, &mut opened_before, request),
        )
        .await
        .unwrap_or(Err(ErrorKind::Timeout));
        let mut stats = shared.stats.borrow_mut();
        match outcome {
            Ok(status) => {
                shared.last_answer.set(Some(Instant::now()));
                stats.record_response(status, began.elapsed());
            }
            Err(kind) => {
                if kind == ErrorKind::Timeout {
                    shared.note_timeout(began);
                }
                connection = None;
                stats.record_error(kind);
                shared.progress.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        if let Some(c) = connection.as_mut() {
            stats.bytes_read += std::mem::take(&mut c.bytes_read);
            stats.bytes_written += std::mem::take(&mut c.bytes_written);
        }
        shared.progress.completed.fetch_add(1, Ordering::Relaxed);
    }
}

/// Sends one request, opening a connection when needed. A kept-alive
/// connection the server closed while idle gets one retry on a new
/// connection, since the server never saw the request.
async fn send_with_retry(
    shared: &Shared,
    connection: &mut Option<Connection>,
    opened_before: &mut bool,
    request: &PreparedRequest,
) -> Result<u16, ErrorKind> {
    for attempt in 0..2 {
        let reused = connection.is_some();
        if connection.is_none() {
            if *opened_before {
                shared.stats.borrow_mut().reconnects += 1;
            }
            *opened_before = true;
            *connection = Some(Connection::open(shared.plan.addr).await?);
        }
        let conn = connection.as_mut().expect("opened above");
        match conn.exchange(request).await {
            Ok(exchange) => {
                if exchange.close {
                    account_and_drop(shared, connection);
                }
                return Ok(exchange.status);
            }
            Err(ExchangeError::Stale) if reused && attempt == 0 => {
                account_and_drop(shared, connection);
            }
            Err(ExchangeError::Stale) => {
                account_and_drop(shared, connection);
                return Err(ErrorKind::Closed);
            }
            Err(ExchangeError::Failed(kind)) => {
                account_and_drop(shared, connection);
                return Err(kind);
            }
        }
    }
    Err(ErrorKind::Closed)
}

/// Moves a closing connection's byte counts into the totals before dropping it.
fn account_and_drop(shared: &Shared, connection: &mut Option<Connection>) {
    if let Some(c) = connection.take() {
        let mut stats = shared.stats.borrow_mut();
        stats.bytes_read += c.bytes_read;
        stats.bytes_written += c.bytes_written;
    }
}
