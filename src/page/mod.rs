//! `leakcheck page`: the method's loop on a browser page. The unit of work
//! is one pass of the user's action list (an iteration); a cycle is `-n`
//! iterations (`workload.rs`), driven by the same loop as a server's
//! requests (`crate::cycle::run_route`), `--cycles auto` included; the
//! readings are the JS heap and the DOM counts (`probe.rs`); the verdict,
//! the diagnosis (snapshots of the page, detached DOM nodes named as
//! DevTools names them) and the reports are the ones `run` uses. Chromium
//! is a target like a server (`browser.rs`).

mod actions;
pub mod browser;
mod dialogs;
mod idle;
pub mod links;
pub mod listeners;
mod loop_stats;
mod probe;
mod workload;

pub use actions::{Action, ActionError, PageFailure, open, wait_loaded};
pub use dialogs::Dialogs;
pub use idle::Network;
pub use probe::PageProbe;
pub use workload::PageActions;
