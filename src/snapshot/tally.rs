//! The manual method's view of a diff (METHOD.md, step 5): counts and self sizes by type and name in
//! each snapshot, B minus A, largest self-size growth first.
//!
//! Two snapshots number their strings differently, so the earlier one is
//! kept as a tally by text (`TextTally`) and each row of the later one's
//! tally looks its name up there. The later snapshot has hundreds of
//! thousands of distinct names, many of them long string contents, so both
//! sides avoid per-name work that grows with the name's length: the later
//! tally is built on interned string ids (`raw_tally`), and the lookup key
//! is a fingerprint of the name's length, head and tail (`fingerprint`),
//! compared in full only when the fingerprints agree.

use std::hash::Hasher;

use rustc_hash::{FxHashMap as HashMap, FxHasher};
use serde::Serialize;

use super::graph::{HeapGraph, NodeType, StringId};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GrowthRow {
    /// `type:name`, as the method's comparison script prints it.
    pub key: String,
    pub count_delta: i64,
    pub self_size_delta: i64,
}

/// End of a chain in the index arrays below.
const NONE: u32 = u32::MAX;
/// Bytes of a name's head and of its tail that go into its fingerprint:
/// enough to tell apart `'x'.repeat(512) + i`-style names by their tails.
const FINGERPRINT_BYTES: usize = 32;

fn fingerprint(name: &[u8]) -> u64 {
    let mut hasher = FxHasher::default();
    hasher.write_usize(name.len());
    let edge = FINGERPRINT_BYTES.min(name.len());
    hasher.write(&name[..edge]);
    hasher.write(&name[name.len() - edge..]);
    hasher.finish()
}

/// One (type, name) of the earlier snapshot.
struct NamedRow {
    name: Box<[u8]>,
    kind: NodeType,
    count: i64,
    size: i64,
    /// Next row with the same fingerprint.
    next: u32,
}

/// The earlier snapshot's tally by text. Names are bytes, not `str`: the
/// lookups need no UTF-8 check.
#[derive(Default)]
pub struct TextTally {
    rows: Vec<NamedRow>,
    first: HashMap<u64, u32>,
}

impl TextTally {
    pub fn of(graph: &HeapGraph) -> TextTally {
        let mut tally = TextTally::default();
        for row in raw_tally(graph) {
            let name = graph.strings.bytes_of(StringId(row.name));
            let kind = graph.node_type_of_raw(row.kind);
            let print = fingerprint(name);
            match tally.find_by(print, name, kind) {
                // Several raw types can read as one NodeType.
                Some(i) => {
                    tally.rows[i].count += row.count;
                    tally.rows[i].size += row.size;
                }
                None => {
                    let head = tally.first.entry(print).or_insert(NONE);
                    tally.rows.push(NamedRow {
                        name: name.into(),
                        kind,
                        count: row.count,
                        size: row.size,
                        next: *head,
                    });
                    *head = (tally.rows.len() - 1) as u32;
                }
            }
        }
        tally
    }

    fn find(&self, name: &[u8], kind: NodeType) -> Option<usize> {
        self.find_by(fingerprint(name), name, kind)
    }

    fn find_by(&self, print: u64, name: &[u8], kind: NodeType) -> Option<usize> {
        let mut slot = *self.first.get(&print)?;
        while slot != NONE {
            let row = &self.rows[slot as usize];
            if row.kind == kind && *row.name == *name {
                return Some(slot as usize);
            }
            slot = row.next;
        }
        None
    }
}

/// One (raw type, name id) row of a graph's tally.
struct RawRow {
    kind: u8,
    name: u32,
    count: i64,
    size: i64,
}

/// Counts and self sizes per (raw type, name id), without hashing: V8
/// interns names, so a slot per string id finds a node's row, chained for
/// the rare name seen with several types. Hashing 650 000 nodes into a map
/// cost more than the rest of a diff of the demo's snapshot pair (9 + 59 MB) together.
fn raw_tally(graph: &HeapGraph) -> Vec<RawRow> {
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
    rows
}

/// `type:name` as the method's comparison script prints it: `object:Object`,
/// `concatenated string:(concatenated string)`.
fn key(kind: NodeType, name: &[u8]) -> String {
    format!("{}:{}", kind.v8_name(), String::from_utf8_lossy(name))
}

/// B's tally minus A's, the `top` rows that grew most by self size.
pub fn grew_by_self_size(a: &TextTally, b: &HeapGraph, top: usize) -> Vec<GrowthRow> {
    let mut matched = vec![false; a.rows.len()];
    let mut rows = raw_tally(b);
    for row in rows.iter_mut() {
        let kind = b.node_type_of_raw(row.kind);
        let name = b.strings.bytes_of(StringId(row.name));
        // Several raw types can read as one NodeType: subtract A once.
        if let Some(i) = a.find(name, kind).filter(|i| !matched[*i]) {
            matched[i] = true;
            row.count -= a.rows[i].count;
            row.size -= a.rows[i].size;
        }
    }
    // Hundreds of thousands of rows, often tied on size: select the top
    // rows first, and sort only those.
    let order = |x: &RawRow, y: &RawRow| {
        y.size
            .cmp(&x.size)
            .then((x.kind, x.name).cmp(&(y.kind, y.name)))
    };
    if rows.len() > top && top > 0 {
        rows.select_nth_unstable_by(top - 1, order);
        rows.truncate(top);
    }
    let gone = a.rows.iter().zip(&matched).filter(|(_, m)| !**m);
    let mut out: Vec<GrowthRow> = rows
        .into_iter()
        .map(|row| GrowthRow {
            key: key(
                b.node_type_of_raw(row.kind),
                b.strings.bytes_of(StringId(row.name)),
            ),
            count_delta: row.count,
            self_size_delta: row.size,
        })
        .chain(gone.map(|(row, _)| GrowthRow {
            key: key(row.kind, &row.name),
            count_delta: -row.count,
            self_size_delta: -row.size,
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
