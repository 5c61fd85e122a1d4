//! The streaming `.heapsnapshot` parser, apart from the analyses that read
//! its graph: `document.rs` walks the file's one JSON document; `scan.rs`
//! is the byte scanner under it; the `nodes` and `edges` arrays are read in
//! blocks on several threads (`blocks.rs`, `block_text.rs`, `numbers.rs`,
//! `fused.rs`) into per-block slots (`slots.rs`) and then the columns
//! (`records.rs`); `edge_index.rs` builds the first-edge index and
//! `shown.rs` keeps only the strings a report shows.
//!
//! Hand-written rather than serde: a snapshot's two big arrays reach
//! gigabytes, and parsing them number by number straight into `u32`
//! columns, on both cores, is what makes the engine fast and small.

mod block_text;
mod blocks;
mod document;
mod edge_index;
mod error;
mod fused;
mod jsc;
mod numbers;
mod records;
mod scan;
mod shown;
mod slots;

pub use document::{ParseOptions, parse, parse_sized, parse_with};
pub use error::SnapshotParseError;
