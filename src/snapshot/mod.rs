//! The heap snapshot engine: a streaming parser for V8 `.heapsnapshot`
//! files into a columnar graph, and the analyses DevTools users know:
//! distances from the roots, the dominator tree and retained sizes, the
//! class summary, the comparison of two snapshots by node id, and the
//! holder of what grew, with its retainer path.
//!
//! Depends on nothing else in the crate but the plain result types it
//! fills (`crate::model::{ClassDiff, Holder}`). `graph.rs` documents the
//! encoding.

mod block_text;
mod blocks;
mod class_retained;
mod classes;
mod collections;
mod diff;
mod dominators;
mod edge_index;
mod fused;
mod graph;
mod growth;
mod holder;
mod naming;
mod numbers;
mod parse;
mod paths;
mod phases;
#[cfg(test)]
mod random;
mod records;
mod report;
mod reuse;
mod scan;
mod shown;
mod slots;
mod tally;

use std::io::Read;

pub use crate::model::{ClassDiff, Holder, HolderKind, PathStep};
pub use classes::{ClassIndex, ClassTotals, class_key, summarise};
pub use collections::{CollectionCounts, grown as grown_collections};
pub use diff::{Before, NewNodes, compare_classes, new_nodes};
pub use dominators::Dominators;
pub use graph::{EdgeId, EdgeType, HeapGraph, NodeId, NodeType, Retainers, StringId};
pub use growth::{GrowthRow, grew_by_self_size};
pub use parse::{ParseOptions, parse, parse_sized, parse_with};
pub use paths::Paths;
pub use report::{
    BeforeSummary, DiffReport, InspectReport, Totals, diff_graph, inspect_graph, summarise_before,
};
pub use reuse::keep_freed_memory;

/// Why a heap snapshot could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotParseError {
    #[error("cannot read the snapshot")]
    Io(#[source] std::io::Error),
    #[error("malformed snapshot at byte {offset}: expected {expected}")]
    Syntax { offset: u64, expected: String },
    #[error(
        "the snapshot ends at byte {offset} while {expected} was expected: the file is truncated \
         (was it copied while still being written?)"
    )]
    Truncated { offset: u64, expected: String },
    #[error("not a usable V8 heap snapshot: {0}")]
    Format(String),
}

/// A parsed snapshot with its dominators and paths.
pub struct Analysis {
    pub graph: HeapGraph,
    pub dominators: Dominators,
    pub paths: Paths,
}

impl Analysis {
    pub fn new(mut graph: HeapGraph) -> Analysis {
        // The reverse index is consumed (and freed) by the dominators,
        // before the paths are computed, to keep the peak low.
        let retainers = graph.take_retainers();
        let dominators = Dominators::compute(&graph, retainers);
        let paths = Paths::compute(&graph);
        Analysis {
            graph,
            dominators,
            paths,
        }
    }
}

/// Parses and analyses a snapshot from any reader.
pub fn analyse<R: Read>(reader: R) -> Result<Analysis, SnapshotParseError> {
    Ok(Analysis::new(parse(reader)?))
}
#[cfg(test)]
mod tests;
