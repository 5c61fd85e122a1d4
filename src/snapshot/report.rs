//! The serialisable results of `inspect` and `diff`.

use serde::{Deserialize, Serialize};

use super::analysis::Analysis;
use super::classes::{ClassIndex, ClassTotals, summarise};
use super::diff::{Before, compare_classes, new_nodes};
use super::dominators::Dominators;
use super::graph::{HeapGraph, NodeId};
use super::growth::{GrowthRow, grew_by_self_size};
use super::holder::{Found, HolderScratch, describe_holder, tally_holders};
use super::paths::{Distances, Paths};
use std::collections::HashMap;

use crate::model::{ClassDiff, ElementGrowth, Holder, HolderKind, is_engine_class};

/// A holder whose objects carry less than this share of the new bytes of
/// all holders is not printed: compiled code, `(system)` cells and a few KB
/// of a library's bookkeeping beside the MBs of a leak only mislead.
const MINOR_HOLDER_SHARE: f64 = 0.1;

/// DOM nodes still in the document are kept by the document itself,
/// which many roots reach: their dominator is the roots, and the path
/// names nothing. Say what it is instead of `(GC roots) @3`.
fn name_attached_dom(mut holder: Holder) -> Holder {
    if holder.holder_class == "(GC roots)" && holder.class.starts_with('<') {
        holder.name = format!("the document: {} nodes still attached", holder.class);
    }
    holder
}

/// Drops minor holders: under `MINOR_HOLDER_SHARE` of the total, or
/// internal (V8's own structures) while a larger holder is named, or
/// holding only engine classes while another holds the app's objects.
fn drop_minor_holders(holders: &mut Vec<Holder>) {
    if holders.iter().any(|h| !is_engine_class(&h.class)) {
        holders.retain(|h| !is_engine_class(&h.class));
    }
    let mut by_object: HashMap<u32, u64> = HashMap::new();
    for h in holders.iter() {
        *by_object.entry(h.holder_id).or_default() += h.new_bytes;
    }
    let total: u64 = by_object.values().sum();
    let largest = by_object.values().copied().max().unwrap_or(0);
    holders.retain(|h| {
        let held = by_object[&h.holder_id];
        let minor = (held as f64) < MINOR_HOLDER_SHARE * total as f64;
        let internal_beside_a_larger = h.kind == HolderKind::Internal && held < largest;
        !minor && !internal_beside_a_larger
    });
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassRow {
    pub class: String,
    pub count: u64,
    pub self_size: u64,
    pub retained_size: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectRow {
    pub id: u32,
    pub class: String,
    pub name: String,
    pub self_size: u64,
    pub retained_size: u64,
    pub distance: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub file_bytes: u64,
    pub nodes: u64,
    pub edges: u64,
    pub strings: u64,
    pub self_size: u64,
    /// Nodes that only weak edges reach.
    pub unreachable_nodes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InspectReport {
    pub schema_version: u32,
    pub totals: Totals,
    pub classes: Vec<ClassRow>,
    pub largest_retainers: Vec<ObjectRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffReport {
    pub schema_version: u32,
    pub before: Totals,
    pub after: Totals,
    /// Comparison view, largest size delta first.
    pub classes: Vec<ClassDiff>,
    /// The method's view: counts and self sizes by type and name, after minus before.
    pub grew_by_self_size: Vec<GrowthRow>,
    /// For the top grown classes: what holds their new objects.
    pub holders: Vec<Holder>,
    /// DOM elements net new over every tag (a browser's snapshots only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elements: Option<ElementGrowth>,
}

fn totals(graph: &HeapGraph, distances: &Distances) -> Totals {
    Totals {
        file_bytes: graph.file_bytes,
        nodes: graph.node_count() as u64,
        edges: graph.edge_count() as u64,
        strings: graph.strings.len() as u64,
        self_size: graph.nodes().map(|n| graph.self_size(n)).sum(),
        unreachable_nodes: distances.unreached_count(),
    }
}

/// Whether a node is an object a user would recognise as theirs.
fn is_user_object(graph: &HeapGraph, distances: &Distances, n: NodeId) -> bool {
    use super::graph::NodeType::*;
    matches!(
        graph.node_type(n),
        Object | Closure | Array | Native | Regexp
    ) && distances.reachable(n)
}

/// The `top` user objects that retain the most, largest first (ties: the
/// lower node id).
///
/// One pass with a heap of the best `top` so far: collecting the millions
/// of user objects to select from them cost an array of 4 bytes a node,
/// new memory whose page faults took longer than the selection.
fn largest_objects(
    graph: &HeapGraph,
    doms: &Dominators,
    distances: &Distances,
    top: usize,
) -> Vec<NodeId> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    if top == 0 {
        return Vec::new();
    }
    // Smaller keys rank first; the heap's greatest is the worst one kept.
    let key = |n: NodeId| (Reverse(doms.retained(n)), n);
    let mut best: BinaryHeap<(Reverse<u64>, NodeId)> = BinaryHeap::with_capacity(top + 1);
    for n in graph.nodes() {
        if n == NodeId::ROOT || !is_user_object(graph, distances, n) {
            continue;
        }
        let candidate = key(n);
        if best.len() < top {
            best.push(candidate);
        } else if best.peek().is_some_and(|worst| candidate < *worst) {
            best.pop();
            best.push(candidate);
        }
    }
    best.into_sorted_vec().into_iter().map(|(_, n)| n).collect()
}

/// Analyses a parsed graph for `inspect` on two threads: beside the
/// dominator tree, the distances from the root (forward edges only; as
/// long as the DFS) and then the class index (names, types and edges
/// only), so that the second core is not idle while the semidominators
/// are found; then the class summary (which needs both, its retained sizes
/// on `threads` threads) beside the totals and the largest objects.
/// Distances without the paths' parent edges keep that overlap within
/// 1.2× the file (BENCHMARKS.md); the class index fits since the tree
/// consumes the reverse index and frees the DFS numbers early.
pub fn inspect_graph(mut graph: HeapGraph, top: usize, threads: usize) -> InspectReport {
    let p = super::phases::Phase::start("dominators | distances, class index");
    let retainers = graph.take_retainers();
    // With one thread asked for, the distances wait for the dominators:
    // their memory then adds to a lower figure (the peak stays 490 MB).
    let distances_beside = threads > 1;
    let (dominators, (index, distances)) = std::thread::scope(|scope| {
        let side = scope.spawn(|| {
            let distances = distances_beside.then(|| {
                let _p = super::phases::Phase::start("distances");
                Distances::compute(&graph)
            });
            let p = super::phases::Phase::start("class index");
            let index = ClassIndex::build(&graph);
            drop(p);
            (index, distances)
        });
        let dominators = Dominators::compute_on(&graph, retainers, threads);
        let side = side
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (dominators, side)
    });
    drop(p);
    let distances = distances.unwrap_or_else(|| Distances::compute(&graph));
    let p = super::phases::Phase::start("classes | largest objects");
    // Nothing after the distances and the class index reads an edge: the
    // edge columns (two thirds of the graph) are freed on the second core
    // beside the class summary, not at exit after the report.
    let edge_count = graph.edge_count() as u64;
    let edges = graph.take_edges();
    let (totals, objects, classes) = std::thread::scope(|scope| {
        // The class summary here, on the thread that found the dominators:
        // its child lists (8 bytes a node) then reuse the memory the
        // dominators freed, where another thread's allocator had to fault
        // in new pages (BENCHMARKS.md).
        let side = scope.spawn(|| {
            let totals = Totals {
                edges: edge_count,
                ..totals(&graph, &distances)
            };
            let objects = largest_objects(&graph, &dominators, &distances, top);
            drop(edges);
            (totals, objects)
        });
        let p = super::phases::Phase::start("class summary");
        let classes = summarise(&graph, &dominators, &index, threads);
        drop(p);
        let (totals, objects) = side
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (totals, objects, classes)
    });
    drop(p);
    let parts = Parts {
        totals,
        objects,
        index,
        classes,
    };
    inspect_report_of(&graph, &dominators, &distances, parts, top)
}

/// What an inspect report is made of, computed where it is cheapest.
struct Parts {
    totals: Totals,
    /// The largest retainers, in order.
    objects: Vec<NodeId>,
    index: ClassIndex,
    /// Every class, largest retained size first.
    classes: Vec<(String, ClassTotals)>,
}

fn inspect_report_of(
    g: &HeapGraph,
    dominators: &Dominators,
    distances: &Distances,
    parts: Parts,
    top: usize,
) -> InspectReport {
    let classes = parts
        .classes
        .into_iter()
        .take(top)
        .map(|(class, t)| ClassRow {
            class,
            count: t.count,
            self_size: t.self_size,
            retained_size: t.retained_size,
        })
        .collect();
    let largest_retainers = parts
        .objects
        .into_iter()
        .map(|n| ObjectRow {
            id: g.id(n),
            class: parts.index.class_of(n).to_string(),
            name: g.name(n).to_string(),
            self_size: g.self_size(n),
            retained_size: dominators.retained(n),
            distance: distances.of(n),
        })
        .collect();
    InspectReport {
        schema_version: 1,
        totals: parts.totals,
        classes,
        largest_retainers,
    }
}

/// Classes whose new objects a holder is looked for: the top grown ones.
const HOLDER_CLASSES: usize = 3;

/// What `diff` keeps of the earlier snapshot, so its graph can be freed.
pub struct BeforeSummary {
    totals: Totals,
    before: Before,
}

/// Summarises the earlier snapshot of a diff (what is kept is taken out
/// of its graph; the rest is freed).
pub fn summarise_before(graph: HeapGraph) -> BeforeSummary {
    let totals = Totals {
        file_bytes: graph.file_bytes,
        nodes: graph.node_count() as u64,
        edges: graph.edge_count() as u64,
        strings: graph.strings.len() as u64,
        self_size: graph.nodes().map(|n| graph.self_size(n)).sum(),
        unreachable_nodes: Distances::compute(&graph).unreached_count(),
    };
    BeforeSummary {
        totals,
        before: Before::summarise(graph),
    }
}

/// Compares the later snapshot's graph with the earlier one's summary.
///
/// The Comparison view, the method's tally and the paths need only the
/// graph's columns, not its dominator tree, so they run on a second thread
/// while this one computes dominators: on the demo's 9 + 59 MB pair that
/// overlap is most of what separates `diff` from parse time (BENCHMARKS.md,
/// heap snapshot engine). The holders' tallies need the dominators and the
/// grown classes: they run here once both are in, beside the method's
/// tally and the paths, and the holders are named at the end.
pub fn diff_graph(
    before: &BeforeSummary,
    mut graph: HeapGraph,
    top: usize,
) -> (Analysis, DiffReport) {
    let phase = super::phases::Phase::start("dominators, holders | comparison, paths");
    let retainers = graph.take_retainers();
    let graph_read = &graph;
    let (dominators, paths, classes, found, grew_by_self_size) = std::thread::scope(|scope| {
        // The side hands over what the holders' tallies need as soon as it
        // has it, then goes on with the method's tally and the paths.
        let (comparison_tx, comparison_rx) = std::sync::mpsc::channel();
        let side = scope.spawn(move || {
            let p = super::phases::Phase::start("comparison");
            let classes_b = ClassIndex::build(graph_read);
            let new = new_nodes(&before.before, graph_read, &classes_b);
            let classes = compare_classes(&before.before, graph_read, &classes_b, &new);
            // Unsent only if this thread's receiver is gone: nothing to do.
            let _ = comparison_tx.send((classes_b, new, classes));
            let grew = grew_by_self_size(&before.before.tally, graph_read, top);
            drop(p);
            let _p = super::phases::Phase::start("paths");
            (grew, Paths::compute(graph_read))
        });
        let dominators = Dominators::compute(graph_read, retainers);
        let Ok((classes_b, new, classes)) = comparison_rx.recv() else {
            // The side stopped before its comparison: its panic, resumed.
            match side.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(_) => unreachable!("the side returns after it sends"),
            }
        };
        let p = super::phases::Phase::start("holder tallies");
        let mut scratch = HolderScratch::new(graph_read);
        let found: Vec<Found> = classes
            .iter()
            .filter(|r| r.alloc_size > 0)
            .take(HOLDER_CLASSES)
            .flat_map(|row| {
                tally_holders(
                    graph_read,
                    &dominators,
                    &classes_b,
                    &new,
                    &row.class,
                    1,
                    &mut scratch,
                )
            })
            .collect();
        drop(p);
        let (grew, paths) = side
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (dominators, paths, classes, found, grew)
    });
    drop(phase);
    let _p = super::phases::Phase::start("holders named");
    let after = Analysis {
        graph,
        dominators,
        paths,
    };
    let mut holders: Vec<Holder> = found
        .iter()
        .map(|f| describe_holder(&after, f))
        .map(name_attached_dom)
        .collect();
    holders.sort_by_key(|h| std::cmp::Reverse(h.new_bytes));
    holders.dedup_by(|x, y| x.holder_id == y.holder_id && x.class == y.class);
    drop_minor_holders(&mut holders);
    let report = DiffReport {
        schema_version: 1,
        before: before.totals.clone(),
        after: totals(&after.graph, &after.paths.distances),
        elements: ElementGrowth::of(&classes),
        classes: classes.into_iter().take(top).collect(),
        grew_by_self_size,
        holders,
    };
    (after, report)
}
