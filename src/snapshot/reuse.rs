//! Freed columns kept for the next phase's columns.
//!
//! The engine frees arrays of tens of MB between phases (the reverse
//! index after the dominators, the dominators' work arrays) and then
//! allocates others of the same size. By default glibc gives a freed
//! block of more than a few MB back to the kernel at once, so the next
//! array's every page is faulted in and zeroed again: a fault costs
//! microseconds, and on a 440 MB snapshot the faults were a quarter of
//! `inspect`'s CPU time. Raising glibc's thresholds to their maxima serves
//! blocks up to 32 MB from memory the process already has and stops the
//! heap from being trimmed while the engine runs. The peak stays that of
//! the largest phase (a few MB more, for fragmentation); the memory goes
//! back to the kernel when the process exits, which for `inspect` and
//! `diff` is right after. Measured in BENCHMARKS.md (page faults 184 000 →
//! 148 000 on the 440 MB snapshot).

/// glibc's largest mmap threshold on 64-bit systems
/// (`DEFAULT_MMAP_THRESHOLD_MAX`, 4 × 1024 × 1024 × sizeof(long)).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD_MAX: libc::c_int = 32 * 1024 * 1024;

/// Asks the allocator to keep freed memory for reuse (glibc only; a no-op
/// elsewhere). For the snapshot commands, before they parse.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning parameters; it is
    // called before the engine's threads start.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX);
        libc::mallopt(libc::M_TRIM_THRESHOLD, libc::c_int::MAX);
    }
}

/// Drops `value` on a thread of its own: freeing a column of tens of MB
/// unmaps thousands of pages (5–7 ms for the 72 MB reverse index of a
/// 440 MB snapshot), time the thread that was using it need not wait for.
pub(super) fn free_beside<T: Send + 'static>(value: T) {
    let spawned = std::thread::Builder::new()
        .name("free".into())
        .spawn(move || drop(value));
    // If no thread could start, the value went with the closure: dropped here.
    drop(spawned);
}
