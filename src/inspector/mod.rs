//! The Node inspector (Chrome DevTools Protocol over a WebSocket): the
//! client, discovery of a running inspector, and snapshot streaming.

pub mod bind;
mod client;
mod discover;
mod scripts;
pub mod snapshot;

pub use client::{COMMAND_TIMEOUT, Event, Inspector, InspectorError, WeakInspector, drop_deep};
pub use discover::{DiscoverError, activate_by_pid, resolve_inspector};
pub use scripts::{ParsedScript, parsed_scripts};
