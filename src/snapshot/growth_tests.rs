//! The threshold search against looking every row up, on random pairs of
//! snapshots: names shared, renamed and dropped, sizes that grow, shrink
//! and stay, types that read as one (two unknown raw types are both
//! `Other`), every `top` from none to more rows than there are.

use super::super::graph::HeapGraph;
use super::super::parse::parse;
use super::super::random::Numbers;
use super::super::tally::{EarlierTally, raw_tally};
use super::{every_row, grew_by_self_size, sorted_top, top_by_threshold};

/// Names of a few lengths, several of each, so lookups meet names of a
/// wanted length that are not the one wanted.
fn name(i: u64) -> String {
    match i % 3 {
        0 => format!("n{i:03}"),
        1 => format!("{}{i:03}", "x".repeat(40)),
        _ => format!("{i:03}{}", "y".repeat(40)),
    }
}

/// A snapshot without edges of nodes given as (raw type, name, self
/// size); names are indexes into `name`'s list, the first `names` of it.
fn snapshot_of(nodes: &[(u64, u64, u64)], names: u64) -> HeapGraph {
    let node_text: Vec<String> = nodes
        .iter()
        .enumerate()
        .map(|(i, (kind, name, size))| format!("{kind},{},{},{size},0", name + 1, 2 * i + 1))
        .collect();
    let strings: Vec<String> = std::iter::once(String::new())
        .chain((0..names).map(name))
        .map(|s| format!("{s:?}"))
        .collect();
    let text = format!(
        r#"{{"snapshot":{{"meta":{{"node_fields":["type","name","id","self_size","edge_count"],
 "node_types":[["object","string","foo","bar"]],"edge_fields":["type","name_or_index","to_node"],
 "edge_types":[["property"]]}}}},"nodes":[{}],"edges":[],"strings":[{}]}}"#,
        node_text.join(","),
        strings.join(",")
    );
    parse(text.as_bytes()).unwrap()
}

/// `nodes` random nodes; `grow` in 0..=4 skews the sizes up (the later
/// snapshot of a leak) or not.
fn random_snapshot(numbers: &mut Numbers, nodes: usize, names: u64, grow: u64) -> HeapGraph {
    let nodes: Vec<(u64, u64, u64)> = (0..nodes)
        .map(|_| {
            let kind = numbers.below(4);
            let name = numbers.below(names);
            (
                kind,
                name,
                numbers.below(100) * (1 + grow * numbers.below(3)),
            )
        })
        .collect();
    snapshot_of(&nodes, names)
}

#[test]
fn the_threshold_search_finds_the_rows_looking_everything_up_finds() {
    let mut numbers = Numbers(18);
    let mut pruned = 0;
    for case in 0..300 {
        let names = 5 + numbers.below(60);
        let (nodes_a, nodes_b) = (1 + numbers.below(300), 1 + numbers.below(300));
        let mut a = random_snapshot(&mut numbers, nodes_a as usize, names, 0);
        let b = random_snapshot(&mut numbers, nodes_b as usize, names, case % 5);
        let earlier = EarlierTally::take_from(&mut a);
        for top in [0, 1, 2, 3, 5, 10, 40, 1000] {
            let everything = sorted_top(every_row(&earlier, &b, raw_tally(&b), top), top);
            assert_eq!(
                grew_by_self_size(&earlier, &b, top),
                everything,
                "case {case}, top {top}"
            );
            pruned += usize::from(top_by_threshold(&earlier, &b, &raw_tally(&b), top).is_some());
        }
    }
    // Both ways were taken, many times each.
    assert!((500..2000).contains(&pruned), "{pruned}");
}

#[test]
fn a_row_only_in_a_is_a_negative_row() {
    let mut numbers = Numbers(7);
    let mut a = random_snapshot(&mut numbers, 200, 40, 0);
    // B keeps only the first ten names: the others are gone.
    let b = random_snapshot(&mut numbers, 50, 10, 0);
    let earlier = EarlierTally::take_from(&mut a);
    let rows = grew_by_self_size(&earlier, &b, 1000);
    assert!(
        rows.iter()
            .any(|r| r.count_delta < 0 && r.self_size_delta < 0)
    );
    assert!(top_by_threshold(&earlier, &b, &raw_tally(&b), 1000).is_none());
}

#[test]
fn large_rows_that_barely_grew_do_not_hide_smaller_rows_that_grew_more() {
    // 100 names of 1 000 bytes in B that were 990 in A (growth 10), and 30
    // of 500 bytes that are new (growth 500): the first lookups (the largest
    // in B) find growth 10 only, so the search must go on below them.
    let stable: Vec<(u64, u64, u64)> = (0..100).map(|n| (0, n, 990)).collect();
    let mut later: Vec<(u64, u64, u64)> = (0..100).map(|n| (0, n, 1000)).collect();
    later.extend((100..130).map(|n| (0, n, 500)));
    let mut a = snapshot_of(&stable, 130);
    let b = snapshot_of(&later, 130);
    let earlier = EarlierTally::take_from(&mut a);
    let rows = grew_by_self_size(&earlier, &b, 10);
    assert_eq!(rows.len(), 10);
    assert!(rows.iter().all(|r| r.self_size_delta == 500), "{rows:#?}");
    assert!(top_by_threshold(&earlier, &b, &raw_tally(&b), 10).is_some());
}
