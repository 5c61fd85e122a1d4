//! One module per subcommand; each takes its props and returns how it ended.

pub mod attach;
pub mod heap;
pub mod load;
pub mod report;
pub mod run;
pub mod sample;
pub mod signals;
pub mod snapshot;
