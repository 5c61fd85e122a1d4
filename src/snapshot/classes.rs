//! Grouping objects into classes, as DevTools' Summary view does: by
//! constructor name, with plain `Object`s further split by their property
//! names (memlab's habit, and the most useful key for a leak of records),
//! and internal kinds in parentheses.

use std::collections::HashMap;

use super::dominators::Dominators;
use super::graph::{EdgeType, HeapGraph, NodeId, NodeType};

/// Properties shown in a plain object's class key before "…".
const SHAPE_PROPERTIES: usize = 6;

/// The class of a node.
pub fn class_key(graph: &HeapGraph, n: NodeId) -> String {
    match graph.node_type(n) {
        NodeType::Object | NodeType::Native => {
            let name = graph.name(n);
            if name == "Object" {
                object_shape(graph, n)
            } else {
                name.to_string()
            }
        }
        NodeType::Closure => "(closure)".to_string(),
        NodeType::String => "(string)".to_string(),
        NodeType::ConcatenatedString => "(concatenated string)".to_string(),
        NodeType::SlicedString => "(sliced string)".to_string(),
        NodeType::Code => "(compiled code)".to_string(),
        NodeType::Array => "(array)".to_string(),
        NodeType::Hidden => "(system)".to_string(),
        NodeType::Regexp => "RegExp".to_string(),
        NodeType::Number => "(heap number)".to_string(),
        NodeType::Symbol => "(symbol)".to_string(),
        NodeType::BigInt => "(bigint)".to_string(),
        NodeType::ObjectShape => "(object shape)".to_string(),
        NodeType::Synthetic => graph.name(n).to_string(),
        NodeType::Other => format!("({})", graph.name(n)),
    }
}

/// `Object {at, url, headers, body}`.
fn object_shape(graph: &HeapGraph, n: NodeId) -> String {
    let mut names = Vec::new();
    let mut more = false;
    for e in graph.edges(n) {
        if graph.edge_type(e) != EdgeType::Property {
            continue;
        }
        let name = graph.edge_name(e);
        if name == "__proto__" {
            continue;
        }
        if names.len() == SHAPE_PROPERTIES {
            more = true;
            break;
        }
        names.push(name);
    }
    if names.is_empty() {
        return "Object".to_string();
    }
    format!(
        "Object {{{}{}}}",
        names.join(", "),
        if more { ", …" } else { "" }
    )
}

/// Count and sizes of one class.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClassTotals {
    pub count: u64,
    pub self_size: u64,
    /// Retained size of the class: the retained sizes of its members that
    /// no other member dominates (DevTools' definition).
    pub retained_size: u64,
}

/// Per-class totals of a whole snapshot, largest retained first.
pub fn summarise(graph: &HeapGraph, doms: &Dominators) -> Vec<(String, ClassTotals)> {
    let keys: Vec<u32>;
    let mut names: Vec<String> = Vec::new();
    {
        let mut index: HashMap<String, u32> = HashMap::new();
        keys = graph
            .nodes()
            .map(|n| {
                let key = class_key(graph, n);
                *index.entry(key.clone()).or_insert_with(|| {
                    names.push(key);
                    (names.len() - 1) as u32
                })
            })
            .collect();
    }
    let mut totals = vec![ClassTotals::default(); names.len()];
    for n in graph.nodes() {
        let t = &mut totals[keys[n.index()] as usize];
        t.count += 1;
        t.self_size += graph.self_size(n);
    }
    // Walk the dominator tree; a member counts unless an ancestor is of its class.
    let children = dominator_children(doms);
    let mut active = vec![0u32; names.len()];
    let mut stack: Vec<(NodeId, bool)> = vec![(NodeId::ROOT, false)];
    while let Some((node, leaving)) = stack.pop() {
        let class = keys[node.index()] as usize;
        if leaving {
            active[class] -= 1;
            continue;
        }
        if active[class] == 0 {
            totals[class].retained_size += doms.retained(node);
        }
        active[class] += 1;
        stack.push((node, true));
        for child in children.of(node) {
            stack.push((*child, false));
        }
    }
    let mut out: Vec<(String, ClassTotals)> = names.into_iter().zip(totals).collect();
    out.sort_by(|a, b| {
        b.1.retained_size
            .cmp(&a.1.retained_size)
            .then(a.0.cmp(&b.0))
    });
    out
}

/// The dominator tree as CSR child lists.
pub struct Children {
    first: Vec<u32>,
    list: Vec<NodeId>,
}

impl Children {
    pub fn of(&self, n: NodeId) -> &[NodeId] {
        &self.list[self.first[n.index()] as usize..self.first[n.index() + 1] as usize]
    }
}

pub fn dominator_children(doms: &Dominators) -> Children {
    let n = doms.idom.len();
    let mut first = vec![0u32; n + 1];
    for (i, d) in doms.idom.iter().enumerate() {
        if i != 0 {
            first[d.index() + 1] += 1;
        }
    }
    for i in 0..n {
        first[i + 1] += first[i];
    }
    let mut fill = first.clone();
    let mut list = vec![NodeId::ROOT; n.saturating_sub(1)];
    for (i, d) in doms.idom.iter().enumerate() {
        if i != 0 {
            list[fill[d.index()] as usize] = NodeId(i as u32);
            fill[d.index()] += 1;
        }
    }
    Children { first, list }
}
