//! `leakcheck load`.

use crate::report::OutputTarget;
use std::time::Duration;

use clap::Args;

use super::RequestArgs;
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
