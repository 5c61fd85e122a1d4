//! `leakcheck page`'s settings.

use std::path::PathBuf;
use std::time::Duration;

use crate::page::Action;
use crate::report::OutputProps;
use crate::verdict::sequential::SequentialPlan;

/// `leakcheck page`'s choices, free of clap.
#[derive(Debug, Clone)]
pub struct PageProps {
    pub url: String,
    /// `--shard I/N` of the links.
    pub shard: Option<crate::routes::shard::Shard>,
    pub scenario: PageScenario,
    /// Run once after the page opens (each route's), and after its last reading.
    pub setup: Vec<Action>,
    pub teardown: Vec<Action>,
    /// Cycles; with `sequential`, the most the budget allows.
    pub cycles: u32,
    pub iterations: u64,
    /// `--cycles auto`: stop when the verdict is decided.
    pub sequential: Option<SequentialPlan>,
    /// The smallest retention per iteration that must not pass as clean.
    pub resolution: f64,
    /// Each cycle ends at its units or at this time, whichever comes first.
    pub cycle_time: Option<Duration>,
    pub timeout: Duration,
    pub inspector_timeout: Duration,
    pub loop_stats: bool,
    pub chrome: Option<PathBuf>,
    pub connect: Option<String>,
    pub output: OutputProps,
    pub max_retained: Option<f64>,
    pub diagnose: bool,
    /// Run the collection check on a route the bytes call clean.
    pub collections: bool,
    pub snapshots: Option<PathBuf>,
    pub grace: Duration,
    pub quiet: bool,
}

/// What an iteration is: the user's action list, or each link in turn.
#[derive(Debug, Clone)]
pub enum PageScenario {
    Actions(Vec<Action>),
    Links { max: u64 },
}
