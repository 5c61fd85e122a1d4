//! The streaming `.heapsnapshot` parser: one pass over the input, never
//! holding its text. The small `snapshot` header is parsed with serde_json;
//! `nodes` and `edges` go digit by digit into the columns of `HeapGraph`;
//! `strings` into one arena; everything else is skipped.
//!
//! Field layouts come from `snapshot.meta` (never assumed): a node field
//! order other than V8's current one still parses.

use std::io::Read;

use serde::Deserialize;

use super::edge_index::{Beside, check_names, finish, index_edges};
use super::error::{MAX_NODES, SnapshotParseError};
use super::records::{Columns, Records, Slot};
use super::scan::Scanner;
use super::shown::ShownStrings;
use crate::snapshot::graph::{EdgeType, HeapGraph, NodeType, Strings};

#[derive(Deserialize)]
struct Header {
    meta: Meta,
    node_count: Option<u64>,
    edge_count: Option<u64>,
}

#[derive(Deserialize)]
struct Meta {
    node_fields: Vec<String>,
    node_types: Vec<serde_json::Value>,
    edge_fields: Vec<String>,
    edge_types: Vec<serde_json::Value>,
}

/// Where each field sits in a node or edge record.
struct Layout {
    node_width: usize,
    node_type: usize,
    node_name: usize,
    node_id: usize,
    self_size: usize,
    edge_count: usize,
    detachedness: Option<usize>,
    edge_width: usize,
    edge_type: usize,
    edge_name: usize,
    edge_to: usize,
    node_types: Vec<NodeType>,
    edge_types: Vec<EdgeType>,
}

fn position(fields: &[String], name: &str, what: &str) -> Result<usize, SnapshotParseError> {
    fields.iter().position(|f| f == name).ok_or_else(|| {
        SnapshotParseError::Format(format!("snapshot.meta.{what} has no {name:?} field"))
    })
}

/// The type names of the `type` field: at its place in `types`, where the
/// layout puts it (V8 puts it first), or else the first list there (files
/// written by hand that list the types first whatever the order).
fn type_names(
    types: &[serde_json::Value],
    at: usize,
    what: &str,
) -> Result<Vec<String>, SnapshotParseError> {
    types
        .get(at)
        .and_then(|t| t.as_array())
        .or_else(|| types.iter().find_map(|t| t.as_array()))
        .map(|names| {
            names
                .iter()
                .map(|n| n.as_str().unwrap_or("").to_string())
                .collect()
        })
        .ok_or_else(|| {
            SnapshotParseError::Format(format!(
                "snapshot.meta.{what}[{at}] is not a list of type names"
            ))
        })
}

impl Layout {
    fn from_meta(meta: &Meta) -> Result<Layout, SnapshotParseError> {
        let nf = &meta.node_fields;
        let ef = &meta.edge_fields;
        let node_type = position(nf, "type", "node_fields")?;
        let edge_type = position(ef, "type", "edge_fields")?;
        Ok(Layout {
            node_width: nf.len(),
            node_type,
            node_name: position(nf, "name", "node_fields")?,
            node_id: position(nf, "id", "node_fields")?,
            self_size: position(nf, "self_size", "node_fields")?,
            edge_count: position(nf, "edge_count", "node_fields")?,
            detachedness: nf.iter().position(|f| f == "detachedness"),
            edge_width: ef.len(),
            edge_type,
            edge_name: position(ef, "name_or_index", "edge_fields")?,
            edge_to: position(ef, "to_node", "edge_fields")?,
            node_types: type_names(&meta.node_types, node_type, "node_types")?
                .iter()
                .map(|n| NodeType::from_name(n))
                .collect(),
            edge_types: type_names(&meta.edge_types, edge_type, "edge_types")?
                .iter()
                .map(|n| EdgeType::from_name(n))
                .collect(),
        })
    }
}

/// Nodes and edges reserved up front when the input's size is unknown (a
/// stream from the inspector): the columns grow past it as needed. A
/// million nodes is a 100 MB snapshot's worth, about 20 MB of columns.
const UNSIZED_RESERVE: u64 = 1 << 20;

/// How many records the header's count may reserve: never more than the
/// bytes left could hold, each record being at least `width` numbers of
/// two bytes ("0,"). A header that claims 2^40 nodes in a 1 KB file then
/// reserves nothing, instead of gigabytes.
fn reservable(claimed: u64, width: usize, bytes_left: Option<u64>) -> usize {
    let bound = match bytes_left {
        Some(left) => left / (2 * width.max(1) as u64),
        None => UNSIZED_RESERVE,
    };
    claimed.min(bound) as usize
}

/// Parses a snapshot from any reader of unknown size.
pub fn parse<R: Read>(reader: R) -> Result<HeapGraph, SnapshotParseError> {
    parse_sized(reader, None)
}

/// Parses a snapshot of `total_bytes` (a file's length), which bounds what
/// the header's counts may reserve.
pub fn parse_sized<R: Read>(
    reader: R,
    total_bytes: Option<u64>,
) -> Result<HeapGraph, SnapshotParseError> {
    parse_with(reader, total_bytes, ParseOptions::default())
}

/// `parse_sized` with a choice of threads.
pub fn parse_with<R: Read>(
    reader: R,
    total_bytes: Option<u64>,
    options: ParseOptions,
) -> Result<HeapGraph, SnapshotParseError> {
    let mut scan = Scanner::new(reader);
    let mut graph = HeapGraph::default();
    let mut layout: Option<Layout> = None;
    let mut edge_counts: Vec<u32> = Vec::new();
    let (mut node_reserve, mut edge_reserve) = (0, 0);
    // The edges indexed and the names checked beside the strings.
    let mut beside = None;
    let mut seen_nodes = false;
    let mut seen_edges = false;
    let mut seen_strings = false;
    let mut key = Vec::new();
    scan.expect(b'{')?;
    if !scan.eat(b'}')? {
        loop {
            key.clear();
            scan.string_into(&mut key)?;
            scan.expect(b':')?;
            match key.as_slice() {
                b"snapshot" => {
                    let at = scan.offset();
                    let mut raw = Vec::new();
                    scan.skip_value(Some(&mut raw))?;
                    let header: Header =
                        serde_json::from_slice(&raw).map_err(|e| SnapshotParseError::Syntax {
                            offset: at,
                            expected: format!("a valid \"snapshot\" header ({e})"),
                        })?;
                    let parsed = Layout::from_meta(&header.meta)?;
                    let left = total_bytes.map(|t| t.saturating_sub(scan.offset()));
                    if let Some(n) = header.node_count {
                        node_reserve = reservable(n, parsed.node_width, left);
                    }
                    if let Some(e) = header.edge_count {
                        edge_reserve = reservable(e, parsed.edge_width, left);
                    }
                    layout = Some(parsed);
                }
                b"nodes" => {
                    let l = layout
                        .as_ref()
                        .ok_or_else(|| scan.error("\"snapshot\" (with meta) before \"nodes\""))?;
                    let _p = crate::snapshot::phases::Phase::start("nodes");
                    edge_counts = read_nodes(&mut scan, l, &mut graph, node_reserve, options)?;
                    seen_nodes = true;
                }
                b"edges" => {
                    let l = layout
                        .as_ref()
                        .ok_or_else(|| scan.error("\"snapshot\" (with meta) before \"edges\""))?;
                    if !seen_nodes {
                        return Err(scan.error("\"nodes\" before \"edges\""));
                    }
                    let _p = crate::snapshot::phases::Phase::start("edges");
                    read_edges(&mut scan, l, &mut graph, edge_reserve, options)?;
                    seen_edges = true;
                }
                b"strings" => {
                    let strings_start = scan.offset();
                    let left = total_bytes.map(|t| t.saturating_sub(scan.offset()));
                    let only_shown =
                        (options.only_shown_strings && seen_edges).then(|| most_strings(left));
                    let _p = crate::snapshot::phases::Phase::start("strings and edge index");
                    if options.threads > 1 && seen_edges && beside.is_none() {
                        beside = Some(read_strings_beside_index(
                            &mut scan,
                            &mut graph,
                            std::mem::take(&mut edge_counts),
                            only_shown,
                        )?);
                    } else {
                        let shown = shown_strings(&graph, only_shown);
                        read_strings(&mut scan, &mut graph.strings, shown.as_ref())?;
                    }
                    graph.strings_span = (strings_start, scan.offset());
                    seen_strings = true;
                }
                _ => scan.skip_value(None)?,
            }
            if scan.eat(b',')? {
                continue;
            }
            scan.expect(b'}')?;
            break;
        }
    }
    for (present, name) in [
        (layout.is_some(), "snapshot"),
        (seen_nodes, "nodes"),
        (seen_edges, "edges"),
        (seen_strings, "strings"),
    ] {
        if !present {
            return Err(SnapshotParseError::Format(format!(
                "the file has no \"{name}\" section; is it a V8 .heapsnapshot?"
            )));
        }
    }
    graph.file_bytes = scan.consumed;
    let _p = crate::snapshot::phases::Phase::start("finish");
    finish(&mut graph, edge_counts, beside)?;
    Ok(graph)
}

/// How to parse: threads for the two large arrays and their block size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParseOptions {
    /// 1 scans the arrays on the reading thread itself.
    pub threads: usize,
    /// Bytes of array text per block (tests make it small to cut the
    /// arrays in many places).
    pub block_size: usize,
    /// Keep only the strings something other than a string's value names
    /// (`shown.rs`); the others read as empty. For `inspect`, which prints
    /// no string's value.
    pub only_shown_strings: bool,
    /// Tests only: the arrays read by the one-pass reference scanner.
    #[cfg(test)]
    pub one_pass: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            block_size: super::blocks::BLOCK,
            only_shown_strings: false,
            #[cfg(test)]
            one_pass: false,
        }
    }
}

/// Scans one of the two large arrays into columns.
fn read_array<R: Read>(
    scan: &mut Scanner<R>,
    records: &Records,
    reserve: usize,
    options: ParseOptions,
) -> Result<(Columns, u64), SnapshotParseError> {
    #[cfg(test)]
    if options.one_pass {
        return read_array_in_one_pass(scan, records, reserve);
    }
    super::blocks::scan_array(scan, records, reserve, options.threads, options.block_size)
}

/// The reference the block scanner is tested against: number by number,
/// each stored as it is read.
#[cfg(test)]
fn read_array_in_one_pass<R: Read>(
    scan: &mut Scanner<R>,
    records: &Records,
    reserve: usize,
) -> Result<(Columns, u64), SnapshotParseError> {
    let mut columns = Columns::with_capacity(records, reserve);
    let width = records.width();
    let mut field = 0usize;
    let mut index = 0u64;
    let count = scan.uint_array(|v| {
        columns.store(records, field, v, index)?;
        index += 1;
        field += 1;
        if field == width {
            field = 0;
        }
        Ok(())
    })?;
    Ok((columns, count))
}

fn read_nodes<R: Read>(
    scan: &mut Scanner<R>,
    l: &Layout,
    graph: &mut HeapGraph,
    reserve: usize,
    options: ParseOptions,
) -> Result<Vec<u32>, SnapshotParseError> {
    graph.node_type_table = l.node_types.clone();
    let mut slots = vec![Slot::Ignored; l.node_width];
    slots[l.node_type] = Slot::NodeType;
    slots[l.node_name] = Slot::NodeName;
    slots[l.node_id] = Slot::NodeId;
    slots[l.self_size] = Slot::SelfSize;
    slots[l.edge_count] = Slot::EdgeCount;
    if let Some(d) = l.detachedness {
        slots[d] = Slot::Detachedness;
    }
    let records = Records {
        slots,
        node_width: l.node_width as u64,
        node_numbers: 0,
    };
    let (columns, count) = read_array(scan, &records, reserve, options)?;
    if count / l.node_width as u64 >= MAX_NODES {
        return Err(SnapshotParseError::Format(format!(
            "\"nodes\" holds {} nodes; at most 2^31 are supported",
            count / l.node_width as u64
        )));
    }
    if count % l.node_width as u64 != 0 {
        return Err(SnapshotParseError::Format(format!(
            "\"nodes\" holds {count} numbers, not a multiple of the {} node fields",
            l.node_width
        )));
    }
    graph.node_type = columns.node_type;
    graph.node_name = columns.node_name;
    graph.node_id = columns.node_id;
    graph.self_size = columns.self_size;
    graph.detachedness = columns.detachedness;
    Ok(columns.edge_count)
}

fn read_edges<R: Read>(
    scan: &mut Scanner<R>,
    l: &Layout,
    graph: &mut HeapGraph,
    reserve: usize,
    options: ParseOptions,
) -> Result<(), SnapshotParseError> {
    graph.edge_type_table = l.edge_types.clone();
    let mut slots = vec![Slot::Ignored; l.edge_width];
    slots[l.edge_type] = Slot::EdgeType;
    slots[l.edge_name] = Slot::EdgeName;
    slots[l.edge_to] = Slot::EdgeTo;
    let records = Records {
        slots,
        node_width: l.node_width as u64,
        node_numbers: graph.node_id.len() as u64 * l.node_width as u64,
    };
    let (columns, count) = read_array(scan, &records, reserve, options)?;
    if count % l.edge_width as u64 != 0 {
        return Err(SnapshotParseError::Format(format!(
            "\"edges\" holds {count} numbers, not a multiple of the {} edge fields",
            l.edge_width
        )));
    }
    graph.edge_type = columns.edge_type;
    graph.edge_name = columns.edge_name;
    graph.edge_to = columns.edge_to;
    Ok(())
}

/// The strings to keep, when only those are kept (`ParseOptions`).
/// The strings to keep (`shown.rs`) when only those are asked for: then
/// `only_shown` holds the most strings the rest of the input can hold.
fn shown_strings(graph: &HeapGraph, only_shown: Option<u32>) -> Option<ShownStrings> {
    only_shown.map(|most| {
        let _p = crate::snapshot::phases::Phase::start("strings shown");
        ShownStrings::of(graph, most)
    })
}

/// The most strings `bytes_left` of input can hold (each takes at least
/// its two quotes): no string id from here up can be valid. Unbounded for
/// a stream of unknown size.
fn most_strings(bytes_left: Option<u64>) -> u32 {
    bytes_left.map_or(u32::MAX, |left| {
        u32::try_from(left / 2 + 1).unwrap_or(u32::MAX)
    })
}

/// Reads the string table; with `shown`, the strings it does not hold are
/// kept empty (their ids and the count stay as in the file).
fn read_strings<R: Read>(
    scan: &mut Scanner<R>,
    strings: &mut Strings,
    shown: Option<&ShownStrings>,
) -> Result<(), SnapshotParseError> {
    strings.starts.push(0);
    let starts = &mut strings.starts;
    scan.string_array(&mut strings.bytes, |bytes| {
        let id = starts.len() - 1;
        if shown.is_some_and(|shown| !shown.contains(id)) {
            // The last start is where this string began.
            bytes.truncate(starts[id] as usize);
        }
        let end = u32::try_from(bytes.len()).map_err(|_| {
            SnapshotParseError::Format("the strings add up to more than 4 GiB".into())
        })?;
        starts.push(end);
        Ok(())
    })
}

/// Reads the strings while another core indexes the edges; the index's
/// and the names' outcomes are returned for `finish` to report in its
/// usual order. With `only_shown` (the most strings the input can hold),
/// the strings to keep are marked on this thread first, already beside
/// the index (the longer of the two).
fn read_strings_beside_index<R: Read>(
    scan: &mut Scanner<R>,
    graph: &mut HeapGraph,
    edge_counts: Vec<u32>,
    only_shown: Option<u32>,
) -> Result<Beside, SnapshotParseError> {
    let mut strings = std::mem::take(&mut graph.strings);
    let graph_read = &*graph;
    let (read, index) = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let _p = crate::snapshot::phases::Phase::start("index edges (beside strings)");
            index_edges(graph_read, edge_counts)
        });
        let shown = shown_strings(graph_read, only_shown);
        let p = crate::snapshot::phases::Phase::start("strings read");
        let read = read_strings(scan, &mut strings, shown.as_ref())
            .map(|()| check_names(graph_read, strings.len() as u32));
        drop(p);
        (read, worker.join())
    });
    graph.strings = strings;
    let names = read?;
    let index = index.unwrap_or_else(|_| {
        Err(SnapshotParseError::Format(
            "the thread indexing the edges stopped unexpectedly".into(),
        ))
    });
    Ok(Beside { index, names })
}

#[cfg(test)]
mod reserve_tests {
    use super::*;

    #[test]
    fn a_header_cannot_reserve_more_than_the_file_holds() {
        // 1 KB left, 7 fields a node: at most 73 nodes fit.
        assert_eq!(reservable(1 << 40, 7, Some(1024)), 73);
        assert_eq!(reservable(10, 7, Some(1 << 30)), 10);
        assert_eq!(reservable(1 << 40, 3, None), UNSIZED_RESERVE as usize);
    }

    #[test]
    fn a_lying_header_in_a_small_file_parses_to_its_real_size() {
        let text = r#"{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],
            "node_types":[["synthetic","object"]],"edge_fields":["type","name_or_index","to_node"],
            "edge_types":[["element","property"]]},"node_count":1099511627776,"edge_count":1099511627776},
            "nodes":[0,0,1,0,0],"edges":[],"strings":[""]}"#;
        let graph = parse_sized(text.as_bytes(), Some(text.len() as u64)).unwrap();
        assert_eq!(graph.node_count(), 1);
        assert!(
            graph.node_id.capacity() < 1024,
            "{}",
            graph.node_id.capacity()
        );
    }
}
