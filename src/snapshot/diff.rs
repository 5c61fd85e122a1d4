//! Comparing two snapshots of one process, matched by node id: DevTools'
//! Comparison view per class (# New, # Deleted, # Delta, Alloc. Size,
//! Freed Size, Size Delta). Bun's snapshots (JavaScriptCore's, in V8's
//! format) number their nodes afresh each time: they are compared by class
//! counts instead. The method's "grew by self size" view is in
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

pub fn new_nodes(before: &Before, b: &HeapGraph, b_classes: &ClassIndex) -> NewNodes {
    if b.written_by_javascriptcore() {
        return new_by_class_counts(before, b_classes);
    }
    NewNodes {
        is_new: b.node_id.iter().map(|id| !before.contains(*id)).collect(),
    }
}

/// Per class name, the count and self size of its instances.
fn class_totals(
    names: &[String],
    class_of: impl Iterator<Item = (u32, u64)>,
) -> HashMap<&str, (u64, u64)> {
    let mut totals: HashMap<&str, (u64, u64)> = HashMap::default();
    for (class, size) in class_of {
        let slot = totals.entry(names[class as usize].as_str()).or_default();
        slot.0 += 1;
        slot.1 += size;
    }
    totals
}

/// JavaScriptCore numbers each snapshot's nodes afresh, so ids say nothing
/// about which objects are new: every instance of a class whose count
/// grew is taken as new, and the holders are those of the grown classes
/// (their counts then include the instances that were already there; the
/// class table's delta is the growth).
fn new_by_class_counts(before: &Before, b_classes: &ClassIndex) -> NewNodes {
    let earlier = before_totals(before);
    let later = class_totals(&b_classes.names, b_classes.of.iter().map(|c| (*c, 0)));
    let grew: Vec<bool> = b_classes
        .names
        .iter()
        .map(|name| {
            let was = earlier.get(name.as_str()).map_or(0, |t| t.0);
            later.get(name.as_str()).map_or(0, |t| t.0) > was
        })
        .collect();
    NewNodes {
        is_new: b_classes.of.iter().map(|c| grew[*c as usize]).collect(),
    }
}

fn before_totals(before: &Before) -> HashMap<&str, (u64, u64)> {
    class_totals(
        &before.class_names,
        before
            .class_of
            .iter()
            .zip(&before.self_size)
            .map(|(c, s)| (*c, u64::from(*s))),
    )
}

/// The Comparison view by class counts alone, for snapshots whose ids do
/// not persist (`new_by_class_counts`): # New is the growth of a class's
/// count, # Deleted its shrinking, and the sizes likewise.
fn compare_class_counts(before: &Before, b: &HeapGraph, b_classes: &ClassIndex) -> Vec<ClassDiff> {
    let earlier = before_totals(before);
    let later = class_totals(
        &b_classes.names,
        b.nodes().map(|n| (b_classes.of[n.index()], b.self_size(n))),
    );
    let mut names: Vec<&str> = earlier.keys().chain(later.keys()).copied().collect();
    names.sort_unstable();
    names.dedup();
    let mut out: Vec<ClassDiff> = names
        .into_iter()
        .map(|class| {
            let (count_a, size_a) = earlier.get(class).copied().unwrap_or_default();
            let (count_b, size_b) = later.get(class).copied().unwrap_or_default();
            ClassDiff {
                class: class.to_string(),
                new_count: count_b.saturating_sub(count_a),
                deleted_count: count_a.saturating_sub(count_b),
                delta_count: count_b as i64 - count_a as i64,
                alloc_size: size_b.saturating_sub(size_a),
                freed_size: size_a.saturating_sub(size_b),
                size_delta: size_b as i64 - size_a as i64,
            }
        })
        .filter(|row| row.delta_count != 0 || row.size_delta != 0)
        .collect();
    out.sort_by(|x, y| y.size_delta.cmp(&x.size_delta).then(x.class.cmp(&y.class)));
    out
}

/// The Comparison view, sorted by size delta (largest growth first).
pub fn compare_classes(
    before: &Before,
    b: &HeapGraph,
    b_classes: &ClassIndex,
    new: &NewNodes,
) -> Vec<ClassDiff> {
    if b.written_by_javascriptcore() {
        return compare_class_counts(before, b, b_classes);
    }
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
