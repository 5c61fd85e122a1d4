//! The seam on Linux: each call is one system call (see `mod.rs`).

use std::io;
use std::os::fd::RawFd;

pub fn kill_with_parent(signal: libc::c_int) -> bool {
    // SAFETY: prctl with an integer argument; async-signal-safe.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal) == 0 }
}

pub fn name_this_process(name: &std::ffi::CStr) {
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, name.as_ptr());
    }
}

pub fn close_descriptors_except(keep: RawFd) -> bool {
    // SAFETY: close_range on this process's own descriptors (Linux 5.9+;
    // an older kernel answers ENOSYS and the caller scans).
    unsafe {
        keep > 0
            && libc::syscall(libc::SYS_close_range, 0u32, keep as u32 - 1, 0u32) == 0
            && libc::syscall(libc::SYS_close_range, keep as u32 + 1, u32::MAX, 0u32) == 0
    }
}

pub fn pipe_cloexec() -> io::Result<[RawFd; 2]> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fds)
}

pub fn errno() -> libc::c_int {
    // SAFETY: the thread's own errno slot.
    unsafe { *libc::__errno_location() }
}
