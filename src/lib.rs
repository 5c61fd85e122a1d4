//! leakcheck: finds memory a Node.js server keeps under load, by the method
//! in docs/src/method.md; the book's docs/src/layout.md maps the modules. `run` is the entry
//! point the binary calls.

pub mod bisect;
pub(crate) mod cli;
pub mod commands;
pub(crate) mod cycle;
pub mod diagnosis;
pub mod evidence;
pub mod function;
pub(crate) mod inspector;
pub mod known;
pub(crate) mod limits;
pub mod load;
pub mod mcp;
pub mod model;
pub mod net;
pub mod page;
pub mod platform;
pub(crate) mod private_file;
pub mod probe;
pub mod process;
pub(crate) mod redact;
pub mod report;
pub mod routes;
pub mod runtime;
pub(crate) mod session;
pub(crate) mod settings;
pub mod snapshot;
pub mod units;
pub(crate) mod verdict;
pub(crate) mod watch;

use std::process::ExitCode;

use clap::Parser;

pub use cli::manual;
use cli::{Cli, Command};
use commands::frame::RunEnd;

pub use commands::exit::{EXIT_CLEAN, EXIT_ERROR, EXIT_LEAK};

/// Parses the command line, runs the subcommand, and maps its end to an exit code.
pub fn run() -> ExitCode {
    // Before anything opens a descriptor: see `limits.rs`.
    limits::raise_open_files();
    let cli = Cli::parse();
    let clean = |()| RunEnd::Clean;
    let outcome = match cli.command {
        // The snapshot commands are plain threads on files: no runtime to
        // start and stop around them.
        Command::Inspect(args) => commands::heap::inspect(args.into_props()).map(clean),
        Command::Diff(args) => commands::heap::diff(args.into_props()).map(clean),
        Command::Redact(args) => commands::heap::redact(&args.snapshots, &args.out).map(clean),
        Command::Completions(args) => {
            cli::manual::completions(args.shell, &mut std::io::stdout());
            Ok(RunEnd::Clean)
        }
        Command::Man(args) => man(args).map(clean),
        // Bisect runs git, npm and child leakchecks, one at a time.
        Command::Bisect(args) => args.into_props().and_then(commands::bisect::run),
        command => run_async(command),
    };
    match outcome {
        Ok(RunEnd::Clean) => ExitCode::from(EXIT_CLEAN),
        Ok(RunEnd::Leak) => ExitCode::from(EXIT_LEAK),
        Ok(RunEnd::Failed) => ExitCode::from(EXIT_ERROR),
        // The reader of stdout went away (`| head -1`): nothing is wrong
        // with the check, and there is no one left to tell.
        Err(error) if report::output::is_broken_pipe(&error) => ExitCode::from(EXIT_CLEAN),
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// `leakcheck man`: one page to stdout, or every page into a folder.
fn man(args: cli::ManArgs) -> anyhow::Result<()> {
    match args.dir {
        Some(dir) => {
            for path in cli::manual::man_pages(&dir)? {
                println!("{}", path.display());
            }
            Ok(())
        }
        None => cli::manual::man_page(args.subcommand.as_deref(), &mut std::io::stdout()),
    }
}

/// The subcommands that talk to a target, on the async runtime.
fn run_async(command: Command) -> anyhow::Result<RunEnd> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async {
        let clean = |()| RunEnd::Clean;
        match command {
            Command::Run(args) => commands::run::run(args.into_props()?).await,
            Command::Soak(args) => commands::run::run(args.into_props()?).await,
            Command::Page(args) => commands::page::run(args.into_props()?).await,
            Command::Fn(args) => commands::function::run(args.into_props()?).await,
            Command::Watch(args) => commands::watch::run(args.into_props()?).await,
            Command::Routes(args) => commands::routes::run(args.into_props()?).await,
            Command::Load(args) => commands::load_command::run(args.into_props()?)
                .await
                .map(clean),
            Command::Sample(args) => commands::sample::run(args.into_props()?).await.map(clean),
            Command::Snapshot(args) => commands::snapshot::run(args.into_props()?).await.map(clean),
            Command::Report(args) => commands::report::run(args.into_props()?).await,
            Command::Mcp(args) => mcp::serve(mcp::McpProps {
                allow_remote: args.allow_remote,
                results: args.results.unwrap_or_else(|| {
                    std::env::temp_dir().join(format!("leakcheck-mcp-{}", std::process::id()))
                }),
            })
            .await
            .map(clean),
            Command::Inspect(_)
            | Command::Diff(_)
            | Command::Redact(_)
            | Command::Bisect(_)
            | Command::Completions(_)
            | Command::Man(_) => {
                unreachable!(
                    "`run` runs the snapshot and documentation commands without the runtime"
                )
            }
        }
    })
}
