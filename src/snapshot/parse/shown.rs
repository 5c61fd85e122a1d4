//! The strings `inspect` can print, known before the strings are read.
//!
//! Most of a snapshot's string table is the contents of string objects
//! (V8 names a string node by its value), and `inspect` prints none of
//! them: a string node's class is `(string)`, and the largest retainers it
//! names are user objects, never strings (`report::is_user_object`). The
//! nodes and edges come before the strings in the file, so the parser can
//! mark which strings anything else names (other nodes' names, the names
//! of edges that have one) and keep the contents of those alone; the
//! others stay in the table, empty, so every id and count is unchanged.
//! On the 440 MB bench file the strings take 46 MiB less and their
//! reading thread a quarter less time, and the peak (at the dominator
//! tree) falls 526 → 496 MB; the wall time is unchanged, since the edge
//! index beside the strings bounds that phase. `diff` keeps everything:
//! the method's tally counts strings by value.

use crate::snapshot::graph::HeapGraph;

/// String ids, one bit each.
pub(super) struct ShownStrings {
    words: Vec<u64>,
    /// Ids from here up are not kept (see `of`).
    most: u32,
}

impl ShownStrings {
    /// The ids named by a node that is not a string, or by an edge that
    /// carries a name (all but element and hidden edges, which carry an
    /// index). Needs the nodes' and edges' columns and type tables. One
    /// thread: with threads it runs beside the edge index, which takes
    /// longer (0.03 s on the 440 MB bench file).
    ///
    /// Ids from `most` up are left out: the strings are read after this,
    /// and the rest of the input cannot hold that many, so the parse
    /// refuses such a name once it has counted them. Without the bound, a
    /// malformed file naming string 2^32 − 1 grew the set to 512 MB.
    pub(super) fn of(graph: &HeapGraph, most: u32) -> ShownStrings {
        // Per raw type: one table lookup a node or edge in the loops.
        let value_type: [bool; 256] =
            std::array::from_fn(|raw| graph.node_type_of_raw(raw as u8).is_string_value());
        let named_edge = graph.string_named_edge_types();
        let mut shown = ShownStrings {
            words: Vec::new(),
            most,
        };
        for (raw, name) in graph.node_type.iter().zip(&graph.node_name) {
            if !value_type[*raw as usize] {
                shown.insert(name.0);
            }
        }
        for (raw, name) in graph.edge_type.iter().zip(&graph.edge_name) {
            if named_edge[*raw as usize] {
                shown.insert(*name);
            }
        }
        shown
    }

    fn insert(&mut self, id: u32) {
        if id >= self.most {
            return;
        }
        let word = (id / 64) as usize;
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        self.words[word] |= 1 << (id % 64);
    }

    pub(super) fn contains(&self, id: usize) -> bool {
        self.words
            .get(id / 64)
            .is_some_and(|word| word & (1 << (id % 64)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::graph::{EdgeType, NodeType, StringId};

    #[test]
    fn names_past_what_the_input_can_hold_do_not_grow_the_set() {
        let graph = HeapGraph {
            node_type_table: vec![NodeType::Object, NodeType::String],
            edge_type_table: vec![EdgeType::Property, EdgeType::Element],
            node_type: vec![0, 1, 0],
            node_name: vec![StringId(3), StringId(4_000_000_000), StringId(70)],
            edge_type: vec![0, 1, 0],
            edge_name: vec![5, 3_000_000_000, u32::MAX],
            ..HeapGraph::default()
        };
        let shown = ShownStrings::of(&graph, 100);
        let kept: Vec<usize> = (0..200).filter(|id| shown.contains(*id)).collect();
        // Object names and property names below the bound; not a string's
        // value (node 1), not an element's index, nothing past the bound.
        assert_eq!(kept, vec![3, 5, 70]);
        assert!(shown.words.len() <= 2, "{} words", shown.words.len());
        assert!(!shown.contains(u32::MAX as usize));
        let unbounded = ShownStrings::of(&graph, u32::MAX);
        assert_eq!(
            (0..200).filter(|id| unbounded.contains(*id)).count(),
            3,
            "the bound leaves out only what lies past it"
        );
    }
}
