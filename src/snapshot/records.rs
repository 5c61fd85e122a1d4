//! Where each number of a node or edge record goes. The `nodes` and
//! `edges` arrays are flat: number `n` is field `n % width` of record
//! `n / width`, and the field's `Slot` says which column keeps it and how it
//! is checked. One definition for the one-thread scanner and the parallel
//! one (`blocks.rs`), so both fill identical columns.

use super::SnapshotParseError;
use super::graph::{NodeId, StringId};

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

/// Pushes each value `convert` accepts; the index of the first it refuses.
#[inline]
fn push_all<T>(
    column: &mut Vec<T>,
    values: impl Iterator<Item = u64>,
    convert: impl Fn(u64) -> Option<T>,
) -> Option<usize> {
    for (k, v) in values.enumerate() {
        match convert(v) {
            Some(value) => column.push(value),
            None => return Some(k),
        }
    }
    None
}

fn too_big(field: &str) -> SnapshotParseError {
    SnapshotParseError::Format(format!("a {field} value does not fit in 32 bits"))
}

impl Columns {
    /// Room for `records` records of `layout`, in the columns it uses.
    pub(super) fn with_capacity(layout: &Records, records: usize) -> Columns {
        let mut columns = Columns::default();
        for slot in &layout.slots {
            match slot {
                Slot::NodeType => columns.node_type.reserve_exact(records),
                Slot::NodeName => columns.node_name.reserve_exact(records),
                Slot::NodeId => columns.node_id.reserve_exact(records),
                Slot::SelfSize => columns.self_size.reserve_exact(records),
                Slot::EdgeCount => columns.edge_count.reserve_exact(records),
                Slot::Detachedness => columns.detachedness.reserve_exact(records),
                Slot::EdgeType => columns.edge_type.reserve_exact(records),
                Slot::EdgeName => columns.edge_name.reserve_exact(records),
                Slot::EdgeTo => columns.edge_to.reserve_exact(records),
                Slot::Ignored => {}
            }
        }
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

    /// Stores `numbers`, the array's numbers from index `first` on: one
    /// tight loop per field instead of a choice per number. The same checks
    /// and the same first error, in array order, as `store` one by one.
    pub(super) fn extend_from_numbers(
        &mut self,
        layout: &Records,
        numbers: &[u64],
        first: u64,
    ) -> Result<(), SnapshotParseError> {
        let width = layout.width();
        let mut first_bad: Option<usize> = None;
        for (field, slot) in layout.slots.iter().enumerate() {
            // The first of `numbers` that is this field.
            let start = (field + width - (first % width as u64) as usize) % width;
            let values = numbers.iter().skip(start).step_by(width).copied();
            let bad = match slot {
                Slot::NodeType => push_all(&mut self.node_type, values, |v| Some(v.min(255) as u8)),
                Slot::Detachedness => {
                    push_all(&mut self.detachedness, values, |v| Some(v.min(255) as u8))
                }
                Slot::EdgeType => push_all(&mut self.edge_type, values, |v| Some(v.min(255) as u8)),
                Slot::NodeName => push_all(&mut self.node_name, values, |v| {
                    u32::try_from(v).ok().map(StringId)
                }),
                Slot::NodeId => push_all(&mut self.node_id, values, |v| u32::try_from(v).ok()),
                Slot::SelfSize => push_all(&mut self.self_size, values, |v| {
                    Some(u32::try_from(v).unwrap_or(u32::MAX))
                }),
                Slot::EdgeCount => {
                    push_all(&mut self.edge_count, values, |v| u32::try_from(v).ok())
                }
                Slot::EdgeName => push_all(&mut self.edge_name, values, |v| u32::try_from(v).ok()),
                Slot::EdgeTo => {
                    let (node_width, node_numbers) = (layout.node_width, layout.node_numbers);
                    push_all(&mut self.edge_to, values, |v| {
                        (v.is_multiple_of(node_width) && v < node_numbers)
                            .then_some(NodeId((v / node_width) as u32))
                    })
                }
                Slot::Ignored => None,
            };
            if let Some(k) = bad {
                let position = start + k * width;
                first_bad = Some(first_bad.map_or(position, |p| p.min(position)));
            }
        }
        match first_bad {
            // The error `store` gives for that number.
            Some(p) => Columns::default()
                .store(
                    layout,
                    (first + p as u64) as usize % width,
                    numbers[p],
                    first + p as u64,
                )
                .and(Err(SnapshotParseError::Format(
                    "a value out of range".into(),
                ))),
            None => Ok(()),
        }
    }

    /// Appends `other`'s columns after this one's.
    pub(super) fn append(&mut self, other: &Columns) {
        self.node_type.extend_from_slice(&other.node_type);
        self.node_name.extend_from_slice(&other.node_name);
        self.node_id.extend_from_slice(&other.node_id);
        self.self_size.extend_from_slice(&other.self_size);
        self.edge_count.extend_from_slice(&other.edge_count);
        self.detachedness.extend_from_slice(&other.detachedness);
        self.edge_type.extend_from_slice(&other.edge_type);
        self.edge_name.extend_from_slice(&other.edge_name);
        self.edge_to.extend_from_slice(&other.edge_to);
    }

    /// Empties every column, keeping its allocation for the next block.
    pub(super) fn clear(&mut self) {
        self.node_type.clear();
        self.node_name.clear();
        self.node_id.clear();
        self.self_size.clear();
        self.edge_count.clear();
        self.detachedness.clear();
        self.edge_type.clear();
        self.edge_name.clear();
        self.edge_to.clear();
    }
}
