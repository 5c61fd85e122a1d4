//! `soak`'s settings: `run`'s, with a schedule in time instead of cycles.

use crate::cli::SoakArgs;
use crate::settings::{RunSettings, SoakProps};

impl SoakArgs {
    pub fn into_props(self) -> anyhow::Result<RunSettings> {
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
        if self.run.discovery.asked() {
            anyhow::bail!(
                "a soak loads one route: give it with --route (`leakcheck routes` lists them)"
            );
        }
        let mut props = self.run.into_props()?;
        // One route over time: the URL's, or the one given.
        props.load.discovery = None;
        // The duration and the interval make a soak's schedule.
        props.load.sequential = None;
        props.load.soak = Some(SoakProps {
            duration: self.duration,
            every: self.every,
            rate: self.rate,
        });
        Ok(props)
    }
}
