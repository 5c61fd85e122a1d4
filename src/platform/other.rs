//! The seam off Linux (macOS and the BSDs): portable fallbacks where they
//! exist, "cannot" where they do not (see `mod.rs` for what each platform
//! would read instead). Built by `cargo check --target aarch64-apple-darwin`;
//! not run by the tests, which run on Linux.

use std::io;
use std::os::fd::RawFd;

pub fn kill_with_parent(_signal: libc::c_int) -> bool {
    false
}

pub fn name_this_process(_name: &std::ffi::CStr) {}

pub fn close_descriptors_except(_keep: RawFd) -> bool {
    false
}

pub fn pipe_cloexec() -> io::Result<[RawFd; 2]> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe fills the two descriptors; fcntl sets a flag on each.
    unsafe {
        if libc::pipe(fds.as_mut_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
        for fd in fds {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    Ok(fds)
}

pub fn errno() -> libc::c_int {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}
