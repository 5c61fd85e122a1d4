//! Grouping objects into classes, as DevTools' Summary view does: by
//! constructor name, with plain `Object`s further split by their property
//! names (memlab's habit, and the most useful key for a leak of records),
//! and internal kinds in parentheses.

use super::class_retained::dominator_children;
use rustc_hash::FxHashMap as HashMap;

use super::class_retained::retained_by_class;
use super::dominators::Dominators;
use super::graph::{EdgeType, HeapGraph, NodeId, NodeType};

/// Properties shown in a plain object's class key before "…".
const SHAPE_PROPERTIES: usize = 6;

/// The class of a node.
/// The snapshot's `detachedness` of a DOM node no longer attached to a
/// document (0 unknown, 1 attached).
const DETACHED: u8 = 2;

pub fn class_key(graph: &HeapGraph, n: NodeId) -> String {
    match graph.node_type(n) {
        NodeType::Object | NodeType::Native => {
            let name = graph.name(n);
            // Chromium marks DOM wrappers no longer in a document: DevTools'
            // "Detached" classes, what a page leak usually keeps.
            if graph.detachedness(n) == DETACHED {
                return format!("Detached {name}");
            }
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
        let name = graph.edge_name_str(e).unwrap_or_default();
        if name == "__proto__" {
            continue;
        }
        let name = name.to_string();
        if names.len() == SHAPE_PROPERTIES {
            more = true;
            break;
        }
        names.push(name);
    }
    if names.is_empty() {
        return "Object".to_string();
    }
    // JavaScriptCore lists an object's properties in no fixed order.
    if graph.written_by_javascriptcore() {
        names.sort_unstable();
    }
    format!(
        "Object {{{}{}}}",
        names.join(", "),
        if more { ", …" } else { "" }
    )
}

/// The class of every node, computed once: `of[n]` indexes `names`.
/// Plain objects are keyed by the string ids of their property names, so
/// a key string is built once per shape, not once per object.
pub struct ClassIndex {
    pub of: Vec<u32>,
    pub names: Vec<String>,
}

impl ClassIndex {
    pub fn build(graph: &HeapGraph) -> ClassIndex {
        let mut by_name: HashMap<(u8, u32), u32> = HashMap::default();
        let mut by_shape: HashMap<Box<[u32]>, u32> = HashMap::default();
        let mut names: Vec<String> = Vec::new();
        let mut shape: Vec<u32> = Vec::with_capacity(SHAPE_PROPERTIES + 1);
        let mut of = Vec::with_capacity(graph.node_count());
        // Compared by id, not text: this loop runs once per node.
        let object = graph.strings.find("Object");
        let proto = graph.strings.find("__proto__").map(|id| id.0);
        for n in graph.nodes() {
            let t = graph.node_type(n);
            let plain_object = matches!(t, NodeType::Object | NodeType::Native)
                && Some(graph.node_name[n.index()]) == object;
            let id = if plain_object {
                shape.clear();
                for e in graph.edges(n) {
                    let name = graph.edge_name[e.0 as usize];
                    if graph.edge_type(e) == EdgeType::Property && Some(name) != proto {
                        shape.push(name);
                        if shape.len() > SHAPE_PROPERTIES {
                            break;
                        }
                    }
                }
                if graph.written_by_javascriptcore() {
                    shape.sort_unstable();
                }
                match by_shape.get(&shape[..]) {
                    Some(id) => *id,
                    None => {
                        let id = intern(&mut names, class_key(graph, n));
                        by_shape.insert(shape.clone().into_boxed_slice(), id);
                        id
                    }
                }
            } else {
                // Types whose key depends on the name keep it; the others
                // have one class per type.
                let named = matches!(
                    t,
                    NodeType::Object | NodeType::Native | NodeType::Synthetic | NodeType::Other
                );
                let key = (
                    graph.node_type[n.index()],
                    if named {
                        graph.node_name[n.index()].0
                    } else {
                        u32::MAX
                    },
                );
                match by_name.get(&key) {
                    Some(id) => *id,
                    None => {
                        let id = intern(&mut names, class_key(graph, n));
                        by_name.insert(key, id);
                        id
                    }
                }
            };
            of.push(id);
        }
        // Different raw keys may give the same text ("Object" with and
        // without properties, say); merge them so each class is one row.
        let mut canonical: HashMap<String, u32> = HashMap::default();
        let mut remap = Vec::with_capacity(names.len());
        let mut merged = Vec::new();
        for name in names {
            let next = merged.len() as u32;
            let id = *canonical.entry(name.clone()).or_insert(next);
            if id == next {
                merged.push(name);
            }
            remap.push(id);
        }
        for id in &mut of {
            *id = remap[*id as usize];
        }
        ClassIndex { of, names: merged }
    }

    pub fn class_of(&self, n: NodeId) -> &str {
        &self.names[self.of[n.index()] as usize]
    }
}

fn intern(names: &mut Vec<String>, name: String) -> u32 {
    names.push(name);
    (names.len() - 1) as u32
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

/// Per-class totals of a whole snapshot, largest retained first; the
/// retained sizes on `threads` threads (`class_retained.rs`).
pub fn summarise(
    graph: &HeapGraph,
    doms: &Dominators,
    classes: &ClassIndex,
    threads: usize,
) -> Vec<(String, ClassTotals)> {
    let keys = &classes.of;
    let names = classes.names.clone();
    let mut totals = vec![ClassTotals::default(); names.len()];
    for n in graph.nodes() {
        let t = &mut totals[keys[n.index()] as usize];
        t.count += 1;
        t.self_size += graph.self_size(n);
    }
    let children = dominator_children(doms);
    let retained = retained_by_class(doms, &children, keys, names.len(), threads);
    for (t, r) in totals.iter_mut().zip(retained) {
        t.retained_size = r;
    }
    let mut out: Vec<(String, ClassTotals)> = names.into_iter().zip(totals).collect();
    out.sort_by(|a, b| {
        b.1.retained_size
            .cmp(&a.1.retained_size)
            .then(a.0.cmp(&b.0))
    });
    out
}
