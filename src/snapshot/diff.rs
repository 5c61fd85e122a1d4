//! Comparing two snapshots of one process, matched by node id: DevTools'
//! Comparison view per class (# New, # Deleted, # Delta, Alloc. Size,
//! Freed Size, Size Delta) and the seed's "grew by self size" view (counts
//! and self sizes by type and name, B minus A).

use std::collections::HashMap;

use serde::Serialize;

use super::classes::class_key;
use super::graph::{HeapGraph, NodeId};

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClassDiff {
    pub class: String,
    pub new_count: u64,
    pub deleted_count: u64,
    pub delta_count: i64,
    pub alloc_size: u64,
    pub freed_size: u64,
    pub size_delta: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GrowthRow {
    /// `type:name`, as the seed's script prints it.
    pub key: String,
    pub count_delta: i64,
    pub self_size_delta: i64,
}

/// Which nodes of B did not exist in A (by id).
pub struct NewNodes {
    pub is_new: Vec<bool>,
}

pub fn new_nodes(a: &HeapGraph, b: &HeapGraph) -> NewNodes {
    let mut ids: Vec<u32> = a.node_id.clone();
    ids.sort_unstable();
    NewNodes {
        is_new: b
            .node_id
            .iter()
            .map(|id| ids.binary_search(id).is_err())
            .collect(),
    }
}

/// The Comparison view, sorted by size delta (largest growth first).
pub fn compare_classes(a: &HeapGraph, b: &HeapGraph, new: &NewNodes) -> Vec<ClassDiff> {
    let mut rows: HashMap<String, ClassDiff> = HashMap::new();
    let mut b_ids: Vec<u32> = b.node_id.clone();
    b_ids.sort_unstable();
    for n in b.nodes() {
        if new.is_new[n.index()] {
            let row = rows.entry(class_key(b, n)).or_default();
            row.new_count += 1;
            row.alloc_size += b.self_size(n);
        }
    }
    for n in a.nodes() {
        if b_ids.binary_search(&a.id(n)).is_err() {
            let row = rows.entry(class_key(a, n)).or_default();
            row.deleted_count += 1;
            row.freed_size += a.self_size(n);
        }
    }
    let mut out: Vec<ClassDiff> = rows
        .into_iter()
        .map(|(class, mut row)| {
            row.class = class;
            row.delta_count = row.new_count as i64 - row.deleted_count as i64;
            row.size_delta = row.alloc_size as i64 - row.freed_size as i64;
            row
        })
        .collect();
    out.sort_by(|x, y| y.size_delta.cmp(&x.size_delta).then(x.class.cmp(&y.class)));
    out
}

fn type_name_key(graph: &HeapGraph, n: NodeId) -> String {
    format!("{:?}:{}", graph.node_type(n), graph.name(n)).to_lowercase()
}

/// The seed's view: tally by type and name in each snapshot, B minus A,
/// largest self-size growth first.
pub fn grew_by_self_size(a: &HeapGraph, b: &HeapGraph) -> Vec<GrowthRow> {
    let mut tally: HashMap<String, (i64, i64)> = HashMap::new();
    for n in b.nodes() {
        let t = tally.entry(type_name_key(b, n)).or_default();
        t.0 += 1;
        t.1 += b.self_size(n) as i64;
    }
    for n in a.nodes() {
        let t = tally.entry(type_name_key(a, n)).or_default();
        t.0 -= 1;
        t.1 -= a.self_size(n) as i64;
    }
    let mut rows: Vec<GrowthRow> = tally
        .into_iter()
        .map(|(key, (count, size))| GrowthRow {
            key,
            count_delta: count,
            self_size_delta: size,
        })
        .collect();
    rows.sort_by(|x, y| {
        y.self_size_delta
            .cmp(&x.self_size_delta)
            .then(x.key.cmp(&y.key))
    });
    rows
}
