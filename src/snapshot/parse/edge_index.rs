//! The end of a parse: the edge offsets and the reverse index (built from
//! the nodes' edge counts, beside the strings when there are threads), and
//! the checks that the sections agree.

use super::error::SnapshotParseError;
use super::error::too_big;
use crate::snapshot::graph::{HeapGraph, NodeId};

/// The edge offsets and the reverse index, built beside the strings.
pub(super) struct EdgeIndex {
    first_edge: Vec<u32>,
    first_retainer: Vec<u32>,
    retainers: Vec<NodeId>,
}

impl EdgeIndex {
    pub(super) fn install(self, graph: &mut HeapGraph) {
        graph.first_edge = self.first_edge;
        graph.first_retainer = self.first_retainer;
        graph.retainers = self.retainers;
    }
}

/// Builds the edge offsets from the nodes' edge counts, checking they
/// add up to the edges, and the retainers. Needs no strings, so with
/// threads it runs while the strings are read.
pub(super) fn index_edges(
    graph: &HeapGraph,
    edge_counts: Vec<u32>,
) -> Result<EdgeIndex, SnapshotParseError> {
    let n = graph.node_id.len();
    if n == 0 {
        return Err(SnapshotParseError::Format(
            "the snapshot has no nodes".into(),
        ));
    }
    // The counts become the offsets in place: no new 4 bytes a node.
    let mut first_edge = edge_counts;
    first_edge.truncate(n);
    let mut total: u64 = 0;
    for slot in first_edge.iter_mut() {
        let count = *slot;
        *slot = u32::try_from(total).map_err(|_| too_big("edge offset"))?;
        total += u64::from(count);
    }
    first_edge.reserve_exact(1);
    first_edge.push(u32::try_from(total).map_err(|_| too_big("edge offset"))?);
    if total != graph.edge_to.len() as u64 {
        return Err(SnapshotParseError::Format(format!(
            "the nodes' edge counts add up to {total}, but \"edges\" holds {} edges",
            graph.edge_to.len()
        )));
    }
    let (first_retainer, retainers) = graph.retainers_for(&first_edge);
    Ok(EdgeIndex {
        first_edge,
        first_retainer,
        retainers,
    })
}

/// Every node name and every edge name that is not an index points into
/// the `strings` strings. The largest name is found first, in branch-free
/// loops (a branch an edge to report the first bad one made this check a
/// fifth of the strings' phase); the error's exact edge is looked for only
/// when there is one.
pub(super) fn check_names(graph: &HeapGraph, strings: u32) -> Result<(), SnapshotParseError> {
    let largest_node_name = graph.node_name.iter().map(|s| s.0).max().unwrap_or(0);
    if largest_node_name >= strings {
        let bad = graph.node_name.iter().find(|s| s.0 >= strings);
        return Err(SnapshotParseError::Format(format!(
            "a node name points to string {}, past the {strings} strings",
            bad.map_or(largest_node_name, |s| s.0)
        )));
    }
    // Per raw type: all ones where the name is a string id, zero where it
    // is an index, so `name & mask` keeps the ids alone.
    let mask = graph.string_named_edge_types().map(|named| match named {
        true => u32::MAX,
        false => 0,
    });
    let names = graph.edge_type.iter().zip(&graph.edge_name);
    let largest = names
        .clone()
        .map(|(t, name)| name & mask[*t as usize])
        .max();
    if largest.unwrap_or(0) < strings {
        return Ok(());
    }
    for (i, (t, name)) in names.enumerate() {
        if name & mask[*t as usize] >= strings {
            return Err(SnapshotParseError::Format(format!(
                "edge {i} names string {name}, past the {strings} strings"
            )));
        }
    }
    Ok(())
}

/// What is done beside the strings: the edge index on another core, and
/// on the reading thread, once the strings are in (they take less time),
/// the check of the names against them.
pub(super) struct Beside {
    pub(super) index: Result<EdgeIndex, SnapshotParseError>,
    pub(super) names: Result<(), SnapshotParseError>,
}

/// Checks the sections agree and builds the edge offsets and retainers
/// (unless `beside` holds them, done while the strings were read).
pub(super) fn finish(
    graph: &mut HeapGraph,
    edge_counts: Vec<u32>,
    beside: Option<Beside>,
) -> Result<(), SnapshotParseError> {
    // The arena grew by doubling; give the slack back before the index
    // and the analyses allocate (on one thread the index is built here).
    graph.strings.bytes.shrink_to_fit();
    graph.strings.starts.shrink_to_fit();
    // The index's error comes before the names'.
    match beside {
        Some(beside) => {
            beside.index?.install(graph);
            beside.names?;
        }
        None => {
            index_edges(graph, edge_counts)?.install(graph);
            check_names(graph, graph.strings.len() as u32)?;
        }
    }
    super::jsc::weaken_code_block_edges(graph);
    Ok(())
}
