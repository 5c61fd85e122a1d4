//! Whole records parsed straight into their columns: the block parser's
//! fast path (`blocks.rs`). The two-pass path (`numbers.rs` then
//! `Slots::fill`) writes every number to a buffer and reads it back a
//! field at a time; here each record's numbers go from the text to their
//! columns at once, so a number is stored once instead of three times.
//!
//! It takes only what is regular: V8's separators, values in range, a
//! `to_node` that starts a node, and enough text left for the scanner's
//! window. At the first record that is not, it stops at that record's
//! start and the two-pass path takes the rest of the block, so errors,
//! and their order, stay that path's. `blocks_tests.rs` compares the
//! columns with the one-pass reference wherever the blocks cut.
//!
//! Hand-written, like `numbers.rs`: this loop is most of the parse.

use super::numbers::fast_number;
use super::records::{Records, Slot, ToNode};
use super::slots::Slots;
use crate::snapshot::graph::StringId;

/// V8's node fields, in V8's order (`trace_node_id`, sixth, is not kept).
const NODE_FIELDS: [Slot; 5] = [
    Slot::NodeType,
    Slot::NodeName,
    Slot::NodeId,
    Slot::SelfSize,
    Slot::EdgeCount,
];
/// V8's edge fields, in V8's order.
const EDGE_FIELDS: [Slot; 3] = [Slot::EdgeType, Slot::EdgeName, Slot::EdgeTo];

/// Parses whole records from the start of `text`, which must be the start
/// of a record, into the front of `slots`, while the text is regular.
/// Returns the bytes used and the records stored; the caller takes those
/// slots off the front and parses the rest of the text the two-pass way.
/// Only V8's own layouts take this path (fields at fixed places let the
/// loop keep no table); any other takes none of it.
pub(super) fn records(text: &[u8], layout: &Records, slots: &mut Slots<'_>) -> (usize, usize) {
    let fields = layout.slots.as_slice();
    if fields == EDGE_FIELDS {
        return edges(text, layout.to_node(), slots);
    }
    // 5 fields before `trace_node_id`, 6 with it, 7 with `detachedness`
    // (Node 16 on).
    match fields {
        [first @ .., Slot::Ignored, Slot::Detachedness] if *first == NODE_FIELDS => {
            nodes::<7, true>(text, slots)
        }
        [first @ .., Slot::Ignored] if *first == NODE_FIELDS => nodes::<6, false>(text, slots),
        _ if fields == NODE_FIELDS => nodes::<5, false>(text, slots),
        _ => (0, 0),
    }
}

/// The loop over records of `W` numbers: each parsed, then handed to
/// `store` with its index; it stops before the first record that does not
/// parse, that `store` refuses, or past `room` records.
#[inline(always)]
fn each_record<const W: usize>(
    text: &[u8],
    room: usize,
    mut store: impl FnMut(usize, &[u64; W]) -> bool,
) -> (usize, usize) {
    let mut used = 0;
    let mut stored = 0;
    'records: while stored < room {
        let mut values = [0u64; W];
        let mut at = used;
        for value in &mut values {
            let Some((v, next)) = fast_number(text, at) else {
                break 'records;
            };
            *value = v;
            at = next;
        }
        if !store(stored, &values) {
            break;
        }
        stored += 1;
        used = at;
    }
    (used, stored)
}

fn edges(text: &[u8], to_node: ToNode, slots: &mut Slots<'_>) -> (usize, usize) {
    let room = slots
        .edge_type
        .len()
        .min(slots.edge_name.len())
        .min(slots.edge_to.len());
    // Cut to the room, so that the indexing below needs no bounds checks.
    let edge_type = &mut slots.edge_type[..room];
    let edge_name = &mut slots.edge_name[..room];
    let edge_to = &mut slots.edge_to[..room];
    each_record::<3>(text, room, |r, &[t, name, to]| {
        let (Ok(name), Some(target)) = (u32::try_from(name), to_node.node(to)) else {
            return false;
        };
        edge_type[r].write(t.min(255) as u8);
        edge_name[r].write(name);
        edge_to[r].write(target);
        true
    })
}

/// Nodes of `W` fields in V8's order, `DETACHED` when the seventh is
/// `detachedness`.
fn nodes<const W: usize, const DETACHED: bool>(
    text: &[u8],
    slots: &mut Slots<'_>,
) -> (usize, usize) {
    let mut room = slots
        .node_type
        .len()
        .min(slots.node_name.len())
        .min(slots.node_id.len())
        .min(slots.self_size.len())
        .min(slots.edge_count.len());
    if DETACHED {
        room = room.min(slots.detachedness.len());
    }
    let node_type = &mut slots.node_type[..room];
    let node_name = &mut slots.node_name[..room];
    let node_id = &mut slots.node_id[..room];
    let self_size = &mut slots.self_size[..room];
    let edge_count = &mut slots.edge_count[..room];
    let detachedness = &mut slots.detachedness[..if DETACHED { room } else { 0 }];
    each_record::<W>(text, room, |r, values| {
        let (Ok(name), Ok(id), Ok(edges)) = (
            u32::try_from(values[1]),
            u32::try_from(values[2]),
            u32::try_from(values[4]),
        ) else {
            return false;
        };
        node_type[r].write(values[0].min(255) as u8);
        node_name[r].write(StringId(name));
        node_id[r].write(id);
        self_size[r].write(u32::try_from(values[3]).unwrap_or(u32::MAX));
        edge_count[r].write(edges);
        if DETACHED {
            detachedness[r].write(values[6].min(255) as u8);
        }
        true
    })
}
