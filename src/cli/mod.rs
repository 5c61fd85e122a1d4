//! The command line (clap derive) and nothing else: the command layer
//! resolves these types into plain settings (`commands/resolve/`), and
//! nothing below it sees a clap type.

use clap::{Parser, Subcommand};

mod attach;
mod bisect;
mod docs;
pub mod examples;
mod function;
mod heap;
mod load_command;
pub mod manual;
mod output;
mod page;
mod routes;
mod run;
mod soak;
mod watch;

pub use attach::*;
pub use bisect::*;
pub use docs::*;
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
    after_help = "Exit codes: 0 no retention, 1 retention found, 2 error.\n\nThe book: docs/ in the repository (`mdbook serve docs`); `leakcheck man` and\n`leakcheck completions SHELL` for the manual pages and shell completions."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start a server, load it in cycles with forced collections between them, and judge the growth.
    #[command(after_help = examples::RUN)]
    Run(Box<RunArgs>),
    /// Keep a constant load on a server for a duration, with a settled reading at an interval,
    /// and project when its heap reaches the limit.
    #[command(after_help = examples::SOAK)]
    Soak(Box<SoakArgs>),
    /// Open a page in headless Chromium, repeat user actions in cycles with forced collections,
    /// and judge the growth of its heap, DOM nodes and listeners.
    #[command(after_help = examples::PAGE)]
    Page(Box<PageArgs>),
    /// Check a function for leaks: call MODULE#EXPORT in cycles with forced
    /// collections between them, and judge what each call keeps.
    #[command(after_help = examples::FN)]
    Fn(Box<FnArgs>),
    /// List the routes a run would check (from an OpenAPI document, the
    /// live app's router or a Next.js build), without checking any.
    #[command(after_help = examples::ROUTES)]
    Routes(Box<RoutesArgs>),
    /// Send an exact or timed HTTP/1.1 load and report throughput, latency and errors.
    #[command(after_help = examples::LOAD)]
    Load(LoadArgs),
    /// Take one memory reading of a running target, optionally after a settled full collection.
    #[command(after_help = examples::SAMPLE)]
    Sample(SampleArgs),
    /// Stream a heap snapshot from a running Node process to a file (mode 0600).
    #[command(after_help = examples::SNAPSHOT)]
    Snapshot(SnapshotArgs),
    /// Render a saved JSON result again (HTML, Markdown), optionally against a baseline.
    #[command(after_help = examples::REPORT)]
    Report(ReportArgs),
    /// Summarise one heap snapshot: totals, classes, largest retainers.
    #[command(after_help = examples::INSPECT)]
    Inspect(InspectArgs),
    /// Compare two heap snapshots of one process and name what holds the growth.
    #[command(after_help = examples::DIFF)]
    Diff(DiffArgs),
    /// Rewrite heap snapshots with every string value replaced by its length and
    /// a hash (names kept), fit to attach to a public issue.
    #[command(after_help = examples::REDACT)]
    Redact(RedactArgs),
    /// Watch a live Node process under its own traffic, with no load of
    /// its own: the trend of its heap after its own major collections, the
    /// projection to its limit, and the allocation sites that grew.
    #[command(after_help = examples::WATCH)]
    Watch(Box<WatchArgs>),
    /// Find the commit, package version or Node release that brought a
    /// leak in: each step checks one candidate in a scratch worktree or
    /// install, and the search halves the range.
    #[command(after_help = examples::BISECT)]
    Bisect(Box<BisectArgs>),
    /// Serve the checks to coding agents: a Model Context Protocol server on stdio.
    #[command(after_help = examples::MCP)]
    Mcp(McpArgs),
    /// Write a shell completion script (bash, zsh, fish, powershell, elvish) to stdout.
    #[command(after_help = examples::COMPLETIONS)]
    Completions(CompletionsArgs),
    /// Print a manual page (roff), or write every page into a folder.
    #[command(after_help = examples::MAN)]
    Man(ManArgs),
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
