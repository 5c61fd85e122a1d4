//! The snapshot commands' settings (`inspect`, `diff`).

use crate::report::OutputTarget;

/// `inspect`'s choices, free of clap.
#[derive(Debug, Clone)]
pub struct InspectProps {
    pub snapshot: std::path::PathBuf,
    pub top: usize,
    pub json: Option<OutputTarget>,
    /// Parser threads; `None` for one per core.
    pub threads: Option<u16>,
}

/// `diff`'s choices, free of clap.
#[derive(Debug, Clone)]
pub struct DiffProps {
    pub before: std::path::PathBuf,
    pub after: std::path::PathBuf,
    pub top: usize,
    pub json: Option<OutputTarget>,
    /// Parser threads; `None` for one per core.
    pub threads: Option<u16>,
}
