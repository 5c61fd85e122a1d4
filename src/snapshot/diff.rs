//! Comparing two snapshots of one process, matched by node id: DevTools'
//! Comparison view per class (# New, # Deleted, # Delta, Alloc. Size,
//! Freed Size, Size Delta). The method's "grew by self size" view is in
//! `tally.rs`.
//!
//! The earlier snapshot is reduced to a `Before` (ids, classes, self sizes,
//! an id bitmap and the type-and-name tally with the string table, about
//! 13 bytes a node plus the strings) so the rest of its graph can be freed
//! before the later one is read: a diff then needs little more memory than
//! the larger snapshot alone.

use rustc_hash::FxHashMap as HashMap;

use super::classes::ClassIndex;
use super::graph::HeapGraph;
use super::tally::EarlierTally;
use crate::model::ClassDiff;

/// What a diff needs of the earlier snapshot.
pub struct Before {
    /// Node ids in the snapshot's order, with the class and self size of each.
    ids: Vec<u32>,
    class_of: Vec<u32>,
    self_size: Vec<u32>,
    class_names: Vec<String>,
    id_set: IdSet,
    pub(super) tally: EarlierTally,
}

/// A set of node ids for membership tests by the hundred thousand. V8 hands
/// out heap object ids in steps of two, so most of a snapshot's ids span a
/// few bits per node and a bitmap over that span answers in one load. A few
/// synthetic ids sit far above (1.8e9 next to 1.3e6 in a 650 000-node
/// snapshot); those past the bitmap's window go to a sorted list.
struct IdSet {
    min: u32,
    words: Vec<u64>,
    outliers: Vec<u32>,
}

/// The bitmap's window: this many bits per id from the smallest id up.
const BITMAP_BITS_PER_ID: u64 = 64;

impl IdSet {
    fn of(ids: &[u32]) -> IdSet {
        let min = ids.iter().copied().min().unwrap_or(0);
        let span = ids
            .iter()
            .map(|id| u64::from(id - min) + 1)
            .max()
            .unwrap_or(0);
        let window = (BITMAP_BITS_PER_ID * ids.len() as u64).min(span);
        let mut words = vec![0u64; window.div_ceil(64) as usize];
        let mut outliers = Vec::new();
        for id in ids {
            let bit = u64::from(id - min);
            if bit < window {
                words[(bit / 64) as usize] |= 1 << (bit % 64);
            } else {
                outliers.push(*id);
            }
        }
        outliers.sort_unstable();
        IdSet {
            min,
            words,
            outliers,
        }
    }

    fn contains(&self, id: u32) -> bool {
        let Some(bit) = id.checked_sub(self.min).map(|b| b as usize) else {
            return false;
        };
        match self.words.get(bit / 64) {
            Some(word) => word & (1 << (bit % 64)) != 0,
            None => self.outliers.binary_search(&id).is_ok(),
        }
    }
}

impl Before {
    /// Takes what it keeps out of `graph` (its ids, sizes and strings).
    pub fn summarise(mut graph: HeapGraph) -> Before {
        let classes = ClassIndex::build(&graph);
        Before {
            id_set: IdSet::of(&graph.node_id),
            tally: EarlierTally::take_from(&mut graph),
            ids: std::mem::take(&mut graph.node_id),
            class_of: classes.of,
            self_size: std::mem::take(&mut graph.self_size),
            class_names: classes.names,
        }
    }

    pub fn contains(&self, id: u32) -> bool {
        self.id_set.contains(id)
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
    let b_ids = IdSet::of(&b.node_id);
    let mut removed = vec![(0u64, 0u64); before.class_names.len()];
    for (i, id) in before.ids.iter().enumerate() {
        if !b_ids.contains(*id) {
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

#[cfg(test)]
mod tests {
    use super::IdSet;

    #[test]
    fn id_set_answers_inside_the_bitmap_and_among_outliers() {
        // Dense odd ids, one synthetic id far above, as V8 writes them.
        let mut ids: Vec<u32> = (0..1000).map(|i| 2 * i + 1).collect();
        ids.push(1_835_333_088);
        let set = IdSet::of(&ids);
        assert_eq!(set.outliers, vec![1_835_333_088]);
        for id in &ids {
            assert!(set.contains(*id), "{id}");
        }
        for absent in [0, 2, 1000, 2001, 1_835_333_087, u32::MAX] {
            assert!(!set.contains(absent), "{absent}");
        }
        assert!(!IdSet::of(&[]).contains(0));
    }
}
