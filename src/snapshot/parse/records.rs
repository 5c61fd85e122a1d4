//! Where each number of a node or edge record goes. The `nodes` and
//! `edges` arrays are flat: number `n` is field `n % width` of record
//! `n / width`, and the field's `Slot` says which column keeps it and how it
//! is checked. One definition for the one-thread scanner and the parallel
//! one (`blocks.rs`), so both fill identical columns.

use super::error::{SnapshotParseError, too_big};
use crate::snapshot::graph::{NodeId, StringId};

/// What a field of a record is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Slot {
    NodeType,
    NodeName,
    NodeId,
    SelfSize,
    EdgeCount,
    Detachedness,
    EdgeType,
    EdgeName,
    EdgeTo,
    Ignored,
}

/// The record layout of one array: a slot per field position.
#[derive(Debug, Clone)]
pub(super) struct Records {
    pub(super) slots: Vec<Slot>,
    /// Fields of a node: a `to_node` is a multiple of it.
    pub(super) node_width: u64,
    /// Numbers in `nodes`: a `to_node` is below it.
    pub(super) node_numbers: u64,
}

impl Records {
    pub(super) fn width(&self) -> usize {
        self.slots.len()
    }

    /// The `to_node` reader for this layout's edges.
    pub(super) fn to_node(&self) -> ToNode {
        ToNode::new(self.node_width, self.node_numbers)
    }
}

/// Reads a `to_node` (the index in `nodes` of a node's first field: a
/// multiple of the node width, below the count of numbers) as the node's
/// number, without a division: a divide per edge was a fifth of the
/// workers' storing time. Exact division by multiplying with the divisor's
/// inverse modulo 2^64 (Granlund & Montgomery, "Division by invariant
/// integers using multiplication", PLDI 1994, §9): for odd `d`, `v` is a
/// multiple of `d` exactly when `v · d⁻¹ mod 2^64 ≤ (2^64 − 1) / d`, and
/// that product is then the quotient. The node count is below that bound,
/// so one comparison with it checks both. An even width's factors of two
/// are shifted out first.
#[derive(Debug, Clone, Copy)]
pub(super) struct ToNode {
    /// Trailing zero bits of the width.
    shift: u32,
    /// Inverse of the width's odd part, modulo 2^64.
    inverse: u64,
    /// Nodes: a node number is below it.
    nodes: u64,
}

impl ToNode {
    pub(super) fn new(node_width: u64, node_numbers: u64) -> ToNode {
        let width = node_width.max(1);
        let shift = width.trailing_zeros();
        let odd = width >> shift;
        // Newton's iteration doubles the correct low bits each step; an odd
        // number is its own inverse modulo 8 (3 bits): 5 steps reach 64+.
        let mut inverse = odd;
        for _ in 0..5 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(inverse)));
        }
        ToNode {
            shift,
            inverse,
            nodes: node_numbers / width,
        }
    }

    /// The node `v` starts, if it starts one.
    #[inline]
    pub(super) fn node(&self, v: u64) -> Option<NodeId> {
        let low_bits = (1u64 << self.shift) - 1;
        let quotient = (v >> self.shift).wrapping_mul(self.inverse);
        (v & low_bits == 0 && quotient < self.nodes).then_some(NodeId(quotient as u32))
    }
}

#[cfg(test)]
mod to_node_tests {
    use super::*;

    #[test]
    fn to_node_agrees_with_division_for_every_width() {
        for width in 1..=40u64 {
            let nodes = 1000;
            let to_node = ToNode::new(width, nodes * width);
            let mut values: Vec<u64> = (0..nodes * width + 3 * width).collect();
            values.extend([
                u64::MAX,
                u64::MAX - width + 1,
                (u64::MAX / width) * width,
                1 << 63,
            ]);
            values.extend((1..64).map(|bits| (1u64 << bits).wrapping_mul(width)));
            for v in values {
                let expected = (v.is_multiple_of(width) && v < nodes * width)
                    .then(|| NodeId((v / width) as u32));
                assert_eq!(to_node.node(v), expected, "width {width}, value {v}");
            }
        }
    }
}

/// The columns one array fills (only the node ones or only the edge ones
/// are used). Workers fill their own and the main thread appends them in
/// order.
#[derive(Debug, Default)]
pub(super) struct Columns {
    pub(super) node_type: Vec<u8>,
    pub(super) node_name: Vec<StringId>,
    pub(super) node_id: Vec<u32>,
    pub(super) self_size: Vec<u32>,
    pub(super) edge_count: Vec<u32>,
    pub(super) detachedness: Vec<u8>,
    pub(super) edge_type: Vec<u8>,
    pub(super) edge_name: Vec<u32>,
    pub(super) edge_to: Vec<NodeId>,
}

impl Columns {
    /// Room for `records` records of `layout`, in the columns it uses.
    pub(super) fn with_capacity(layout: &Records, records: usize) -> Columns {
        let mut columns = Columns::default();
        columns.reserve_records(layout, records);
        columns
    }

    /// Stores number `index` of the array (0-based), whose value is `v`,
    /// in its field's column.
    #[inline]
    pub(super) fn store(
        &mut self,
        layout: &Records,
        field: usize,
        v: u64,
        index: u64,
    ) -> Result<(), SnapshotParseError> {
        match layout.slots[field] {
            Slot::NodeType => self.node_type.push(v.min(255) as u8),
            Slot::NodeName => self.node_name.push(StringId(
                u32::try_from(v).map_err(|_| too_big("node name"))?,
            )),
            Slot::NodeId => self
                .node_id
                .push(u32::try_from(v).map_err(|_| too_big("node id"))?),
            Slot::SelfSize => self.self_size.push(u32::try_from(v).unwrap_or(u32::MAX)),
            Slot::EdgeCount => self
                .edge_count
                .push(u32::try_from(v).map_err(|_| too_big("edge count"))?),
            Slot::Detachedness => self.detachedness.push(v.min(255) as u8),
            Slot::EdgeType => self.edge_type.push(v.min(255) as u8),
            Slot::EdgeName => self
                .edge_name
                .push(u32::try_from(v).map_err(|_| too_big("edge name"))?),
            Slot::EdgeTo => {
                let width = layout.node_width;
                if !v.is_multiple_of(width) || v >= layout.node_numbers {
                    return Err(SnapshotParseError::Format(format!(
                        "edge {} points to {v}, which is not the start of a node (node fields: \
                         {width}, nodes: {})",
                        index / layout.width() as u64,
                        layout.node_numbers / width
                    )));
                }
                self.edge_to.push(NodeId((v / width) as u32));
            }
            Slot::Ignored => {}
        }
        Ok(())
    }

    /// Room for `additional` more records in the columns `layout` uses.
    pub(super) fn reserve_records(&mut self, layout: &Records, additional: usize) {
        for slot in &layout.slots {
            match slot {
                Slot::NodeType => self.node_type.reserve_exact(additional),
                Slot::NodeName => self.node_name.reserve_exact(additional),
                Slot::NodeId => self.node_id.reserve_exact(additional),
                Slot::SelfSize => self.self_size.reserve_exact(additional),
                Slot::EdgeCount => self.edge_count.reserve_exact(additional),
                Slot::Detachedness => self.detachedness.reserve_exact(additional),
                Slot::EdgeType => self.edge_type.reserve_exact(additional),
                Slot::EdgeName => self.edge_name.reserve_exact(additional),
                Slot::EdgeTo => self.edge_to.reserve_exact(additional),
                Slot::Ignored => {}
            }
        }
    }
}
