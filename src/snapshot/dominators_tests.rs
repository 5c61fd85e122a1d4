//! The dominator tree against its definition, on random graphs: `d`
//! dominates `w` when every path from the root to `w` passes through `d`,
//! i.e. when `w` cannot be reached once `d` is taken out. The graphs have
//! weak edges, shortcuts, self-loops, cycles and nodes only weakly held
//! (children of the root, as DevTools makes them), and are small enough
//! to test every node's every candidate dominator by a search.

use super::super::graph::{EdgeId, HeapGraph, NodeId};
use super::super::parse::parse;
use super::super::random::Numbers;
use super::Dominators;

/// Edge types by their index in the snapshot's table below.
const PROPERTY: u64 = 2;
const WEAK: u64 = 6;
const SHORTCUT: u64 = 5;

/// A snapshot of `nodes` nodes with `edges_per_node` random edges on
/// average; self sizes 1..=9.
fn random_snapshot(numbers: &mut Numbers, nodes: usize, edges_per_node: u64) -> String {
    let mut node_text = Vec::new();
    let mut edge_text = Vec::new();
    for i in 0..nodes {
        let count = numbers.below(2 * edges_per_node + 1);
        for _ in 0..count {
            let kind = match numbers.below(10) {
                0 => WEAK,
                1 => SHORTCUT,
                _ => PROPERTY,
            };
            let to = numbers.below(nodes as u64);
            edge_text.push(format!("{kind},1,{}", to * 5));
        }
        node_text.push(format!(
            "3,1,{},{},{count}",
            i * 2 + 1,
            1 + numbers.below(9)
        ));
    }
    format!(
        r#"{{"snapshot":{{"meta":{{"node_fields":["type","name","id","self_size","edge_count"],
"node_types":[["hidden","array","string","object"],"string","number","number","number"],
"edge_fields":["type","name_or_index","to_node"],
"edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"]}},
"node_count":{nodes},"edge_count":{}}},
"nodes":[{}],"edges":[{}],"strings":["","n"]}}"#,
        edge_text.len(),
        node_text.join(","),
        edge_text.join(",")
    )
}

/// The essential edges, plus the root's virtual edges: a node the root
/// does not reach becomes the root's child when no earlier such node
/// reaches it (the engine's DFS visits them in node order).
fn essential_successors(graph: &HeapGraph) -> Vec<Vec<usize>> {
    let n = graph.node_count();
    let mut successors: Vec<Vec<usize>> = (0..n)
        .map(|from| {
            let from = NodeId(from as u32);
            graph
                .edges(from)
                .filter(|e| graph.is_essential(from, graph.edge_type(*e)))
                .map(|e: EdgeId| graph.edge_to(e).index())
                .collect()
        })
        .collect();
    let mut reached = reachable(&successors, usize::MAX);
    for start in 0..n {
        if !reached[start] {
            successors[0].push(start);
            reached = reachable(&successors, usize::MAX);
        }
    }
    successors
}

/// Nodes reached from the root without passing through `removed`.
fn reachable(successors: &[Vec<usize>], removed: usize) -> Vec<bool> {
    let mut seen = vec![false; successors.len()];
    if removed == 0 {
        return seen;
    }
    let mut stack = vec![0];
    seen[0] = true;
    while let Some(v) = stack.pop() {
        for &w in &successors[v] {
            if w != removed && !seen[w] {
                seen[w] = true;
                stack.push(w);
            }
        }
    }
    seen
}

/// Immediate dominators by the definition: `w`'s strict dominators form
/// a chain, and the immediate one is the chain's lowest, the one with the
/// most dominators of its own.
fn idoms_by_definition(successors: &[Vec<usize>]) -> Vec<usize> {
    let n = successors.len();
    // dominated_by[d][w]: d dominates w.
    let dominated_by: Vec<Vec<bool>> = (0..n)
        .map(|d| {
            let without = reachable(successors, d);
            (0..n).map(|w| w == d || !without[w]).collect()
        })
        .collect();
    let depth = |w: usize| (0..n).filter(|&d| dominated_by[d][w]).count();
    (0..n)
        .map(|w| {
            if w == 0 {
                return 0;
            }
            (0..n)
                .filter(|&d| d != w && dominated_by[d][w])
                .max_by_key(|&d| depth(d))
                .expect("the root dominates every node")
        })
        .collect()
}

/// Retained sizes from the idoms: a node's self size plus those of every
/// node it dominates.
fn retained_by_definition(graph: &HeapGraph, idom: &[usize]) -> Vec<u64> {
    let n = idom.len();
    let mut retained = vec![0u64; n];
    for w in 0..n {
        let mut d = w;
        loop {
            retained[d] += graph.self_size(NodeId(w as u32));
            if d == 0 {
                break;
            }
            d = idom[d];
        }
    }
    retained
}

#[test]
fn idoms_and_retained_sizes_match_the_definition_on_random_graphs() {
    let mut numbers = Numbers(18);
    for case in 0..300 {
        let nodes = 2 + numbers.below(40) as usize;
        let edges_per_node = 1 + numbers.below(3);
        let text = random_snapshot(&mut numbers, nodes, edges_per_node);
        let mut graph = parse(text.as_bytes()).expect("a well-formed snapshot");
        let retainers = graph.take_retainers();
        // One thread and two alike (the last step's split).
        let threads = 1 + case % 2;
        let dominators = Dominators::compute_on(&graph, retainers, threads);
        let expected = idoms_by_definition(&essential_successors(&graph));
        let found: Vec<usize> = (0..nodes)
            .map(|w| dominators.idom(NodeId(w as u32)).index())
            .collect();
        assert_eq!(found, expected, "case {case}: {text}");
        let retained: Vec<u64> = (0..nodes)
            .map(|w| dominators.retained(NodeId(w as u32)))
            .collect();
        assert_eq!(
            retained,
            retained_by_definition(&graph, &expected),
            "case {case}: {text}"
        );
    }
}

#[test]
fn a_long_chain_does_not_overflow_the_stack() {
    // root -> 1 -> 2 -> ... : each node dominates the rest of the chain.
    let nodes = 200_000;
    let node_text: Vec<String> = (0..nodes)
        .map(|i| format!("3,1,{},1,{}", i * 2 + 1, usize::from(i + 1 < nodes)))
        .collect();
    let edge_text: Vec<String> = (1..nodes).map(|to| format!("2,1,{}", to * 5)).collect();
    let text = format!(
        r#"{{"snapshot":{{"meta":{{"node_fields":["type","name","id","self_size","edge_count"],
"node_types":[["hidden","array","string","object"],"string","number","number","number"],
"edge_fields":["type","name_or_index","to_node"],
"edge_types":[["context","element","property"],"string_or_number","node"]}}}},
"nodes":[{}],"edges":[{}],"strings":["","n"]}}"#,
        node_text.join(","),
        edge_text.join(",")
    );
    let mut graph = parse(text.as_bytes()).expect("a well-formed snapshot");
    let retainers = graph.take_retainers();
    let dominators = Dominators::compute(&graph, retainers);
    for w in 1..nodes {
        assert_eq!(dominators.idom(NodeId(w as u32)).index(), w - 1);
    }
    assert_eq!(dominators.retained(NodeId::ROOT), nodes as u64);
    assert_eq!(dominators.retained(NodeId(1)), nodes as u64 - 1);
}
