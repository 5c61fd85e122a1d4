//! The Node inspector (Chrome DevTools Protocol over a WebSocket): the
//! client, discovery of a running inspector, and snapshot streaming.

pub mod bind;
mod client;
pub mod dialect;
mod discover;
mod scripts;
pub mod snapshot;
mod webkit;

pub use client::{Event, Inspector, InspectorError, drop_deep};
pub use dialect::Dialect;
pub use discover::{activate, activate_by_pid, close_through, resolve_inspector};
pub use scripts::parsed_scripts;
