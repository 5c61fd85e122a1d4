//! The command line (clap derive) and nothing else: the command layer
//! resolves these types into plain settings (`commands/resolve/`), and
//! nothing below it sees a clap type.

use clap::{Parser, Subcommand};

mod attach;
mod function;
mod heap;
mod load_command;
mod output;
mod page;
mod routes;
mod run;
mod soak;
mod watch;

pub use attach::*;
pub use function::*;
pub use heap::*;
pub use load_command::*;
pub use output::*;
pub use page::*;
pub use routes::*;
pub use run::*;
pub use soak::*;
pub use watch::*;

#[derive(Debug, Parser)]
#[command(
    name = "leakcheck",
    version,
    about = "Checks whether a Node.js server keeps memory under load, how much per request, and what holds it.",
    after_help = "Exit codes: 0 no retention, 1 retention found, 2 error."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start a server, load it in cycles with forced collections between them, and judge the growth.
    Run(Box<RunArgs>),
    /// Keep a constant load on a server for a duration, with a settled reading at an interval,
    /// and project when its heap reaches the limit.
    Soak(Box<SoakArgs>),
    /// Open a page in headless Chromium, repeat user actions in cycles with forced collections,
    /// and judge the growth of its heap, DOM nodes and listeners.
    Page(Box<PageArgs>),
    /// Check a function for leaks: call MODULE#EXPORT in cycles with forced
    /// collections between them, and judge what each call keeps.
    Fn(Box<FnArgs>),
    /// List the routes a run would check (from an OpenAPI document, the
    /// live app's router or a Next.js build), without checking any.
    Routes(Box<RoutesArgs>),
    /// Send an exact or timed HTTP/1.1 load and report throughput, latency and errors.
    Load(LoadArgs),
    /// Take one memory reading of a running target, optionally after a settled full collection.
    Sample(SampleArgs),
    /// Stream a heap snapshot from a running Node process to a file (mode 0600).
    Snapshot(SnapshotArgs),
    /// Render a saved JSON result again (HTML, Markdown), optionally against a baseline.
    Report(ReportArgs),
    /// Summarise one heap snapshot: totals, classes, largest retainers.
    Inspect(InspectArgs),
    /// Compare two heap snapshots of one process and name what holds the growth.
    Diff(DiffArgs),
    /// Rewrite heap snapshots with every string value replaced by its length and
    /// a hash (names kept), fit to attach to a public issue.
    Redact(RedactArgs),
    /// Watch a live Node process under its own traffic, with no load of
    /// its own: the trend of its heap after its own major collections, the
    /// projection to its limit, and the allocation sites that grew.
    Watch(Box<WatchArgs>),
    /// Serve the checks to coding agents: a Model Context Protocol server on stdio.
    Mcp(McpArgs),
}

#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// Let tool calls ask for a target off this machine (`allow_remote`);
    /// without it they are refused, whatever the agent asks.
    #[arg(long)]
    pub allow_remote: bool,
    /// Where each call's reports are written, a folder per call [default: a
    /// folder of the system's temp directory].
    #[arg(long, value_name = "DIR")]
    pub results: Option<std::path::PathBuf>,
}
