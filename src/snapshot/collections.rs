//! Collections that grow: the Arrays, Maps, Sets and plain Objects of a
//! snapshot with their entry counts, and between two snapshots of one
//! process, those whose count grew in proportion to the work between them.
//! A Map gaining one entry per request is a leak even when each entry is
//! too small for the byte series to resolve, and even when what it keeps
//! lives off the V8 heap (a Set of buffers).
//!
//! The same object keeps its node id across snapshots of one process, so
//! the two counts of a collection are matched by id; a collection created
//! between the snapshots has no earlier count and is not listed.
//!
//! How V8 lays out the entries (read from snapshots of Node 20 and
//! Chromium 148):
//! - an Array's entries are its `element` edges;
//! - a plain Object's are its `property` edges (but `__proto__`) and its
//!   `element` edges (integer keys);
//! - a Map's or Set's are in its `table` (an OrderedHashMap/Set): one
//!   `internal` edge named by the slot index per key or value that is a
//!   heap object. A Map entry takes three slots (key, value, chain) and a
//!   Set entry two (key, chain), so a Map entry whose key and value are
//!   both objects shows as two adjacent indices, and entries never do:
//!   the entries are the runs of consecutive indices, two to a Map entry.
//!
//! Small integers (Smis) are not heap objects and have no edge: an array
//! of numbers, or a Map from numbers to numbers, cannot be counted. Such
//! a collection reads 0 entries and is never listed.

use super::analysis::Analysis;
use super::graph::{EdgeType, HeapGraph, NodeId, NodeType};
use crate::model::Collection;

/// The kinds of collection counted, by their snapshot class name.
const KINDS: [&str; 4] = ["Array", "Map", "Set", "Object"];

/// Entry counts of every collection of a snapshot, by node id, sorted by
/// id: a column of pairs, so a heap of millions of objects costs 8 bytes
/// each, not a hash map's 30 or more.
#[derive(Debug, Default)]
pub struct CollectionCounts {
    by_id: Vec<(u32, u32)>,
}

impl CollectionCounts {
    pub fn of(graph: &HeapGraph) -> CollectionCounts {
        let mut by_id: Vec<(u32, u32)> = graph
            .nodes()
            .filter_map(|n| Some((graph.id(n), entries(graph, n)?)))
            .collect();
        by_id.sort_unstable_by_key(|&(id, _)| id);
        CollectionCounts { by_id }
    }

    pub fn get(&self, id: u32) -> Option<u32> {
        self.by_id
            .binary_search_by_key(&id, |&(i, _)| i)
            .ok()
            .map(|at| self.by_id[at].1)
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

/// The entry count of `node` when it is a collection.
pub fn entries(graph: &HeapGraph, node: NodeId) -> Option<u32> {
    if graph.node_type(node) != NodeType::Object {
        return None;
    }
    let kind = graph.name(node);
    if !KINDS.contains(&kind) {
        return None;
    }
    let mut count = 0u32;
    for e in graph.edges(node) {
        match (kind, graph.edge_type(e)) {
            ("Array" | "Object", EdgeType::Element) => count += 1,
            ("Object", EdgeType::Property) if graph.edge_name_str(e) != Some("__proto__") => {
                count += 1
            }
            ("Map" | "Set", EdgeType::Internal) if graph.edge_name_str(e) == Some("table") => {
                count += table_entries(graph, graph.edge_to(e), kind == "Map");
            }
            _ => {}
        }
    }
    Some(count)
}

/// Entries of an ordered hash table: runs of consecutive slot indices,
/// each run of a Map holding up to two slots (key, value) of one entry.
fn table_entries(graph: &HeapGraph, table: NodeId, is_map: bool) -> u32 {
    let mut slots: Vec<u32> = graph
        .edges(table)
        .filter(|&e| graph.edge_type(e) == EdgeType::Internal)
        .filter_map(|e| graph.edge_name_str(e)?.parse().ok())
        .collect();
    slots.sort_unstable();
    let per_entry = if is_map { 2 } else { 1 };
    let mut count = 0;
    let mut run = 0;
    let mut previous: Option<u32> = None;
    for slot in slots {
        if previous.is_some_and(|p| p + 1 == slot) && run < per_entry {
            run += 1;
        } else {
            count += 1;
            run = 1;
        }
        previous = Some(slot);
    }
    count
}

/// The collections of `b` that grew by at least `min_per_unit` entries per
/// unit of the `units` of work since `before`, named as holders are,
/// largest growth first, at most `top`.
pub fn grown(
    before: &CollectionCounts,
    b: &Analysis,
    units: u64,
    min_per_unit: f64,
    top: usize,
) -> Vec<Collection> {
    let graph = &b.graph;
    if units == 0 {
        return Vec::new();
    }
    let threshold = (min_per_unit * units as f64).max(1.0);
    let mut rows: Vec<(NodeId, u32, u32)> = graph
        .nodes()
        .filter(|&n| b.paths.reachable(n))
        .filter_map(|n| {
            let earlier = before.get(graph.id(n))?;
            let now = entries(graph, n)?;
            (f64::from(now) - f64::from(earlier) >= threshold).then_some((n, earlier, now))
        })
        .collect();
    rows.sort_by_key(|&(_, earlier, now)| std::cmp::Reverse(now - earlier));
    rows.truncate(top);
    rows.into_iter()
        .map(|(node, earlier, now)| {
            let kind = graph.name(node).to_string();
            let holder = super::naming::describe(b, &kind, node, None, 0, 0);
            Collection {
                name: holder.name,
                kind,
                entries_before: u64::from(earlier),
                entries_after: u64::from(now),
                per_unit: f64::from(now - earlier) / units as f64,
                script: holder.script,
                node_id: graph.id(node),
                path: holder.path_text,
                state: crate::model::CollectionState::Growing,
            }
        })
        .collect()
}
