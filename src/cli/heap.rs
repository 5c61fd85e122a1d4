//! `inspect` and `diff`: the heap snapshot commands.

use crate::report::OutputTarget;
use clap::Args;

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A V8 .heapsnapshot file, of any size.
    pub snapshot: std::path::PathBuf,
    /// Rows per table.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Write the report as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE", value_parser = OutputTarget::parse)]
    pub json: Option<OutputTarget>,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The earlier snapshot.
    pub before: std::path::PathBuf,
    /// The later snapshot of the same process.
    pub after: std::path::PathBuf,
    /// Rows per table.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Write the report as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE", value_parser = OutputTarget::parse)]
    pub json: Option<OutputTarget>,
}
