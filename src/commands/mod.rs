//! One module per subcommand; each takes its props and returns how it ended.

pub mod load;
pub mod run;
