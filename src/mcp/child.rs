//! One tool call = one leakcheck child process running the CLI command the
//! tool wraps. The child keeps every behaviour of the command (its checks,
//! its clear errors, the target stopped by PID, the loopback rule) and
//! keeps a crash or a gigabyte snapshot out of the server's own process.
//!
//! Its stderr lines (the progress lines a run prints when stderr is not a
//! terminal) become MCP progress notifications. A cancelled call sends the
//! child SIGINT, exactly what Ctrl-C sends: it stops the target and still
//! writes what was measured.

use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_util::sync::CancellationToken;

/// How long a child has after SIGINT to stop its target and write its
/// result before it is killed (its own grace for the target is 5 s).
const STOP_GRACE: Duration = Duration::from_secs(30);
/// Lines of stderr kept for the error a failed call returns.
const TAIL_LINES: usize = 12;

/// Where progress goes: the client's token for this call.
pub struct ProgressTo {
    pub peer: Peer<RoleServer>,
    pub token: ProgressToken,
}

/// How the child ended.
pub struct Ended {
    /// 0 clean, 1 leak (or regression), 2 error; `None` when killed.
    pub code: Option<i32>,
    pub cancelled: bool,
    /// Its last stderr lines, for an error's message.
    pub tail: Vec<String>,
}

impl Ended {
    /// The CLI's own error message (`error: …`), or the last lines.
    pub fn error_text(&self) -> String {
        let errors: Vec<&str> = self
            .tail
            .iter()
            .filter_map(|l| l.strip_prefix("error: "))
            .collect();
        if errors.is_empty() {
            self.tail.join("\n")
        } else {
            errors.join("\n")
        }
    }
}

/// Runs `leakcheck ARGS…` to its end, a cancellation, or `ct`.
pub async fn run(
    args: &[String],
    progress: Option<ProgressTo>,
    ct: &CancellationToken,
) -> anyhow::Result<Ended> {
    let exe = std::env::current_exe()?;
    let mut child = tokio::process::Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = child.id();
    // A call dropped before its child ended (the client went away and the
    // server is closing) stops the child as Ctrl-C would, never with
    // SIGKILL: the child still stops its target and writes its readings.
    let mut interrupt = InterruptOnDrop { pid, sent: false };
    let mut lines = BufReader::new(child.stderr.take().expect("stderr piped")).lines();
    let mut tail = Vec::new();
    let mut step = 0.0;
    // Set when the call is cancelled: the child's time to stop.
    let mut deadline: Option<tokio::time::Instant> = None;
    let far = tokio::time::Instant::now() + Duration::from_secs(365 * 24 * 3600);
    loop {
        tokio::select! {
            line = lines.next_line() => match line? {
                Some(line) => {
                    step += 1.0;
                    if let Some(to) = &progress {
                        let note = ProgressNotificationParam::new(to.token.clone(), step)
                            .with_message(line.clone());
                        let _ = to.peer.notify_progress(note).await;
                    }
                    if tail.len() == TAIL_LINES {
                        tail.remove(0);
                    }
                    tail.push(line);
                }
                None => break,
            },
            () = ct.cancelled(), if deadline.is_none() => {
                deadline = Some(tokio::time::Instant::now() + STOP_GRACE);
                interrupt.send();
            }
            () = tokio::time::sleep_until(deadline.unwrap_or(far)), if deadline.is_some() => {
                child.start_kill()?;
                break;
            }
        }
    }
    let status = child.wait().await?;
    interrupt.sent = true;
    Ok(Ended {
        code: status.code(),
        cancelled: deadline.is_some(),
        tail,
    })
}

/// Sends SIGINT to a child still running when its call is dropped, once:
/// a second one (the call cancelled, then dropped as the client goes)
/// would make the child exit at once, as a second Ctrl-C does, without
/// writing what it measured.
struct InterruptOnDrop {
    pid: Option<u32>,
    sent: bool,
}

impl InterruptOnDrop {
    fn send(&mut self) {
        if self.sent {
            return;
        }
        self.sent = true;
        if let Some(pid) = self.pid {
            // SAFETY: a plain signal to a child of this process; if it has
            // exited and not been reaped, the signal is ignored.
            unsafe { libc::kill(pid as i32, libc::SIGINT) };
        }
    }
}

impl Drop for InterruptOnDrop {
    fn drop(&mut self) {
        self.send();
    }
}
