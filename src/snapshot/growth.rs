//! B's tally minus A's (`tally.rs`), the rows that grew most by self size.
//!
//! A row of B is found in A by its text. The later snapshot has hundreds
//! of thousands of rows, many named by long string contents, and only the
//! top few are printed; so the rows are looked up in order of their size
//! in B, largest first, and the lookups stop once no row left can reach
//! the top: a row's growth is at most its size in B (sizes are never
//! negative), so when the k-th largest growth found so far is at least the
//! size of every row not yet looked up, the top k are known. This prunes
//! the search the way a top-k query over an upper bound does (Fagin's
//! threshold algorithm, with B's size as the bound). When it cannot
//! decide — the k-th growth is not positive, so rows only in A (negative
//! growth) might enter the top — every row is looked up, as before.
//!
//! Lookups compare a fingerprint of the name's length, head and tail
//! (`fingerprint`) first, and the full text only when the fingerprints
//! agree.

use std::cmp::{Ordering, Reverse};
use std::hash::Hasher;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet, FxHasher};
use serde::Serialize;

use super::graph::{HeapGraph, NodeType, StringId};
use super::tally::{EarlierTally, NONE, RawTally, raw_tally};

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct GrowthRow {
    /// `type:name`, as the method's comparison script prints it.
    pub key: String,
    pub count_delta: i64,
    pub self_size_delta: i64,
}

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

/// Rows of B looked up first: the largest by size, this many per row asked
/// for (and at least `MIN_FIRST_LOOKUPS`). Growth is usually most of a
/// large row's size, so these nearly always hold the top.
const FIRST_LOOKUPS_PER_ROW: usize = 4;
const MIN_FIRST_LOOKUPS: usize = 64;

/// A row of B (its index in the tally) with A's figures subtracted.
#[derive(Clone, Copy)]
struct Delta {
    row: u32,
    count: i64,
    size: i64,
}

/// `type:name` as the method's comparison script prints it: `object:Object`,
/// `concatenated string:(concatenated string)`.
fn key(kind: NodeType, name: &[u8]) -> String {
    format!("{}:{}", kind.v8_name(), String::from_utf8_lossy(name))
}

/// B's tally minus A's, the `top` rows that grew most by self size.
pub fn grew_by_self_size(a: &EarlierTally, b: &HeapGraph, top: usize) -> Vec<GrowthRow> {
    let tally = raw_tally(b);
    let rows = match top_by_threshold(a, b, &tally, top) {
        Some(deltas) => deltas.iter().map(|d| growth_row(b, &tally, d)).collect(),
        None => every_row(a, b, tally, top),
    };
    sorted_top(rows, top)
}

/// The printed row of a row of B.
fn growth_row(b: &HeapGraph, tally: &RawTally, d: &Delta) -> GrowthRow {
    let row = &tally.rows[d.row as usize];
    GrowthRow {
        key: key(
            b.node_type_of_raw(row.kind),
            b.strings.bytes_of(StringId(row.name)),
        ),
        count_delta: d.count,
        self_size_delta: d.size,
    }
}

fn sorted_top(mut rows: Vec<GrowthRow>, top: usize) -> Vec<GrowthRow> {
    rows.sort_by(|x, y| {
        y.self_size_delta
            .cmp(&x.self_size_delta)
            .then_with(|| x.key.cmp(&y.key))
    });
    rows.truncate(top);
    rows
}

/// The order rows are selected in: growth, then type and name id.
fn by_growth(tally: &RawTally, x: &Delta, y: &Delta) -> Ordering {
    let (rx, ry) = (&tally.rows[x.row as usize], &tally.rows[y.row as usize]);
    y.size
        .cmp(&x.size)
        .then((rx.kind, rx.name).cmp(&(ry.kind, ry.name)))
}

/// The top `top` rows of B, looking up only the rows that can reach it;
/// `None` when the top might hold rows only in A (see the module's doc).
fn top_by_threshold(
    a: &EarlierTally,
    b: &HeapGraph,
    tally: &RawTally,
    top: usize,
) -> Option<Vec<Delta>> {
    let n = tally.rows.len();
    if top == 0 || n <= top {
        return None;
    }
    let size = |r: u32| tally.rows[r as usize].size;
    let first = (top * FIRST_LOOKUPS_PER_ROW).max(MIN_FIRST_LOOKUPS).min(n);
    let mut by_size: Vec<u32> = (0..n as u32).collect();
    by_size.select_nth_unstable_by_key(first - 1, |r| Reverse(size(*r)));
    // Every row at least this large in B has been looked up.
    let mut bound = size(by_size[first - 1]);
    let mut batch: Vec<u32> = (0..n as u32).filter(|r| size(*r) >= bound).collect();
    let mut looked: Vec<Delta> = Vec::new();
    loop {
        looked.extend(deltas(a, b, tally, &batch));
        looked.sort_by(|x, y| by_growth(tally, x, y));
        let kth = looked.get(top - 1)?.size;
        if kth <= 0 {
            return None;
        }
        if kth >= bound {
            looked.truncate(top);
            return Some(looked);
        }
        // Rows between the k-th growth and the bound may still enter.
        batch = (0..n as u32)
            .filter(|r| (kth..bound).contains(&size(*r)))
            .collect();
        bound = kth;
    }
}

/// `rows` of B with A's figures subtracted. A's row goes to the first row
/// of B (in tally order) of its type and name, as in `every_row`.
fn deltas(a: &EarlierTally, b: &HeapGraph, tally: &RawTally, rows: &[u32]) -> Vec<Delta> {
    let kind_of = |r: u32| b.node_type_of_raw(tally.rows[r as usize].kind);
    let name_of = |r: u32| b.strings.bytes_of(StringId(tally.rows[r as usize].name));
    let is_first = |r: u32| {
        let mut other = tally.head[tally.rows[r as usize].name as usize];
        while other != NONE {
            if other < r && kind_of(other) == kind_of(r) {
                return false;
            }
            other = tally.next[other as usize];
        }
        true
    };
    let mut out: Vec<Delta> = rows
        .iter()
        .map(|&r| Delta {
            row: r,
            count: tally.rows[r as usize].count,
            size: tally.rows[r as usize].size,
        })
        .collect();
    // The names wanted, by fingerprint; A's rows are scanned once for them,
    // and only rows of a wanted length are fingerprinted.
    let mut wanted: HashMap<u64, Vec<usize>> = HashMap::default();
    let mut lengths: HashSet<usize> = HashSet::default();
    for (i, d) in out.iter().enumerate() {
        if is_first(d.row) {
            let name = name_of(d.row);
            wanted.entry(fingerprint(name)).or_default().push(i);
            lengths.insert(name.len());
        }
    }
    for row in &a.rows {
        let name = a.name(row);
        if !lengths.contains(&name.len()) {
            continue;
        }
        let Some(found) = wanted.get(&fingerprint(name)) else {
            continue;
        };
        for &i in found {
            let r = out[i].row;
            if kind_of(r) == row.kind && name_of(r) == name {
                out[i].count -= row.count;
                out[i].size -= row.size;
            }
        }
    }
    out
}

/// One (type, name) of the earlier snapshot, its raw rows merged.
struct NamedRow<'a> {
    name: &'a [u8],
    kind: NodeType,
    count: i64,
    size: i64,
    /// Next row with the same fingerprint.
    next: u32,
}

/// Every row of B looked up in an index of A by text; A's rows that no
/// row of B matched follow as negative rows.
fn every_row(a: &EarlierTally, b: &HeapGraph, tally: RawTally, top: usize) -> Vec<GrowthRow> {
    let mut named: Vec<NamedRow> = Vec::new();
    let mut first: HashMap<u64, u32> = HashMap::default();
    let find = |named: &[NamedRow], first: &HashMap<u64, u32>, print, name: &[u8], kind| {
        let mut slot = *first.get(&print)?;
        while slot != NONE {
            let row = &named[slot as usize];
            if row.kind == kind && row.name == name {
                return Some(slot as usize);
            }
            slot = row.next;
        }
        None
    };
    for row in &a.rows {
        let name = a.name(row);
        let print = fingerprint(name);
        // Several raw types can read as one NodeType.
        match find(&named, &first, print, name, row.kind) {
            Some(i) => {
                named[i].count += row.count;
                named[i].size += row.size;
            }
            None => {
                let head = first.entry(print).or_insert(NONE);
                named.push(NamedRow {
                    name,
                    kind: row.kind,
                    count: row.count,
                    size: row.size,
                    next: *head,
                });
                *head = (named.len() - 1) as u32;
            }
        }
    }
    let mut matched = vec![false; named.len()];
    let mut rows: Vec<Delta> = Vec::with_capacity(tally.rows.len());
    for (r, row) in tally.rows.iter().enumerate() {
        let kind = b.node_type_of_raw(row.kind);
        let name = b.strings.bytes_of(StringId(row.name));
        let mut delta = Delta {
            row: r as u32,
            count: row.count,
            size: row.size,
        };
        // Several raw types can read as one NodeType: subtract A once.
        let found = find(&named, &first, fingerprint(name), name, kind);
        if let Some(i) = found.filter(|i| !matched[*i]) {
            matched[i] = true;
            delta.count -= named[i].count;
            delta.size -= named[i].size;
        }
        rows.push(delta);
    }
    // Hundreds of thousands of rows, often tied on size: select the top
    // rows first, and sort only those.
    if rows.len() > top && top > 0 {
        rows.select_nth_unstable_by(top - 1, |x, y| by_growth(&tally, x, y));
        rows.truncate(top);
    }
    let gone = named.iter().zip(&matched).filter(|(_, m)| !**m);
    rows.iter()
        .map(|d| growth_row(b, &tally, d))
        .chain(gone.map(|(row, _)| GrowthRow {
            key: key(row.kind, row.name),
            count_delta: -row.count,
            self_size_delta: -row.size,
        }))
        .collect()
}

#[cfg(test)]
#[path = "growth_tests.rs"]
mod tests;
