//! `leakcheck report`'s settings.

use crate::report::OutputProps;

/// `leakcheck report`, free of clap.
#[derive(Debug, Clone)]
pub struct ReportProps {
    pub result: String,
    pub output: OutputProps,
}
