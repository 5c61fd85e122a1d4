//! A watchdog for the target's process group, so that nothing leakcheck
//! launched outlives it, even when leakcheck is killed with SIGKILL.
//!
//! The target runs in its own process group and gets a parent-death signal,
//! but that signal reaches only the direct child: `-- sh -c "node server.mjs;
//! …"` left `node` listening after leakcheck was killed. So the child,
//! between fork and exec, forks once more: that grandchild is the watchdog.
//! It moves to a process group of its own, closes every descriptor but the
//! read end of a pipe whose write end only leakcheck holds, and blocks on
//! it. The kernel closes that write end when leakcheck exits, however it
//! exits; the read then returns and the watchdog sends SIGTERM to the
//! target's group, waits `WATCHDOG_GRACE`, sends SIGKILL, and exits.
//!
//! Everything the watchdog does between fork and its exit is a raw system
//! call (read, close, kill, setpgid, nanosleep, _exit): async-signal-safe,
//! as code after fork in a multi-threaded process must be. No allocation,
//! no lock.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// How long the target's group has between SIGTERM and SIGKILL once
/// leakcheck is gone: a Node server closes its listener in milliseconds.
const WATCHDOG_GRACE_MS: i64 = 500;
/// Where the kernel has no `close_range` (before Linux 5.9), the watchdog
/// closes descriptors one by one up to this: the target's pipes, the
/// exec-error pipe and the runtime's descriptors sit far below it.
const CLOSE_SCAN: RawFd = 4096;

/// The pipe that ties the watchdog's life to leakcheck's (or to the
/// target's `stop`, which lets go of it once the group is gone).
pub struct Lifeline {
    /// Held by leakcheck for the target's life; dropping it (or exiting)
    /// tells the watchdog to clean up.
    write: OwnedFd,
    read: RawFd,
}

impl Lifeline {
    pub fn new() -> io::Result<Lifeline> {
        // Close-on-exec keeps both ends out of every program leakcheck
        // executes.
        let fds = crate::platform::pipe_cloexec()?;
        // SAFETY: the descriptors were just created and are owned here.
        let write = unsafe { OwnedFd::from_raw_fd(fds[1]) };
        Ok(Lifeline {
            write,
            read: fds[0],
        })
    }

    /// The descriptors the pre-exec hook needs, as plain numbers.
    pub fn fds(&self) -> (RawFd, RawFd) {
        (self.read, self.write.as_raw_fd())
    }
}

impl Drop for Lifeline {
    fn drop(&mut self) {
        // SAFETY: the read end is ours and closed once; the write end is an
        // OwnedFd and closes itself.
        unsafe {
            libc::close(self.read);
        }
    }
}

/// Runs in the target's child between fork and exec, after it has become
/// the leader of its own process group. Forks the watchdog; the child
/// itself returns and goes on to exec the target.
///
/// # Safety
/// Must only be called from a `pre_exec` hook: it forks.
pub unsafe fn fork_watchdog(read: RawFd, write: RawFd) -> io::Result<()> {
    // SAFETY: see the module header; every call below is async-signal-safe.
    unsafe {
        let group = libc::getpgrp();
        match libc::fork() {
            -1 => Err(io::Error::last_os_error()),
            0 => watch(read, write, group),
            _ => Ok(()),
        }
    }
}

/// The watchdog's whole life. Never returns.
unsafe fn watch(read: RawFd, write: RawFd, group: libc::pid_t) -> ! {
    // SAFETY: raw system calls on this process's own descriptors and on the
    // process group leakcheck created for the target.
    unsafe {
        // Out of the target's group, so the group's signals spare it and
        // `kill(-group)` below does not end it before its SIGKILL.
        libc::setpgid(0, 0);
        // `ps` then tells it from leakcheck, whose memory image it shares.
        crate::platform::name_this_process(c"lc-watchdog");
        libc::close(write);
        // Holding the target's stdout/stderr pipes open would keep
        // leakcheck's readers waiting after the target exits; holding the
        // exec-error pipe would stall the spawn. close_range takes them all
        // (Linux 5.9+); older kernels and other platforms get the scan.
        if !crate::platform::close_descriptors_except(read) {
            for fd in 0..CLOSE_SCAN {
                if fd != read {
                    libc::close(fd);
                }
            }
        }
        let mut byte = 0u8;
        loop {
            let n = libc::read(read, (&raw mut byte).cast(), 1);
            if n == 0 || (n < 0 && crate::platform::errno() != libc::EINTR) {
                break;
            }
        }
        // leakcheck stopped the group itself and let go: nothing to do.
        if libc::kill(-group, 0) != 0 {
            libc::_exit(0);
        }
        libc::kill(-group, libc::SIGTERM);
        let pause = libc::timespec {
            tv_sec: 0,
            tv_nsec: WATCHDOG_GRACE_MS * 1_000_000,
        };
        libc::nanosleep(&pause, std::ptr::null_mut());
        libc::kill(-group, libc::SIGKILL);
        libc::_exit(0)
    }
}
