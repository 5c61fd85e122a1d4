//! The commands that describe the command line itself: shell completions
//! and man pages, both generated from these clap definitions so that they
//! cannot drift from the flags.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// `leakcheck completions SHELL`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write a completion script for (to stdout).
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

/// The shells clap_complete writes scripts for.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
}

/// `leakcheck man [SUBCOMMAND] [--dir DIR]`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (`run`, `watch`…) [default: the
    /// page of `leakcheck` itself].
    pub subcommand: Option<String>,
    /// Write every page (`leakcheck.1`, `leakcheck-run.1`, …) into DIR
    /// instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "subcommand")]
    pub dir: Option<PathBuf>,
}
