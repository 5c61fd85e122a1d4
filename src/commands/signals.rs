//! Stopping on a signal: Ctrl-C (SIGINT) and SIGTERM both mean "stop the
//! target, keep what was measured, write the reports".
//!
//! One stop often arrives as two signals: `timeout 3 leakcheck …` sends
//! SIGTERM to leakcheck and then to its whole process group, and a
//! terminal's Ctrl-C reaches every process of the foreground group. A
//! second signal therefore cuts the shutdown short only once the shutdown
//! has lasted `SECOND_SIGNAL_AFTER`: the user who presses Ctrl-C again
//! because cleaning up takes too long.

use std::time::{Duration, Instant};

use tokio::signal::unix::{SignalKind, signal};

/// How long a shutdown runs before another signal ends it at once. Far
/// above the microseconds between a group-wide signal's deliveries, far
/// below the grace a slow target may take to stop.
pub const SECOND_SIGNAL_AFTER: Duration = Duration::from_millis(500);

/// The signal that stopped a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    Interrupt,
    Terminate,
}

impl std::fmt::Display for StopSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StopSignal::Interrupt => "Ctrl-C (SIGINT)",
            StopSignal::Terminate => "SIGTERM",
        })
    }
}

/// Resolves on the first SIGINT or SIGTERM.
pub async fn stop_signal() -> StopSignal {
    let mut term = signal(SignalKind::terminate()).ok();
    let mut int = signal(SignalKind::interrupt()).ok();
    async fn next(stream: &mut Option<tokio::signal::unix::Signal>) {
        match stream.as_mut() {
            Some(stream) => {
                stream.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    }
    tokio::select! {
        _ = next(&mut int) => StopSignal::Interrupt,
        _ = next(&mut term) => StopSignal::Terminate,
    }
}

/// After a first signal leakcheck cleans up; a signal that comes once the
/// cleanup has run `SECOND_SIGNAL_AFTER` exits at once (the target still
/// dies: it has a parent-death signal and a watchdog for its group).
pub fn exit_on_a_later_signal() {
    let since = Instant::now();
    tokio::spawn(async move {
        loop {
            let signal = stop_signal().await;
            if since.elapsed() >= SECOND_SIGNAL_AFTER {
                eprintln!("{signal} again: exiting now");
                std::process::exit(super::exit::EXIT_ERROR.into());
            }
        }
    });
}
