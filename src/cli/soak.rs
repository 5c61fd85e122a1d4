//! `leakcheck soak`: the same target modes, probe and outputs as `run`,
//! with a constant-rate load for a duration and a settled reading at an
//! interval instead of cycles of a fixed count.

use std::time::Duration;

use clap::Args;

use super::run::{RunArgs, RunProps, SoakProps};
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

impl SoakArgs {
    pub fn into_props(self) -> anyhow::Result<RunProps> {
        if self.every.is_zero() || self.every > self.duration {
            anyhow::bail!(
                "--every {:?} must be above zero and within -d {:?}: a soak needs at least one \
                 reading during the load",
                self.every,
                self.duration
            );
        }
        if self.rate.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
            anyhow::bail!("-R must be a positive number of requests per second");
        }
        if self.run.routes.len() > 1 {
            anyhow::bail!(
                "a soak loads one route (the series is one over time); give one --route, or a \
                 --scenario for a mix of requests"
            );
        }
        if self.run.load_cmd.is_some() {
            anyhow::bail!(
                "a soak drives its own constant load (-d, -R); --load-cmd is for `run`, whose \
                 cycles an external driver can send"
            );
        }
        if self.run.cycles == Some(crate::verdict::budget::Cycles::Auto)
            || self.run.max_requests.is_some()
        {
            anyhow::bail!(
                "a soak's schedule is -d and --every: --cycles auto and --max-requests are for \
                 `run`"
            );
        }
        let mut props = self.run.into_props()?;
        // The duration and the interval make a soak's schedule.
        props.sequential = None;
        props.soak = Some(SoakProps {
            duration: self.duration,
            every: self.every,
            rate: self.rate,
        });
        Ok(props)
    }
}
