//! Comparing two snapshots of one process, matched by node id: DevTools'
//! Comparison view per class (# New, # Deleted, # Delta, Alloc. Size,
//! Freed Size, Size Delta) and the seed's "grew by self size" view (counts
//! and self sizes by type and name, B minus A).
//!
//! The earlier snapshot is reduced to a `Before` (ids, classes, self sizes
//! and the type-and-name tally, 12 bytes a node) so its graph can be freed
//! before the later one is read: a diff then needs little more memory than
//! the larger snapshot alone.

use rustc_hash::FxHashMap as HashMap;

use serde::{Deserialize, Serialize};

use super::classes::ClassIndex;
use super::graph::{HeapGraph, NodeId, NodeType, StringId};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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

/// What a diff needs of the earlier snapshot.
pub struct Before {
    /// Node ids, sorted, with the class and self size of each.
    ids: Vec<u32>,
    class_of: Vec<u32>,
    self_size: Vec<u32>,
    class_names: Vec<String>,
    tally: HashMap<(NodeType, Box<str>), (i64, i64)>,
}

/// Counts and self sizes by (type, name). Aggregated first by the raw
/// numbers (cheap integer keys), then once per distinct key by text, since
/// two snapshots number their strings differently.
fn tally(graph: &HeapGraph) -> HashMap<(NodeType, Box<str>), (i64, i64)> {
    let mut by_raw: HashMap<(u8, u32), (i64, i64, u32)> = HashMap::default();
    for n in graph.nodes() {
        let t = by_raw
            .entry((graph.node_type[n.index()], graph.node_name[n.index()].0))
            .or_insert((0, 0, n.0));
        t.0 += 1;
        t.1 += graph.self_size(n) as i64;
    }
    let mut out: HashMap<(NodeType, Box<str>), (i64, i64)> = HashMap::default();
    for (_, (count, size, example)) in by_raw {
        let n = NodeId(example);
        let entry = out
            .entry((graph.node_type(n), graph.name(n).into()))
            .or_default();
        entry.0 += count;
        entry.1 += size;
    }
    out
}

impl Before {
    pub fn summarise(graph: &HeapGraph) -> Before {
        let classes = ClassIndex::build(graph);
        let mut order: Vec<u32> = (0..graph.node_count() as u32).collect();
        order.sort_unstable_by_key(|i| graph.node_id[*i as usize]);
        Before {
            ids: order.iter().map(|i| graph.node_id[*i as usize]).collect(),
            class_of: order.iter().map(|i| classes.of[*i as usize]).collect(),
            self_size: order.iter().map(|i| graph.self_size[*i as usize]).collect(),
            class_names: classes.names,
            tally: tally(graph),
        }
    }

    pub fn contains(&self, id: u32) -> bool {
        self.ids.binary_search(&id).is_ok()
    }
}

/// Which nodes of B did not exist in A (by id).
pub struct NewNodes {
    pub is_new: Vec<bool>,
}

pub fn new_nodes(before: &Before, b: &HeapGraph) -> NewNodes {
    NewNodes {
        is_new: b.node_id.iter().map(|id| !before.contains(*id)).collect(),
    }
}

/// The Comparison view, sorted by size delta (largest growth first).
pub fn compare_classes(
    before: &Before,
    b: &HeapGraph,
    b_classes: &ClassIndex,
    new: &NewNodes,
) -> Vec<ClassDiff> {
    // Per class id first (one array slot per class), by name only at the end.
    let mut added = vec![(0u64, 0u64); b_classes.names.len()];
    for n in b.nodes() {
        if new.is_new[n.index()] {
            let slot = &mut added[b_classes.of[n.index()] as usize];
            slot.0 += 1;
            slot.1 += b.self_size(n);
        }
    }
    let mut b_ids: Vec<u32> = b.node_id.clone();
    b_ids.sort_unstable();
    let mut removed = vec![(0u64, 0u64); before.class_names.len()];
    for (i, id) in before.ids.iter().enumerate() {
        if b_ids.binary_search(id).is_err() {
            let slot = &mut removed[before.class_of[i] as usize];
            slot.0 += 1;
            slot.1 += u64::from(before.self_size[i]);
        }
    }
    let mut rows: HashMap<&str, ClassDiff> = HashMap::default();
    for (id, (count, size)) in added.iter().enumerate().filter(|(_, a)| a.0 > 0) {
        let row = rows.entry(&b_classes.names[id]).or_default();
        row.new_count += count;
        row.alloc_size += size;
    }
    for (id, (count, size)) in removed.iter().enumerate().filter(|(_, r)| r.0 > 0) {
        let row = rows.entry(&before.class_names[id]).or_default();
        row.deleted_count += count;
        row.freed_size += size;
    }
    let mut out: Vec<ClassDiff> = rows
        .into_iter()
        .map(|(class, mut row)| {
            row.class = class.to_string();
            row.delta_count = row.new_count as i64 - row.deleted_count as i64;
            row.size_delta = row.alloc_size as i64 - row.freed_size as i64;
            row
        })
        .collect();
    out.sort_by(|x, y| y.size_delta.cmp(&x.size_delta).then(x.class.cmp(&y.class)));
    out
}

/// The seed's view: tally by type and name in each snapshot, B minus A,
/// largest self-size growth first.
pub fn grew_by_self_size(before: &Before, b: &HeapGraph, top: usize) -> Vec<GrowthRow> {
    // B is tallied by its raw numbers; A's keys are translated into B's
    // string ids, so no text key is built for B's hundreds of thousands of
    // names, only for the rows printed.
    let mut rows: HashMap<(u8, u32), (i64, i64)> = HashMap::default();
    for n in b.nodes() {
        let t = rows
            .entry((b.node_type[n.index()], b.node_name[n.index()].0))
            .or_default();
        t.0 += 1;
        t.1 += b.self_size(n) as i64;
    }
    let ids: HashMap<&str, u32> = (0..b.strings.len() as u32)
        .map(|i| (b.strings.get(StringId(i)), i))
        .collect();
    let raw_type = |kind: NodeType| {
        b.node_type_table
            .iter()
            .position(|t| *t == kind)
            .map(|p| p as u8)
    };
    let mut gone: Vec<(String, i64, i64)> = Vec::new();
    for ((kind, name), (count, size)) in &before.tally {
        match (raw_type(*kind), ids.get(&**name)) {
            (Some(t), Some(id)) => {
                let row = rows.entry((t, *id)).or_default();
                row.0 -= count;
                row.1 -= size;
            }
            _ => gone.push((format!("{kind:?}:{name}").to_lowercase(), -count, -size)),
        }
    }
    let key = |(t, name): (u8, u32)| {
        let kind = b
            .node_type_table
            .get(t as usize)
            .copied()
            .unwrap_or(NodeType::Other);
        format!("{kind:?}:{}", b.strings.get(StringId(name))).to_lowercase()
    };
    let mut all: Vec<((u8, u32), (i64, i64))> = rows.into_iter().collect();
    // Hundreds of thousands of keys, often tied on size: select the top
    // rows first, and sort only those.
    let order = |x: &((u8, u32), (i64, i64)), y: &((u8, u32), (i64, i64))| {
        y.1.1.cmp(&x.1.1).then(x.0.cmp(&y.0))
    };
    if all.len() > top && top > 0 {
        all.select_nth_unstable_by(top - 1, order);
        all.truncate(top);
    }
    all.sort_by(order);
    let mut out: Vec<GrowthRow> = all
        .into_iter()
        .map(|(raw, (count, size))| GrowthRow {
            key: key(raw),
            count_delta: count,
            self_size_delta: size,
        })
        .chain(gone.into_iter().map(|(key, count, size)| GrowthRow {
            key,
            count_delta: count,
            self_size_delta: size,
        }))
        .collect();
    out.sort_by(|x, y| {
        y.self_size_delta
            .cmp(&x.self_size_delta)
            .then_with(|| x.key.cmp(&y.key))
    });
    out.truncate(top);
    out
}
