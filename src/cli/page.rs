//! `leakcheck page`: the browser half of the question. A page, a list of
//! user actions repeated per cycle, the same readings, verdicts, diagnosis
//! and reports as `run`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::{OutputArgs, OutputProps};
use crate::page::Action;
use crate::report::OutputTarget;
use crate::units::{parse_bytes, parse_count, parse_duration};

#[derive(Debug, Args)]
pub struct PageArgs {
    /// The page to open (http://127.0.0.1:… for a page this machine serves).
    pub url: String,
    /// One user action of an iteration, in order (repeatable): click
    /// SELECTOR, type SELECTOR TEXT, press KEY, goto URL, back, wait MS,
    /// wait-for SELECTOR, eval JS.
    #[arg(long = "action", value_name = "ACTION", required = true)]
    pub actions: Vec<String>,
    /// Measured cycles (the first is warm-up, as for servers).
    #[arg(long, default_value_t = 3)]
    pub cycles: u32,
    /// Iterations of the action list per cycle.
    #[arg(short = 'n', long = "iterations", default_value = "50", value_parser = parse_count)]
    pub iterations: u64,
    /// The browser to start (default: chromium, chromium-browser or
    /// google-chrome from the PATH).
    #[arg(long, value_name = "PATH", conflicts_with = "connect")]
    pub chrome: Option<PathBuf>,
    /// Drive a browser that already runs with remote debugging on
    /// loopback (its ws://127.0.0.1:PORT/devtools/browser/… URL); it is
    /// left running.
    #[arg(long, value_name = "WS_URL")]
    pub connect: Option<String>,
    /// Write the JSON result to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE", value_parser = OutputTarget::parse)]
    pub json: Option<OutputTarget>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Retention at or below this many bytes per iteration is reported, not failed.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub max_retained: Option<f64>,
    /// Do not take heap snapshots to name the holder of a retention.
    #[arg(long)]
    pub no_diagnose: bool,
    /// Also write the diagnosis' two heap snapshots here (mode 0600).
    #[arg(long, value_name = "DIR")]
    pub snapshots: Option<PathBuf>,
    /// How long the browser has after SIGTERM before SIGKILL.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub grace: Duration,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `leakcheck page`'s choices, free of clap.
#[derive(Debug, Clone)]
pub struct PageProps {
    pub url: String,
    pub actions: Vec<Action>,
    pub cycles: u32,
    pub iterations: u64,
    pub chrome: Option<PathBuf>,
    pub connect: Option<String>,
    pub output: OutputProps,
    pub max_retained: Option<f64>,
    pub diagnose: bool,
    pub snapshots: Option<PathBuf>,
    pub grace: Duration,
    pub quiet: bool,
}

impl PageArgs {
    pub fn into_props(self) -> anyhow::Result<PageProps> {
        let actions = self
            .actions
            .iter()
            .map(|a| Action::parse(a))
            .collect::<Result<Vec<_>, _>>()?;
        if self.cycles == 0 || self.iterations == 0 {
            anyhow::bail!("--cycles and -n must be at least 1");
        }
        Ok(PageProps {
            url: self.url,
            actions,
            cycles: self.cycles,
            iterations: self.iterations,
            chrome: self.chrome,
            connect: self.connect,
            output: self.output.into_props(self.json)?,
            max_retained: self.max_retained,
            diagnose: !self.no_diagnose,
            snapshots: self.snapshots,
            grace: self.grace,
            quiet: self.quiet,
        })
    }
}
