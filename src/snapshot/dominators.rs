//! Dominator tree and retained sizes.
//!
//! Method: Lengauer & Tarjan, "A fast algorithm for finding dominators in a
//! flowgraph" (TOPLAS 1979), semidominators with path compression, then the
//! semi-NCA step for immediate dominators (see `semidominators_to_idoms`);
//! written without recursion: the DFS, `eval` and `compress` use explicit
//! stacks, so a million-deep list does not overflow the stack.
//!
//! The graph is the snapshot's essential edges (`HeapGraph::is_essential`,
//! read from its per-type table, `HeapGraph::retains`).
//! Nodes no essential path reaches from the root (held only through weak
//! edges) are treated as children of the root, as DevTools does, so every
//! node has a dominator and a retained size.
//!
//! Retained size of `n` = self size of `n` plus the retained sizes of the
//! nodes it immediately dominates: summed bottom-up in reverse DFS order,
//! since an immediate dominator always precedes its nodes in DFS order.

use super::graph::{EssentialTypes, HeapGraph, NodeId, Retainers};

const NONE: u32 = u32::MAX;

pub struct Dominators {
    /// Immediate dominator of each node (the root's is itself).
    pub idom: Vec<NodeId>,
    /// Retained size of each node, bytes.
    pub retained: Vec<u64>,
}

impl Dominators {
    /// The dominator tree of `graph`, consuming its reverse index (taken
    /// out with `HeapGraph::take_retainers`): the index is rewritten in
    /// place in DFS numbers and freed once the semidominators are known,
    /// which keeps the engine's peak memory at its lowest here.
    pub fn compute(graph: &HeapGraph, retainers: Retainers) -> Dominators {
        Dominators::compute_on(graph, retainers, 1)
    }

    /// `compute`, with the last step (immediate dominators by node, and
    /// retained sizes) on two threads when `threads` > 1.
    pub fn compute_on(graph: &HeapGraph, mut retainers: Retainers, threads: usize) -> Dominators {
        let p = super::phases::Phase::start("dfs");
        let mut order = DfsOrder::compute(graph);
        drop(p);
        let p = super::phases::Phase::start("semi + idom");
        // Retainers by DFS number: the semidominator loop then looks up no
        // node's number, and the numbers (4 bytes a node) are freed before it.
        for pred in &mut retainers.list {
            *pred = NodeId(order.dfn[pred.index()]);
        }
        order.dfn = Vec::new();
        let parent = std::mem::take(&mut order.parent);
        let (mut idom_dfn, forest) = semidominators_to_idoms(&order, retainers, parent, threads);
        idom_dfn[0] = 0;
        drop(p);
        let _p = super::phases::Phase::start("idom to nodes, retained");
        // Everything below works in node space, keeping one array per figure
        // alive: peak memory is what limits the size of snapshot we can read.
        // The two figures need only the DFS arrays, not each other: with
        // threads, the immediate dominators are placed by node on another
        // core while the retained sizes are summed here.
        let vertex = &order.vertex;
        let idom_dfn = &idom_dfn;
        let (idom, retained) = if threads > 1 {
            std::thread::scope(|scope| {
                let idom = scope.spawn(|| idoms_by_node(vertex, idom_dfn));
                let retained = retained_sizes(graph, vertex, idom_dfn, forest);
                let idom = idom
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (idom, retained)
            })
        } else {
            (
                idoms_by_node(vertex, idom_dfn),
                retained_sizes(graph, vertex, idom_dfn, forest),
            )
        };
        Dominators { idom, retained }
    }

    pub fn idom(&self, n: NodeId) -> NodeId {
        self.idom[n.index()]
    }
    pub fn retained(&self, n: NodeId) -> u64 {
        self.retained[n.index()]
    }
}

/// The immediate dominator of each node, from those by DFS number.
fn idoms_by_node(vertex: &[NodeId], idom_dfn: &[u32]) -> Vec<NodeId> {
    let mut idom = vec![NodeId::ROOT; vertex.len()];
    for (w, dominator_dfn) in idom_dfn.iter().enumerate().skip(1) {
        idom[vertex[w].index()] = vertex[*dominator_dfn as usize];
    }
    idom
}

/// Retained sizes by node: each node's own size, then, in reverse DFS
/// order (an immediate dominator always comes before its nodes), each
/// node's total added to its immediate dominator's. In the memory of the
/// semidominators' forest (one `Link` a node): the standard library
/// collects a mapped `Vec` in place when the layouts agree.
fn retained_sizes(
    graph: &HeapGraph,
    vertex: &[NodeId],
    idom_dfn: &[u32],
    forest: Vec<Link>,
) -> Vec<u64> {
    let n = vertex.len();
    let mut retained: Vec<u64> = forest
        .into_iter()
        .enumerate()
        .map(|(i, _)| graph.self_size(NodeId(i as u32)))
        .collect();
    for w in (1..n).rev() {
        let node = vertex[w];
        let dominator = vertex[idom_dfn[w] as usize];
        retained[dominator.index()] += retained[node.index()];
    }
    retained
}

/// DFS numbering over essential edges, root first, then any node the root
/// does not reach, as if the root pointed at it.
struct DfsOrder {
    /// DFS number of each node.
    dfn: Vec<u32>,
    /// Node of each DFS number.
    vertex: Vec<NodeId>,
    /// DFS parent, by DFS number, with `VIRTUAL` set for a node reached
    /// only through the virtual root edge (a flag in the parent's spare
    /// top bit rather than a byte a node of its own).
    parent: Vec<u32>,
}

/// The flag in `DfsOrder::parent` of a virtual child of the root. Node
/// counts stay below it: `DfsOrder::compute` checks.
const VIRTUAL: u32 = 1 << 31;

impl DfsOrder {
    fn compute(graph: &HeapGraph) -> DfsOrder {
        let n = graph.node_count();
        // The parser refuses more nodes (`parse::MAX_NODES`).
        debug_assert!(n < VIRTUAL as usize);
        let mut order = DfsOrder {
            dfn: vec![NONE; n],
            vertex: Vec::with_capacity(n),
            parent: Vec::with_capacity(n),
        };
        let mut stack: Vec<Visit> = Vec::new();
        let table = &graph.essential_types();
        order.visit(graph, table, NodeId::ROOT, 0, false, &mut stack);
        for start in 0..n as u32 {
            if order.dfn[start as usize] == NONE {
                order.visit(graph, table, NodeId(start), 0, true, &mut stack);
            }
        }
        order
    }

    /// Gives `node` the next DFS number.
    fn number(&mut self, node: NodeId, parent: u32, virtual_child: bool) {
        self.dfn[node.index()] = self.vertex.len() as u32;
        self.vertex.push(node);
        self.parent.push(if virtual_child {
            parent | VIRTUAL
        } else {
            parent
        });
    }

    /// Numbers `start` and everything it reaches that has no number yet,
    /// depth first. Each stack entry keeps its node's DFS number and the
    /// end of its edges, so an edge costs its type, its target and the
    /// target's number: no lookups of the node's own.
    fn visit(
        &mut self,
        graph: &HeapGraph,
        table: &EssentialTypes,
        start: NodeId,
        parent: u32,
        virtual_child: bool,
        stack: &mut Vec<Visit>,
    ) {
        let enter = |order: &mut DfsOrder, node: NodeId| Visit {
            dfn: order.dfn[node.index()],
            next: graph.first_edge[node.index()],
            end: graph.first_edge[node.index() + 1],
            from_root: node == NodeId::ROOT,
        };
        self.number(start, parent, virtual_child);
        stack.push(enter(self, start));
        while let Some(top) = stack.last_mut() {
            let retains = table.row(top.from_root);
            let mut found = None;
            while top.next < top.end {
                let e = super::graph::EdgeId(top.next);
                top.next += 1;
                if !retains[graph.edge_type[e.0 as usize] as usize] {
                    continue;
                }
                let to = graph.edge_to(e);
                if self.dfn[to.index()] == NONE {
                    found = Some(to);
                    break;
                }
            }
            match found {
                Some(to) => {
                    let from = top.dfn;
                    self.number(to, from, false);
                    stack.push(enter(self, to));
                }
                None => {
                    stack.pop();
                }
            }
        }
    }
}

/// A node on the DFS stack: its number and the edges still to follow.
struct Visit {
    dfn: u32,
    next: u32,
    end: u32,
    from_root: bool,
}

/// Semidominators as in Lengauer–Tarjan (step 2, with `eval`/`link` and
/// path compression), then immediate dominators by the "semi-NCA" rule
/// (Georgiadis, *Linear-Time Algorithms for Dominators and Related
/// Problems*, 2005): in DFS order, start from the DFS parent and climb the
/// dominators found so far while they lie below the semidominator. It needs
/// no buckets, and the idoms overwrite the parent array in place, which
/// saves 12 bytes a node over the bucket version at the engine's peak.
/// Returns idom by DFS number, and the forest's memory for the retained
/// sizes (`retained_sizes`). The reverse index is freed once read: on a
/// thread of its own when `threads` > 1, here with one (`-j 1` starts no
/// thread for it).
fn semidominators_to_idoms(
    order: &DfsOrder,
    retainers: Retainers,
    mut parent: Vec<u32>,
    threads: usize,
) -> (Vec<u32>, Vec<Link>) {
    let n = order.vertex.len();
    let mut semi: Vec<u32> = vec![0; n];
    let mut forest: Vec<Link> = (0..n as u32)
        .map(|v| Link {
            ancestor: NONE,
            best: v,
        })
        .collect();
    let mut path = Vec::new();
    for w in (1..n).rev() {
        let node = order.vertex[w];
        let mut semi_w = w as u32;
        // Retainers hold DFS numbers here (see `Dominators::compute`).
        for pred in retainers.of(node) {
            semi_w = semi_w.min(eval(pred.0, &mut forest, &mut path));
        }
        if parent[w] & VIRTUAL != 0 {
            semi_w = 0;
            parent[w] &= !VIRTUAL;
        }
        semi[w] = semi_w;
        forest[w] = Link {
            ancestor: parent[w],
            best: semi_w,
        };
    }
    if threads > 1 {
        super::reuse::free_beside(retainers);
    } else {
        drop(retainers);
    }
    // parent[w] becomes idom[w]: every x < w already holds its idom.
    for w in 1..n {
        let mut candidate = parent[w];
        while candidate > semi[w] {
            candidate = parent[candidate as usize];
        }
        parent[w] = candidate;
    }
    (parent, forest)
}

/// A vertex's place in the Lengauer–Tarjan forest. `best` is the smallest
/// semidominator on its compressed path, the value itself rather than the
/// textbook's `label` (the vertex that has it): `eval` then reads no
/// `semi[label[…]]` at a third, random place, and the two fields share a
/// cache line. A vertex not yet linked has `best` = its own number, which
/// is its semidominator's starting value. Aligned like a `u64`, so that
/// the forest's memory becomes the retained sizes' in place (a new 8
/// bytes a node, faulted in page by page, was most of their time).
#[derive(Clone, Copy)]
#[repr(C, align(8))]
struct Link {
    ancestor: u32,
    best: u32,
}

/// The smallest semidominator on the compressed path from `v` up to (not
/// including) the root of its tree in the forest; `v`'s own number if it is
/// not linked yet.
fn eval(v: u32, forest: &mut [Link], path: &mut Vec<u32>) -> u32 {
    let ancestor = forest[v as usize].ancestor;
    if ancestor != NONE && forest[ancestor as usize].ancestor != NONE {
        compress(v, forest, path);
    }
    forest[v as usize].best
}

/// Points every vertex on `v`'s path at the root's child, folding the
/// smallest semidominator down the path. Without recursion: the path is
/// collected, then folded from its top.
fn compress(v: u32, forest: &mut [Link], path: &mut Vec<u32>) {
    path.clear();
    let mut x = v;
    while forest[forest[x as usize].ancestor as usize].ancestor != NONE {
        path.push(x);
        x = forest[x as usize].ancestor;
    }
    while let Some(y) = path.pop() {
        let a = forest[forest[y as usize].ancestor as usize];
        let y = &mut forest[y as usize];
        y.best = y.best.min(a.best);
        y.ancestor = a.ancestor;
    }
}

#[cfg(test)]
#[path = "dominators_tests.rs"]
mod tests;
