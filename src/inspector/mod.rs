//! The Node inspector (Chrome DevTools Protocol over a WebSocket).

mod client;

pub use client::{COMMAND_TIMEOUT, Event, Inspector, InspectorError};
