//! Finding and stopping what a `--load-cmd` driver left running.
//!
//! The driver runs in a process group of its own, and stopping the group
//! ends everything in it. A descendant that called `setsid` (a daemonised
//! helper, `setsid k6 … &`, a double fork) has left that group and would
//! keep sending traffic into the next cycle's readings, and outlive the run.
//! Nothing in the process tree ties it back to the driver once its parent
//! has exited (it is re-parented to init), so the driver is marked the way
//! Jenkins' ProcessTreeKiller marks a build: a variable with a value unique
//! to this driver in its environment. Every descendant inherits it, and
//! `/proc/PID/environ` still shows it after `setsid`; a process that
//! replaced its whole environment escapes, which the book says (docs/src/attaching.md).
//!
//! Only processes of leakcheck's own user can be read, which is also all
//! that it could signal.

use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that marks a driver's processes.
pub const MARK_VARIABLE: &str = "LEAKCHECK_DRIVER_MARK";

/// The value that marks one driver's processes: this leakcheck's PID, a
/// counter and the clock, so neither two cycles nor two leakchecks share
/// one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark(String);

impl Mark {
    pub fn new() -> Mark {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Mark(format!(
            "{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ))
    }

    pub fn value(&self) -> &str {
        &self.0
    }

    /// The live processes carrying this mark, leakcheck itself excluded
    /// (it never carries one; the check keeps a mistake from killing it).
    pub fn holders(&self) -> Vec<u32> {
        let needle = format!("{MARK_VARIABLE}={}", self.0).into_bytes();
        let me = std::process::id();
        crate::platform::procfs::all_pids()
            .into_iter()
            .filter(|&pid| pid != me)
            .filter(|&pid| {
                crate::platform::procfs::environ_of(pid)
                    .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == needle))
            })
            .collect()
    }

    /// Stops (SIGKILL) every live process carrying this mark; returns how
    /// many there were. A process in the middle of an `exec` reads no
    /// environment for a moment, so the scan is repeated until one finds
    /// nothing (at most `SWEEP_PASSES`). A zombie reads an empty
    /// environment, so it is not counted again.
    pub fn stop_holders(&self) -> usize {
        let mut stopped = std::collections::BTreeSet::new();
        for pass in 0..SWEEP_PASSES {
            let pids = self.holders();
            if pids.is_empty() && pass > 0 {
                break;
            }
            for &pid in &pids {
                // SAFETY: kill(2) on a process found carrying this driver's mark.
                unsafe {
                    libc::kill(pid as libc::pid_t, libc::SIGKILL);
                }
                stopped.insert(pid);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        stopped.len()
    }
}

/// Scans of /proc a sweep makes at most: one, and again while the last
/// found something (or might have missed a process mid-`exec`).
const SWEEP_PASSES: usize = 3;

impl Default for Mark {
    fn default() -> Mark {
        Mark::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_carrying_the_mark_is_found_and_stopped() {
        use std::os::unix::process::ExitStatusExt;
        let mark = Mark::new();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env(MARK_VARIABLE, mark.value())
            .spawn()
            .expect("sleep");
        let pid = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while mark.holders() != vec![pid] && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let stopped = mark.stop_holders();
        let _ = child.kill();
        let status = child.wait().expect("reaped");
        assert_eq!(stopped, 1);
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
        assert!(
            mark.holders().is_empty(),
            "a reaped process carries nothing"
        );
        assert!(
            Mark::new().holders().is_empty(),
            "a fresh mark is on nothing"
        );
    }
}
