//! The block scanner, on one thread or many, against the one-pass
//! reference scanner: the same columns, and the same error at the same
//! byte, wherever the blocks and their pieces cut.

use super::super::{ParseOptions, parse_with};
use crate::snapshot::{HeapGraph, SnapshotParseError};

/// A V8-shaped snapshot: seven node fields with detachedness, one record
/// per line as V8 writes it, and edges of every kind.
fn snapshot(nodes: usize) -> String {
    snapshot_of(nodes, &NODE_FIELDS)
}

/// V8's node fields, in its order.
const NODE_FIELDS: [&str; 7] = [
    "type",
    "name",
    "id",
    "self_size",
    "edge_count",
    "trace_node_id",
    "detachedness",
];

/// A snapshot whose nodes have `fields` (V8's names, in any order, any
/// of the last two left out).
fn snapshot_of(nodes: usize, fields: &[&str]) -> String {
    let width = fields.len();
    let mut node_text = Vec::new();
    let mut edge_text = Vec::new();
    for i in 0..nodes {
        let edges = if i + 1 < nodes { 2 } else { 0 };
        let record: Vec<String> = fields
            .iter()
            .map(|field| match *field {
                "type" => i % 4,
                "name" => i % 5,
                "id" => i * 2 + 1,
                "self_size" => 10 + i % 97,
                "edge_count" => edges,
                "trace_node_id" => 0,
                _ => i % 3,
            })
            .map(|v| v.to_string())
            .collect();
        node_text.push(record.join(","));
        if edges > 0 {
            edge_text.push(format!("2,{},{}", i % 5, (i + 1) * width));
            edge_text.push(format!("1,{},{}", i, ((i * 7919) % nodes) * width));
        }
    }
    let quoted: Vec<String> = fields.iter().map(|f| format!("\"{f}\"")).collect();
    let types: Vec<&str> = fields
        .iter()
        .map(|f| match *f {
            "type" => r#"["hidden","array","string","object"]"#,
            "name" => r#""string""#,
            _ => r#""number""#,
        })
        .collect();
    format!(
        r#"{{"snapshot":{{"meta":{{"node_fields":[{}],
"node_types":[{}],
"edge_fields":["type","name_or_index","to_node"],"edge_types":[["context","element","property","internal"],"string_or_number","node"]}},
"node_count":{nodes},"edge_count":{}}},
"nodes":[{}],
"edges":[{}],
"strings":["","a","b","c","d"]}}"#,
        quoted.join(","),
        types.join(","),
        edge_text.len(),
        node_text.join("\n,"),
        edge_text.join("\n,")
    )
}

fn parse(text: &str, threads: usize, block_size: usize) -> Result<HeapGraph, SnapshotParseError> {
    let options = ParseOptions {
        threads,
        block_size,
        ..ParseOptions::default()
    };
    parse_with(text.as_bytes(), Some(text.len() as u64), options)
}

/// The arrays read number by number by the reference scanner.
fn one_pass(text: &str) -> Result<HeapGraph, SnapshotParseError> {
    let options = ParseOptions {
        threads: 1,
        one_pass: true,
        ..ParseOptions::default()
    };
    parse_with(text.as_bytes(), Some(text.len() as u64), options)
}

fn assert_same(a: &HeapGraph, b: &HeapGraph) {
    assert_eq!(a.node_type, b.node_type);
    assert_eq!(a.node_name, b.node_name);
    assert_eq!(a.node_id, b.node_id);
    assert_eq!(a.self_size, b.self_size);
    assert_eq!(a.detachedness, b.detachedness);
    assert_eq!(a.first_edge, b.first_edge);
    assert_eq!(a.edge_type, b.edge_type);
    assert_eq!(a.edge_name, b.edge_name);
    assert_eq!(a.edge_to, b.edge_to);
    assert_eq!(a.first_retainer, b.first_retainer);
    assert_eq!(a.retainers, b.retainers);
    assert_eq!(a.file_bytes, b.file_bytes);
}

#[test]
fn every_cut_gives_the_columns_of_one_pass() {
    let text = snapshot(600);
    let one = one_pass(&text).unwrap();
    assert_eq!(one.node_count(), 600);
    for threads in [1, 2, 3, 8] {
        for block in [1, 2, 7, 13, 64, 1000] {
            let many = parse(&text, threads, block).unwrap();
            assert_same(&one, &many);
        }
    }
}

#[test]
fn blocks_read_straight_from_the_input_give_the_same_columns() {
    // Megabyte blocks: the scanner reads the array text straight into them.
    let text = snapshot(60_000);
    assert!(text.len() > 2 << 20, "{}", text.len());
    let one = one_pass(&text).unwrap();
    assert_same(&one, &parse(&text, 2, 1 << 20).unwrap());
    assert_same(&one, &parse(&text, 1, 1 << 20).unwrap());
    let cut = &text[..text.find("\"strings\"").unwrap() - 40];
    let one = one_pass(cut).expect_err("truncated").to_string();
    assert_eq!(
        one,
        parse(cut, 2, 1 << 20).expect_err("truncated").to_string()
    );
}

#[test]
fn errors_name_the_same_byte_on_one_thread_and_many() {
    let text = snapshot(300);
    let edges = text.find("\"edges\"").unwrap();
    let cases = [
        // A letter inside the edges.
        format!("{}x{}", &text[..edges + 500], &text[edges + 501..]),
        // A number past 2^63 in the nodes.
        text.replacen("\"nodes\":[", "\"nodes\":[99999999999999999999,", 1),
        // A comma with no number before the `]`.
        text.replacen("],\n\"strings\"", ",],\n\"strings\"", 1),
        // An edge that points into the middle of a node.
        text.replacen("\"edges\":[2,0,7", "\"edges\":[2,0,8", 1),
        // A newline where a comma was due.
        text.replacen("\n,", "\n5", 40),
        // Cut inside the edges: truncated.
        text[..edges + 777].to_string(),
    ];
    for (i, bad) in cases.iter().enumerate() {
        assert_ne!(bad, &text, "case {i} changed nothing");
        let one = one_pass(bad).expect_err("an error").to_string();
        for (threads, block) in [(2, 3), (2, 64), (2, 4096), (1, 64), (1, 4096)] {
            let many = parse(bad, threads, block)
                .expect_err("an error")
                .to_string();
            assert_eq!(one, many, "case {i}, {threads} threads, blocks of {block}");
        }
    }
}

#[test]
fn names_past_the_strings_are_refused_alike_on_one_thread_and_many() {
    // With threads the names are checked beside the edge index, once the
    // strings are read; the errors and their order stay the one thread's.
    let text = snapshot(300);
    let strings = "\"strings\":[\"\",\"a\",\"b\",\"c\",\"d\"]";
    assert!(text.contains(strings));
    let node_name = text.replacen(strings, "\"strings\":[\"\",\"a\",\"b\"]", 1);
    let edge_name = text.replacen("\"edges\":[2,0,7", "\"edges\":[2,99,7", 1);
    // Both a wrong edge count (the index's error) and a name past the
    // strings: the index's error is reported first.
    let both = node_name.replacen("\"nodes\":[0,0,1,10,2", "\"nodes\":[0,0,1,10,3", 1);
    let cases = [
        (
            node_name,
            "a node name points to string 3, past the 3 strings",
        ),
        (edge_name, "edge 0 names string 99, past the 5 strings"),
        (both, "edge counts add up to"),
    ];
    for (i, (bad, expected)) in cases.iter().enumerate() {
        assert_ne!(bad, &text, "case {i} changed nothing");
        for threads in [1, 2] {
            let error = parse(bad, threads, 64).expect_err("an error").to_string();
            assert!(
                error.contains(expected),
                "case {i}, {threads} threads: {error}"
            );
        }
    }
}

#[test]
fn an_empty_array_and_whitespace_runs_parse_alike() {
    let text = snapshot(1).replace("\"edges\":[]", "\"edges\":[ \n ]");
    let spaced = snapshot(50).replace("\n,", &format!("{},", " ".repeat(300)));
    // A newline not followed by its comma leaves the fast path.
    let newline_space = snapshot(200).replace("\n,", "\n ,");
    for text in [text, spaced, newline_space] {
        let one = one_pass(&text).unwrap();
        for block in [1, 5, 200, 4096] {
            assert_same(&one, &parse(&text, 2, block).unwrap());
            assert_same(&one, &parse(&text, 1, block).unwrap());
        }
    }
}

#[test]
fn columns_grow_when_the_header_does_not_say_how_many() {
    // No counts in the header: the columns start empty and grow stretch by
    // stretch (the blocks in flight finished before each growth), as for
    // a snapshot streamed from the inspector.
    let text = snapshot(3000);
    let uncounted = text.replace(
        &format!(",\n\"node_count\":3000,\"edge_count\":{}", 2 * 2999),
        "",
    );
    assert!(
        !uncounted.contains("\"node_count\""),
        "{}",
        &uncounted[..400]
    );
    let one = one_pass(&uncounted).unwrap();
    assert_eq!(one.node_count(), 3000);
    for (threads, block) in [(2, 7), (2, 64), (2, 4096), (1, 64)] {
        let options = ParseOptions {
            threads,
            block_size: block,
            ..ParseOptions::default()
        };
        let many = parse_with(uncounted.as_bytes(), None, options).unwrap();
        assert_same(&one, &many);
    }
}

#[test]
fn every_node_layout_gives_the_columns_of_one_pass() {
    // V8's layouts of 5, 6 and 7 fields take the records' fast path
    // (`fused.rs`); another order takes the two-pass one. Both must fill
    // what the reference scanner fills.
    let layouts: [&[&str]; 4] = [
        &NODE_FIELDS[..5],
        &NODE_FIELDS[..6],
        &NODE_FIELDS,
        &["id", "type", "edge_count", "name", "self_size"],
    ];
    for fields in layouts {
        let text = snapshot_of(2000, fields);
        let one = one_pass(&text).unwrap();
        assert_eq!(one.node_count(), 2000, "{fields:?}");
        for (threads, block) in [(1, 64), (2, 333), (2, 4096), (1, 1 << 20)] {
            assert_same(&one, &parse(&text, threads, block).unwrap());
        }
    }
}

#[test]
fn irregular_records_deep_in_a_block_leave_the_fast_path_alike() {
    // Each change sits far from any block's start, where the records'
    // fast path is running: it must stop at that record and leave it,
    // and the rest, to the two-pass path, which stores or refuses it as
    // the reference scanner does.
    let text = snapshot(3000);
    let nodes = text.find("\"nodes\":[").unwrap();
    let edges = text.find("\"edges\":[").unwrap();
    let node_at = |k: usize| nodes + text[nodes..].match_indices("\n,").nth(k).unwrap().0 + 2;
    let edge_at = |k: usize| edges + text[edges..].match_indices("\n,").nth(k).unwrap().0 + 2;
    let record_at = |at: usize| {
        let end = at + text[at..].find("\n,").unwrap();
        (at, end)
    };
    let replace_record = |at: usize, record: &str| {
        let (start, end) = record_at(at);
        format!("{}{record}{}", &text[..start], &text[end..])
    };
    let n = node_at(2100);
    // An even edge: a property, named by a string.
    let e = edge_at(3099);
    // The text with field `field` of the record at `at` set to `value`.
    let with_field = |at: usize, field: usize, value: &str| {
        let (start, end) = record_at(at);
        let mut fields: Vec<&str> = text[start..end].split(',').collect();
        fields[field] = value;
        replace_record(at, &fields.join(","))
    };
    let node_with = |field, value| with_field(n, field, value);
    let edge_with = |field, value| with_field(e, field, value);
    let ok = [
        // Saturated or clamped, not refused.
        node_with(3, "1099511627776"),
        node_with(0, "1000"),
        node_with(6, "300"),
        edge_with(0, "4096"),
        // Spaces: the two-pass path reads them.
        node_with(1, " 3"),
        edge_with(1, "2 "),
    ];
    let refused = [
        // Past 32 bits: refused, with the reference's words.
        node_with(1, "4294967296"),
        node_with(2, "4294967296"),
        node_with(4, "4294967296"),
        edge_with(1, "4294967296"),
        // Into the middle of a node, and past the last one.
        edge_with(2, "15"),
        edge_with(2, "21007"),
        // Past 2^63, and a letter in the last field of a record.
        edge_with(2, "99999999999999999999"),
        node_with(6, "1x"),
    ];
    for (i, changed) in ok.iter().enumerate() {
        assert_ne!(changed, &text, "ok case {i} changed nothing");
        let one = one_pass(changed).unwrap();
        for (threads, block) in [(1, 4096), (2, 4096), (2, 1 << 20)] {
            assert_same(&one, &parse(changed, threads, block).unwrap());
        }
    }
    for (i, changed) in refused.iter().enumerate() {
        assert_ne!(changed, &text, "refused case {i} changed nothing");
        let one = one_pass(changed).expect_err("an error").to_string();
        for (threads, block) in [(1, 4096), (2, 4096), (2, 1 << 20)] {
            let many = parse(changed, threads, block)
                .expect_err("an error")
                .to_string();
            assert_eq!(
                one, many,
                "refused case {i}, {threads} threads, blocks of {block}"
            );
        }
    }
}

#[test]
fn a_name_past_every_string_is_refused_when_only_shown_strings_are_kept() {
    // `inspect` marks the strings to keep before it reads them; a name
    // past what the file could hold is left out of that set (it would
    // have grown to the name) and refused once the strings are counted.
    let text = snapshot(300).replacen("\"edges\":[2,0,7", "\"edges\":[2,4294967295,7", 1);
    for threads in [1, 2] {
        let options = ParseOptions {
            threads,
            block_size: 64,
            only_shown_strings: true,
            ..ParseOptions::default()
        };
        let error = parse_with(text.as_bytes(), Some(text.len() as u64), options)
            .expect_err("a name past the strings")
            .to_string();
        assert!(
            error.contains("edge 0 names string 4294967295, past the 5 strings"),
            "{threads} threads: {error}"
        );
    }
}
