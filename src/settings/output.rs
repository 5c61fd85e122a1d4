//! `leakcheck report`'s settings.

use crate::report::OutputProps;

/// `leakcheck report`, free of clap.
#[derive(Debug, Clone)]
pub struct ReportProps {
    pub source: ReportSource,
    pub output: OutputProps,
}

/// What `leakcheck report` renders.
#[derive(Debug, Clone)]
pub enum ReportSource {
    /// One saved result.
    Result(String),
    /// `--merge`: shards' results (files or folders) to merge first.
    Merge(Vec<String>),
}
