//! The manual method's view of a diff (docs/src/method.md, step 5): counts and self
//! sizes by type and name in each snapshot, B minus A, largest self-size
//! growth first.
//!
//! Both snapshots are tallied on interned string ids (`raw_tally`): V8
//! writes each string once, so within one snapshot a name id stands for
//! its text. The two snapshots number their strings differently, so a row
//! of B finds its row of A by text. The earlier snapshot keeps its rows and
//! its string table (moved out of its graph, not copied: `EarlierTally`);
//! which of B's rows are looked up in A, and how, is `growth.rs`.

use super::graph::{HeapGraph, NodeType, StringId, Strings};

/// End of a chain in the index arrays below.
pub(super) const NONE: u32 = u32::MAX;

/// One (raw type, name id) row of a graph's tally.
pub(super) struct RawRow {
    pub(super) kind: u8,
    pub(super) name: u32,
    pub(super) count: i64,
    pub(super) size: i64,
}

/// A graph's tally: its rows in the order their first node appears, and
/// the rows of each name id chained (`head[name]`, then `next[row]`), for
/// the rare name seen with several types.
pub(super) struct RawTally {
    pub(super) rows: Vec<RawRow>,
    pub(super) head: Vec<u32>,
    pub(super) next: Vec<u32>,
}

/// Counts and self sizes per (raw type, name id), without hashing: a slot
/// per string id finds a node's row. Hashing 650 000 nodes into a map
/// cost more than the rest of a diff of the demo's snapshot pair (9 + 59
/// MB) together.
pub(super) fn raw_tally(graph: &HeapGraph) -> RawTally {
    let mut head = vec![NONE; graph.strings.len()];
    let mut rows: Vec<RawRow> = Vec::new();
    let mut next: Vec<u32> = Vec::new();
    for n in graph.nodes() {
        let kind = graph.node_type[n.index()];
        let name = graph.node_name[n.index()].0;
        // The parser checked every name against the string table.
        let mut slot = head[name as usize];
        while slot != NONE && rows[slot as usize].kind != kind {
            slot = next[slot as usize];
        }
        if slot == NONE {
            slot = rows.len() as u32;
            rows.push(RawRow {
                kind,
                name,
                count: 0,
                size: 0,
            });
            next.push(head[name as usize]);
            head[name as usize] = slot;
        }
        let row = &mut rows[slot as usize];
        row.count += 1;
        row.size += graph.self_size(n) as i64;
    }
    RawTally { rows, head, next }
}

/// One row of the earlier snapshot: its type resolved, its name an id in
/// the earlier snapshot's strings.
pub(super) struct EarlierRow {
    pub(super) kind: NodeType,
    pub(super) name: StringId,
    pub(super) count: i64,
    pub(super) size: i64,
}

/// What a diff keeps of the earlier snapshot's tally. Building it is one
/// pass over the nodes: no name is hashed or copied until a row of the
/// later snapshot asks for it (on the demo's pair, copying 40 000 names
/// and indexing them by text took the earlier snapshot's thread 8–15 ms,
/// beside the later snapshot's parse).
pub struct EarlierTally {
    pub(super) rows: Vec<EarlierRow>,
    pub(super) strings: Strings,
}

impl EarlierTally {
    /// Tallies `graph` and takes its string table (left empty).
    pub fn take_from(graph: &mut HeapGraph) -> EarlierTally {
        let rows = raw_tally(graph)
            .rows
            .into_iter()
            .map(|row| EarlierRow {
                kind: graph.node_type_of_raw(row.kind),
                name: StringId(row.name),
                count: row.count,
                size: row.size,
            })
            .collect();
        EarlierTally {
            rows,
            strings: std::mem::take(&mut graph.strings),
        }
    }

    pub(super) fn name(&self, row: &EarlierRow) -> &[u8] {
        self.strings.bytes_of(row.name)
    }
}
