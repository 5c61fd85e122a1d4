//! How a target leakcheck did not start is reached, and `sample`'s and
//! `snapshot`'s settings.

use crate::report::OutputTarget;

/// The attach choice, as a plain value.
#[derive(Debug, Clone, PartialEq)]
pub enum Attach {
    Inspect(String),
    Pid(u32),
    Endpoints(String),
    Proc(u32),
}

/// `leakcheck sample`, free of clap.
#[derive(Debug, Clone)]
pub struct SampleProps {
    pub attach: Attach,
    pub url: Option<String>,
    pub gc: bool,
    pub counters: Vec<crate::probe::Counter>,
    pub json: Option<OutputTarget>,
    pub allow_remote_inspector: bool,
}

/// `leakcheck snapshot`, free of clap.
#[derive(Debug, Clone)]
pub struct SnapshotProps {
    pub attach: Attach,
    pub output: std::path::PathBuf,
    pub gc: bool,
    pub allow_remote_inspector: bool,
}
