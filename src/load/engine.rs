//! Runs a `LoadPlan`: one thread with a single-threaded tokio runtime drives
//! every connection, like `wrk -t1`. One thread is the right size here: the
//! generator shares a small machine with the server it measures, and a
//! second generator thread takes a core from the target.

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use tokio::sync::oneshot;

use super::error::LoadError;
use super::plan::LoadPlan;
use super::shared::{LoadProgress, Shared};
use crate::model::LoadReport;

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
