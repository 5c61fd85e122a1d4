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
    /// Threads that parse the snapshot's node and edge arrays [default:
    /// the machine's cores]; the result is the same with any number.
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
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
    /// Threads that parse the snapshot's node and edge arrays [default:
    /// the machine's cores]; the result is the same with any number.
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

#[derive(Debug, Args)]
pub struct RedactArgs {
    /// The .heapsnapshot files to redact (a before/after pair keeps equal
    /// strings equal across both).
    #[arg(required = true)]
    pub snapshots: Vec<std::path::PathBuf>,
    /// The folder the redacted copies are written to, under the same names.
    #[arg(short, long, value_name = "DIR")]
    pub out: std::path::PathBuf,
}
