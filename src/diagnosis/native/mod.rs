//! Native attribution of off-heap retention: which native code keeps the
//! malloc'd memory a request adds, and which JavaScript called it. It sits
//! beside the snapshot engine, not in it: a heap snapshot cannot see
//! memory malloc handed to C code.
//!
//! - `heaptrack.rs` starts the recorder around a target process;
//! - `trace.rs` reads its record and keeps what a window left allocated;
//! - `perf_map.rs` names the JIT frames through V8's perf map;
//! - `sites.rs` turns stacks into sites with owners.

pub mod heaptrack;
pub mod perf_map;
pub mod recorded;
pub mod sites;
pub mod trace;

pub use heaptrack::{Recorder, RecorderError, Recording};
