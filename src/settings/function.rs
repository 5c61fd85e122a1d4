//! `leakcheck fn`'s settings.

use std::path::PathBuf;
use std::time::Duration;

use crate::report::OutputProps;
use crate::verdict::sequential::SequentialPlan;

/// `leakcheck fn`'s choices, free of clap.
#[derive(Debug, Clone)]
pub struct FnProps {
    /// As given: `./lib/cache.mjs`, `my-package`.
    pub module: String,
    /// `default` when none was named.
    pub export: String,
    pub setup: Option<String>,
    pub teardown: Option<String>,
    pub cycles: u32,
    pub calls: u64,
    pub sequential: Option<SequentialPlan>,
    pub resolution: f64,
    /// Each cycle ends at its units or at this time, whichever comes first.
    pub cycle_time: Option<Duration>,
    pub concurrency: u64,
    pub timeout: Duration,
    pub inspector_timeout: Duration,
    pub ready_timeout: Duration,
    pub grace: Duration,
    pub max_retained: Option<f64>,
    pub diagnose: bool,
    pub snapshots: Option<PathBuf>,
    pub output: OutputProps,
    pub quiet: bool,
    /// The node binary (`LEAKCHECK_NODE` or `node`) and its flags.
    pub node: String,
    pub node_flags: Vec<String>,
}

impl FnProps {
    /// `./lib/cache.mjs#get`: the route's name in the report.
    pub fn name(&self) -> String {
        format!("{}#{}", self.module, self.export)
    }
}
