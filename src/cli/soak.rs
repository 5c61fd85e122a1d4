//! `leakcheck soak`: the same target modes, probe and outputs as `run`,
//! with a constant-rate load for a duration and a settled reading at an
//! interval instead of cycles of a fixed count.

use std::time::Duration;

use clap::Args;

use super::run::RunArgs;
use crate::units::parse_duration;

#[derive(Debug, Args)]
pub struct SoakArgs {
    /// How long to keep the load on (`20s`, `30m`, `2h`).
    #[arg(short = 'd', long, value_parser = parse_duration)]
    pub duration: Duration,
    /// Constant arrival rate, requests per second across all connections
    /// (default: as fast as the connections go).
    #[arg(short = 'R', long)]
    pub rate: Option<f64>,
    /// A settled reading (a forced full collection, the load still on)
    /// this often.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub every: Duration,
    /// Everything `run` takes (`--cycles` and `--requests` do not apply:
    /// the duration and the interval make the schedule).
    #[command(flatten)]
    pub run: RunArgs,
}
