//! `leakcheck load`.

use crate::report::OutputTarget;
use std::time::Duration;

use clap::Args;

use super::RequestArgs;
use super::RequestProps;
use crate::units::{parse_count, parse_duration};

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Target URL (loopback only unless --allow-remote).
    pub url: String,
    /// Concurrent keep-alive connections.
    #[arg(short = 'c', long, default_value_t = 10)]
    pub connections: usize,
    /// Exact number of requests (`20k` works); the default when neither -a nor -d is given is 10000.
    #[arg(short = 'a', long = "requests", value_parser = parse_count, conflicts_with = "duration")]
    pub requests: Option<u64>,
    /// Send for this long instead of a fixed count (`10s`, `1m`).
    #[arg(short = 'd', long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Constant arrival rate in requests per second across all connections;
    /// latency is then measured from each request's scheduled time.
    #[arg(short = 'R', long)]
    pub rate: Option<f64>,
    /// Extra path to rotate through, `PATH` or `PATH=WEIGHT` (repeatable); the URL's path is the first.
    #[arg(long = "route", value_name = "PATH[=WEIGHT]")]
    pub routes: Vec<String>,
    #[command(flatten)]
    pub request: RequestArgs,
    /// Write the JSON report to FILE (`-` for stdout; the summary then goes to stderr).
    #[arg(long, value_name = "FILE", value_parser = OutputTarget::parse)]
    pub json: Option<OutputTarget>,
    /// Allow a URL that is not on this machine.
    #[arg(long)]
    pub allow_remote: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Everything `leakcheck load` needs, free of clap.
#[derive(Debug, Clone)]
pub struct LoadProps {
    pub url: String,
    pub connections: usize,
    pub stop: crate::load::Stop,
    pub rate: Option<f64>,
    /// Extra routes with their weights.
    pub routes: Vec<(String, u32)>,
    pub request: RequestProps,
    pub json: Option<OutputTarget>,
    pub allow_remote: bool,
    pub quiet: bool,
}

/// Requests when `leakcheck load` is given neither -a nor -d.
const DEFAULT_LOAD_REQUESTS: u64 = 10_000;

impl LoadArgs {
    pub fn into_props(self) -> anyhow::Result<LoadProps> {
        if self.connections == 0 {
            anyhow::bail!("--connections must be at least 1");
        }
        if let Some(rate) = self.rate
            && !(rate.is_finite() && rate > 0.0)
        {
            anyhow::bail!("--rate must be a positive number of requests per second");
        }
        let stop = match (self.requests, self.duration) {
            (Some(0), _) => anyhow::bail!("-a/--requests must be at least 1"),
            (Some(n), _) => crate::load::Stop::Requests(n),
            (None, Some(d)) => crate::load::Stop::Duration(d),
            (None, None) => crate::load::Stop::Requests(DEFAULT_LOAD_REQUESTS),
        };
        let mut routes = Vec::new();
        for route in &self.routes {
            let (path, weight) = match route.rsplit_once('=') {
                Some((path, weight)) => {
                    let weight: u32 = weight.parse().map_err(|_| {
                        anyhow::anyhow!(
                            "--route {route:?}: the weight after `=` must be a whole number"
                        )
                    })?;
                    (path.to_string(), weight)
                }
                None => (route.clone(), 1),
            };
            super::run::check_route(&path)?;
            routes.push((path, weight.max(1)));
        }
        crate::limits::check_connections(self.connections)?;
        Ok(LoadProps {
            url: self.url,
            connections: self.connections,
            stop,
            rate: self.rate,
            routes,
            request: self.request.into_props()?,
            json: self.json,
            allow_remote: self.allow_remote,
            quiet: self.quiet,
        })
    }
}
