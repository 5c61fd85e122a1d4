//! Where the workers of `blocks.rs` store numbers: straight into the
//! columns, each block into its own stretch of them.
//!
//! A block's first number is known before it is parsed (the reading
//! thread counts the commas before it), so the stretch of every column its
//! numbers fill is known too. `Room` hands those stretches out in array
//! order from the columns' spare capacity, as `Slots`, disjoint
//! `&mut [MaybeUninit<T>]`: the workers write them side by side with no
//! lock, and no block is copied twice. The columns' lengths are set only
//! once every block of the stretch has come back without error
//! (`Room::commit`): only then is every slot below them written.

use std::mem::MaybeUninit;

use super::error::SnapshotParseError;
use super::records::{Columns, Records, Slot};
use crate::snapshot::graph::{NodeId, StringId};

/// Columns a layout can fill, in `Slot` order (the `Ignored` slot has none).
const COLUMNS: usize = 9;

/// One block's stretch of each column it fills.
#[derive(Default)]
pub(super) struct Slots<'a> {
    pub(super) node_type: &'a mut [MaybeUninit<u8>],
    pub(super) node_name: &'a mut [MaybeUninit<StringId>],
    pub(super) node_id: &'a mut [MaybeUninit<u32>],
    pub(super) self_size: &'a mut [MaybeUninit<u32>],
    pub(super) edge_count: &'a mut [MaybeUninit<u32>],
    pub(super) detachedness: &'a mut [MaybeUninit<u8>],
    pub(super) edge_type: &'a mut [MaybeUninit<u8>],
    pub(super) edge_name: &'a mut [MaybeUninit<u32>],
    pub(super) edge_to: &'a mut [MaybeUninit<NodeId>],
}

fn column_of(slot: Slot) -> Option<usize> {
    Some(match slot {
        Slot::NodeType => 0,
        Slot::NodeName => 1,
        Slot::NodeId => 2,
        Slot::SelfSize => 3,
        Slot::EdgeCount => 4,
        Slot::Detachedness => 5,
        Slot::EdgeType => 6,
        Slot::EdgeName => 7,
        Slot::EdgeTo => 8,
        Slot::Ignored => return None,
    })
}

/// Of `count` numbers from array index `first`, how many are field `field`
/// of a `width`-field record, and the position of the first of them.
fn share(first: u64, count: usize, field: usize, width: usize) -> (usize, usize) {
    let start = (field + width - (first % width as u64) as usize) % width;
    let n = if start < count {
        (count - start).div_ceil(width)
    } else {
        0
    };
    (start, n)
}

/// Writes each value `convert` accepts into `slots`, in order; the index
/// of the first it refuses.
#[inline]
fn fill<T>(
    slots: &mut [MaybeUninit<T>],
    values: impl Iterator<Item = u64>,
    convert: impl Fn(u64) -> Option<T>,
) -> Option<usize> {
    for (k, (slot, v)) in slots.iter_mut().zip(values).enumerate() {
        match convert(v) {
            Some(value) => {
                slot.write(value);
            }
            None => return Some(k),
        }
    }
    None
}

/// Slots per column that `count` numbers from array index `first` fill.
fn wanted(layout: &Records, first: u64, count: usize) -> [usize; COLUMNS] {
    let width = layout.width();
    let mut wanted = [0usize; COLUMNS];
    for (field, slot) in layout.slots.iter().enumerate() {
        if let Some(column) = column_of(*slot) {
            wanted[column] = share(first, count, field, width).1;
        }
    }
    wanted
}

impl<'a> Slots<'a> {
    /// The first `wanted[c]` slots of each column `c`, taken off the front
    /// of these.
    fn take_front(&mut self, wanted: [usize; COLUMNS]) -> Slots<'a> {
        Slots {
            node_type: take(&mut self.node_type, wanted[0]),
            node_name: take(&mut self.node_name, wanted[1]),
            node_id: take(&mut self.node_id, wanted[2]),
            self_size: take(&mut self.self_size, wanted[3]),
            edge_count: take(&mut self.edge_count, wanted[4]),
            detachedness: take(&mut self.detachedness, wanted[5]),
            edge_type: take(&mut self.edge_type, wanted[6]),
            edge_name: take(&mut self.edge_name, wanted[7]),
            edge_to: take(&mut self.edge_to, wanted[8]),
        }
    }

    /// The slots of the first `count` numbers (from array index `first`),
    /// taken off the front of these.
    pub(super) fn split_off_front(
        &mut self,
        layout: &Records,
        first: u64,
        count: usize,
    ) -> Slots<'a> {
        self.take_front(wanted(layout, first, count))
    }

    /// Stores `numbers`, the array's numbers from index `first` on: one
    /// tight loop per field. The same checks and the same first error, in
    /// array order, as `Columns::store` one by one. Slots past the numbers
    /// (a block cut short by a syntax error) and after an error stay
    /// unwritten: the caller must not commit them.
    pub(super) fn fill(
        &mut self,
        layout: &Records,
        numbers: &[u64],
        first: u64,
    ) -> Result<(), SnapshotParseError> {
        let width = layout.width();
        let mut first_bad: Option<usize> = None;
        for (field, slot) in layout.slots.iter().enumerate() {
            let (start, _) = share(first, numbers.len(), field, width);
            let values = numbers.iter().skip(start).step_by(width).copied();
            let small = |v: u64| Some(v.min(255) as u8);
            let bad = match slot {
                Slot::NodeType => fill(self.node_type, values, small),
                Slot::Detachedness => fill(self.detachedness, values, small),
                Slot::EdgeType => fill(self.edge_type, values, small),
                Slot::NodeName => fill(self.node_name, values, |v| {
                    u32::try_from(v).ok().map(StringId)
                }),
                Slot::NodeId => fill(self.node_id, values, |v| u32::try_from(v).ok()),
                Slot::SelfSize => fill(self.self_size, values, |v| {
                    Some(u32::try_from(v).unwrap_or(u32::MAX))
                }),
                Slot::EdgeCount => fill(self.edge_count, values, |v| u32::try_from(v).ok()),
                Slot::EdgeName => fill(self.edge_name, values, |v| u32::try_from(v).ok()),
                Slot::EdgeTo => {
                    let to_node = layout.to_node();
                    fill(self.edge_to, values, |v| to_node.node(v))
                }
                Slot::Ignored => None,
            };
            if let Some(k) = bad {
                let position = start + k * width;
                first_bad = Some(first_bad.map_or(position, |p| p.min(position)));
            }
        }
        let Some(p) = first_bad else {
            return Ok(());
        };
        // The error `store` gives for that number.
        Columns::default()
            .store(
                layout,
                (first + p as u64) as usize % width,
                numbers[p],
                first + p as u64,
            )
            .and(Err(SnapshotParseError::Format(
                "a value out of range".into(),
            )))
    }
}

/// The columns' spare capacity, handed out in array order.
pub(super) struct Room<'a> {
    free: Slots<'a>,
    /// Slots handed out per column.
    carved: [usize; COLUMNS],
}

/// Takes the first `n` of `free`, or all it has (the callers check it has
/// them; a piece of a malformed block can only ask for fewer).
fn take<'a, T>(free: &mut &'a mut [MaybeUninit<T>], n: usize) -> &'a mut [MaybeUninit<T>] {
    let n = n.min(free.len());
    let (head, rest) = std::mem::take(free).split_at_mut(n);
    *free = rest;
    head
}

impl<'a> Room<'a> {
    pub(super) fn new(columns: &'a mut Columns) -> Room<'a> {
        Room {
            free: Slots {
                node_type: columns.node_type.spare_capacity_mut(),
                node_name: columns.node_name.spare_capacity_mut(),
                node_id: columns.node_id.spare_capacity_mut(),
                self_size: columns.self_size.spare_capacity_mut(),
                edge_count: columns.edge_count.spare_capacity_mut(),
                detachedness: columns.detachedness.spare_capacity_mut(),
                edge_type: columns.edge_type.spare_capacity_mut(),
                edge_name: columns.edge_name.spare_capacity_mut(),
                edge_to: columns.edge_to.spare_capacity_mut(),
            },
            carved: [0; COLUMNS],
        }
    }

    /// Slots left per column.
    fn free_lens(&self) -> [usize; COLUMNS] {
        let f = &self.free;
        [
            f.node_type.len(),
            f.node_name.len(),
            f.node_id.len(),
            f.self_size.len(),
            f.edge_count.len(),
            f.detachedness.len(),
            f.edge_type.len(),
            f.edge_name.len(),
            f.edge_to.len(),
        ]
    }

    /// The slots of `count` numbers from array index `first`, or `None`
    /// when a column has no room left for them.
    pub(super) fn carve(
        &mut self,
        layout: &Records,
        first: u64,
        count: usize,
    ) -> Option<Slots<'a>> {
        let wanted = wanted(layout, first, count);
        let free = self.free_lens();
        if wanted.iter().zip(free).any(|(want, left)| *want > left) {
            return None;
        }
        for (carved, n) in self.carved.iter_mut().zip(wanted) {
            *carved += n;
        }
        Some(self.free.take_front(wanted))
    }

    /// What was handed out, per column, for `commit`.
    pub(super) fn carved(&self) -> Carved {
        Carved(self.carved)
    }
}

/// Slots handed out per column by one `Room`.
pub(super) struct Carved([usize; COLUMNS]);

/// Makes the slots handed out part of the columns.
///
/// # Safety
/// Every slot `room` handed out was written: each block's `Slots::fill`
/// returned `Ok`.
pub(super) unsafe fn commit(columns: &mut Columns, carved: Carved) {
    let [a, b, c, d, e, f, g, h, i] = carved.0;
    // SAFETY: the slots below each new length were carved from that
    // column's spare capacity, in order from its old length, and written
    // (the caller's promise), so each length stays within the capacity and
    // covers initialised values only.
    unsafe {
        columns.node_type.set_len(columns.node_type.len() + a);
        columns.node_name.set_len(columns.node_name.len() + b);
        columns.node_id.set_len(columns.node_id.len() + c);
        columns.self_size.set_len(columns.self_size.len() + d);
        columns.edge_count.set_len(columns.edge_count.len() + e);
        columns.detachedness.set_len(columns.detachedness.len() + f);
        columns.edge_type.set_len(columns.edge_type.len() + g);
        columns.edge_name.set_len(columns.edge_name.len() + h);
        columns.edge_to.set_len(columns.edge_to.len() + i);
    }
}
