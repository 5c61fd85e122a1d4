//! The platform seam: every part of leakcheck that reads or asks the
//! operating system something beyond POSIX goes through this module, and
//! its interface is what a platform must provide. Linux (x86_64 and arm64)
//! provides all of it (`linux.rs`). Any other Unix builds with the same
//! interface (`other.rs`): the calls that have a portable fallback use it,
//! and the readings Linux alone gives (`/proc`, cgroups, smaps) answer
//! "unavailable", which each caller already reports as a figure not read
//! (never as a zero). `cargo check --target aarch64-apple-darwin` keeps it
//! honest (docs/src/install.md, "Platforms").
//!
//! What each function reads, on Linux and on macOS (what a port would read):
//!
//! | here | Linux | macOS would read |
//! |---|---|---|
//! | [`procfs::holders_of`], [`procfs::listening_ports_of`] | `/proc/net/tcp{,6}` and `/proc/PID/fd` | `proc_pidinfo(PROC_PIDLISTFDS)` then `proc_pidfdinfo(PROC_PIDFDSOCKETINFO)` (libproc) |
//! | [`procfs::all_pids`], [`procfs::parent_of`], [`procfs::command_line`] | `/proc`, `/proc/PID/stat`, `/proc/PID/cmdline` | `proc_listallpids`, `proc_pidinfo(PROC_PIDTBSDINFO)` (`pbi_ppid`), `sysctl(KERN_PROCARGS2)` |
//! | [`procfs::memory_available`] | `/proc/meminfo` `MemAvailable` | `host_statistics64(HOST_VM_INFO64)`: free + inactive pages |
//! | rss and its parts (`probe::proc`, `probe::smaps`) | `/proc/PID/status`, `/proc/PID/smaps` | `proc_pidinfo(PROC_PIDTASKINFO)` (`pti_resident_size`); `mach_vm_region` walk for the split |
//! | the memory limit ([`cgroup`]) | cgroup v2 `memory.max`, `memory.events` | none (no cgroups): the machine's memory (`hw.memsize`) |
//! | a process's start time (`watch::checkpoint`) | `/proc/PID/stat` field 22 | `proc_pidinfo(PROC_PIDTBSDINFO)` (`pbi_start_tvsec`) |
//! | [`kill_with_parent`] | `prctl(PR_SET_PDEATHSIG)` | none: the watchdog's pipe alone (or a `kqueue` `EVFILT_PROC`/`NOTE_EXIT` on the parent) |
//! | [`name_this_process`] | `prctl(PR_SET_NAME)` | none for another process's view (`pthread_setname_np` names a thread only) |
//! | [`close_descriptors_except`] | `close_range(2)` (Linux 5.9+) | none: the caller's scan of descriptors |
//! | [`pipe_cloexec`] | `pipe2(O_CLOEXEC)` | `pipe` then `fcntl(FD_CLOEXEC)` |
//! | [`errno`] | `__errno_location` | `__error` |
//! | the native recorder (`diagnosis::native`) | heaptrack (`LD_PRELOAD`) | none here; Instruments' Allocations, or `MallocStackLogging` |
//!
//! Every read of /proc and /sys/fs/cgroup is a function of `procfs.rs` or
//! `cgroup.rs` here; the formats are parsed where they are used
//! (`probe/proc.rs` status, `probe/smaps.rs`), each with tests of its own.
//! They compile everywhere (paths are strings) and find nothing off Linux,
//! which [`PROC_READINGS`] says up front.

use std::io;
use std::os::fd::RawFd;

pub mod cgroup;
pub mod procfs;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;

#[cfg(not(target_os = "linux"))]
mod other;
#[cfg(not(target_os = "linux"))]
use other as imp;

/// Whether this platform answers the `/proc` readings (rss and its split,
/// port holders, process trees, cgroup limits). False off Linux, where the
/// reports name those figures as not read.
pub const PROC_READINGS: bool = cfg!(target_os = "linux");

/// Asks the kernel to send `signal` to this process when its parent dies.
/// Returns false where the platform has no such request (the watchdog's
/// pipe still stops the target's group). Async-signal-safe: called between
/// fork and exec.
pub fn kill_with_parent(signal: libc::c_int) -> bool {
    imp::kill_with_parent(signal)
}

/// Names this process as `ps` shows it (the watchdog, so that it is told
/// from leakcheck, whose image it shares). Async-signal-safe.
pub fn name_this_process(name: &std::ffi::CStr) {
    imp::name_this_process(name)
}

/// Closes every descriptor but `keep` at once; false when the platform (or
/// the kernel) cannot, and the caller scans. Async-signal-safe.
pub fn close_descriptors_except(keep: RawFd) -> bool {
    imp::close_descriptors_except(keep)
}

/// A pipe whose two ends close on exec.
pub fn pipe_cloexec() -> io::Result<[RawFd; 2]> {
    imp::pipe_cloexec()
}

/// The calling thread's errno. Async-signal-safe.
pub fn errno() -> libc::c_int {
    imp::errno()
}
