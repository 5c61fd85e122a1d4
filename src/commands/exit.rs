//! How a command ended, and the exit code that says it (ripgrep's
//! convention: 0 nothing found, 1 found, 2 error).

/// Exit code: no retention found.
pub const EXIT_CLEAN: u8 = 0;

/// Exit code: retention found.
pub const EXIT_LEAK: u8 = 1;

/// Exit code: an error stopped the check.
pub const EXIT_ERROR: u8 = 2;

/// How a run ended, for the exit code.
pub enum RunEnd {
    Clean,
    Leak,
    Failed,
}
