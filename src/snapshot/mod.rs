//! The heap snapshot engine: a streaming parser for V8 `.heapsnapshot`
//! files into a columnar graph, and the analyses DevTools users know:
//! distances from the roots, the dominator tree and retained sizes, the
//! class summary, the comparison of two snapshots by node id, and the
//! holder of what grew, with its retainer path.
//!
//! Depends on nothing else in the crate but the plain result types it
//! fills (`crate::model::{ClassDiff, Holder}`). `graph.rs` documents the
//! encoding.

mod analysis;
mod class_retained;
mod classes;
mod collections;
mod diff;
mod dominators;
mod framework_names;
mod frameworks;
mod graph;
mod growth;
mod holder;
mod naming;
mod parse;
mod paths;
mod phases;
#[cfg(test)]
mod random;
mod redact;
mod report;
mod reuse;
mod tally;

pub use crate::model::{ClassDiff, Holder, HolderKind, PathStep};
pub use analysis::{Analysis, analyse};
pub use classes::{ClassIndex, ClassTotals, class_key, summarise};
pub use collections::{CollectionCounts, grown as grown_collections};
pub use diff::{Before, NewNodes, compare_classes, new_nodes};
pub use dominators::Dominators;
pub use graph::{EdgeId, EdgeType, HeapGraph, NodeId, NodeType, Retainers, StringId};
pub use growth::{GrowthRow, grew_by_self_size};
pub use parse::{ParseOptions, SnapshotParseError, parse, parse_sized, parse_with};
pub use paths::Paths;
pub use redact::{Redacted, Redactor, name_like};
pub use report::{
    BeforeSummary, DiffReport, InspectReport, Totals, diff_graph, inspect_graph, summarise_before,
};
pub use reuse::keep_freed_memory;

#[cfg(test)]
mod tests;
