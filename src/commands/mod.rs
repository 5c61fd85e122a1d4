//! One module per subcommand; each takes its props and returns how it ended.

pub mod bisect;
pub mod exit;
pub mod exports;
pub mod frame;
pub mod function;
pub mod heap;
pub mod load_command;
mod outcome;
pub mod page;
pub mod report;
mod resolve;
pub mod routes;
pub mod run;
pub mod sample;
pub mod signals;
pub mod snapshot;
pub mod watch;
