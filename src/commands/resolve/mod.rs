//! The one step from the command line to settings (ripgrep's low-level
//! arguments to its high-level ones): each subcommand's clap arguments are
//! checked and resolved here into `crate::settings`, once, before anything
//! starts. The only place the command layer sees a clap type.

mod attach;
mod bisect;
mod function;
mod heap;
mod load_command;
mod output;
mod page;
mod routes;
mod run;
mod soak;
mod watch;
