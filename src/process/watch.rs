//! Watching a launched target: the last lines it printed (to explain a
//! failure), the inspector URLs it announces, and the moment it exits or
//! starts exiting, reported once to the run so it stops waiting on a
//! process that will not answer again.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::watch;

/// Lines of the target's output kept to explain a failure.
pub(super) const TAIL_LINES: usize = 40;
/// What Node prints when it would exit but an inspector client is still
/// attached: it then waits, alive but serving nothing, until we disconnect.
const NODE_WAITING_FOR_DEBUGGER: &str = "Waiting for the debugger to disconnect...";
/// How often the exit watcher looks at the target's state.
const EXIT_WATCH: Duration = Duration::from_millis(50);

/// Tells the run that the target is going away.
#[derive(Clone)]
pub(super) struct FaultReporter {
    pub(super) exiting: Arc<AtomicBool>,
    /// Set by `stop`: an exit leakcheck asked for is no fault.
    pub(super) muted: Arc<AtomicBool>,
    pub(super) faults: Option<watch::Sender<Option<String>>>,
}

impl FaultReporter {
    fn report(&self, message: &str) {
        self.exiting.store(true, Ordering::Relaxed);
        if self.muted.load(Ordering::Relaxed) {
            return;
        }
        if let Some(faults) = &self.faults {
            faults.send_if_modified(|fault| {
                let first = fault.is_none();
                if first {
                    *fault = Some(message.to_string());
                }
                first
            });
        }
    }
}

/// Watches /proc for the target turning into a zombie (exited, not yet
/// reaped) or disappearing, without needing the `Child` handle.
pub(super) async fn watch_exit(pid: u32, reporter: FaultReporter) {
    loop {
        tokio::time::sleep(EXIT_WATCH).await;
        if exited(pid) {
            reporter.report("the target exited");
            return;
        }
    }
}

/// Whether process `pid` has exited (gone, or a zombie not yet reaped),
/// by its /proc entry: a launched target's, or an attached one's.
pub fn exited(pid: u32) -> bool {
    has_exited(crate::platform::procfs::stat_text(pid))
}

/// Whether a read of /proc/PID/stat confirms an exit: a zombie, or an
/// entry that is gone. Any other failure (EMFILE when leakcheck runs out of
/// descriptors, EACCES) says nothing about the target, which is then taken
/// as alive: killing a healthy target on a guess would lose the run.
fn has_exited(stat: std::io::Result<String>) -> bool {
    match stat {
        // The state letter follows the parenthesised command name.
        Ok(text) => text
            .rsplit(") ")
            .next()
            .is_none_or(|rest| rest.starts_with('Z')),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH),
    }
}

/// Keeps the last lines of one output stream and spots inspector announcements.
pub(super) async fn collect_output<R: AsyncRead + Unpin>(
    stream: R,
    tail: Arc<Mutex<VecDeque<String>>>,
    urls: Option<watch::Sender<Vec<String>>>,
    reporter: Option<FaultReporter>,
) {
    let mut lines = BufReader::new(stream).lines();
    // Bun prints its banner, then "Listening:", then the URL on a line of
    // its own.
    let mut bun_listening = false;
    while let Ok(Some(line)) = lines.next_line().await {
        let after_bun_banner = std::mem::replace(&mut bun_listening, line.trim() == "Listening:");
        if after_bun_banner && line.trim().starts_with("ws://") {
            if let Some(sink) = &urls {
                sink.send_modify(|all| all.push(line.trim().to_string()));
            }
            continue;
        }
        if line.trim() == NODE_WAITING_FOR_DEBUGGER {
            if let Some(reporter) = &reporter {
                reporter.report("the target is exiting");
            }
            continue;
        }
        // Node says "Debugger listening on ws://…", Chromium "DevTools
        // listening on ws://…" (`leakcheck page`).
        let announced = line
            .strip_prefix("Debugger listening on ")
            .or_else(|| line.strip_prefix("DevTools listening on "));
        if let Some(url) = announced {
            if let Some(sink) = &urls {
                sink.send_modify(|all| all.push(url.trim().to_string()));
            }
            continue;
        }
        if line.starts_with("For help, see: https://nodejs.org") || line == "Debugger attached." {
            continue;
        }
        let mut tail = tail.lock().expect("tail lock");
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_confirmed_exit_is_an_exit() {
        let stat = |state: &str| Ok(format!("42 (node server) {state} 1 42 42 0"));
        assert!(!has_exited(stat("S")));
        assert!(has_exited(stat("Z")));
        let gone = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert!(has_exited(Err(gone)));
        // Out of file descriptors: the target may be perfectly healthy.
        assert!(!has_exited(Err(std::io::Error::from_raw_os_error(
            libc::EMFILE
        ))));
        assert!(!has_exited(Err(std::io::Error::from_raw_os_error(
            libc::EACCES
        ))));
    }
}
