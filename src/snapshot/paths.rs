//! Distances from the GC roots and the shortest retainer path to any node:
//! a breadth-first walk from the synthetic root over essential edges (weak
//! edges never retain; shortcut edges only from the root), remembering the
//! edge each node was first reached by.
//!
//! What the stack had in hand when the snapshot was written (the
//! `(Handle scope)` and `(Stack roots)` roots: a native call mid-way, a
//! JavaScript frame) is a root for that instant only and names no
//! variable: a listener array that `JSON.stringify` was walking is two
//! steps from them, and its path then loses `bus._events`. As DevTools
//! reaches everything from the user's roots first, the walk enters those
//! two only once every other root is exhausted (Node 26's snapshots, and
//! Node 20's inside a callback of native code, showed such paths).

use std::collections::VecDeque;

use super::graph::{EdgeId, HeapGraph, NodeId, NodeType};

const UNREACHED: u32 = u32::MAX;

/// The synthetic roots of what the stack held at the snapshot's instant,
/// walked last.
const TRANSIENT_ROOTS: [&str; 2] = ["(Handle scope)", "(Stack roots)"];

/// Each node's distance in edges from the root: all `inspect` needs of the
/// paths, at half their memory (it runs beside the dominator tree, where
/// the engine's memory peaks).
pub struct Distances {
    /// `u32::MAX` where no essential path reaches the node.
    distance: Vec<u32>,
}

impl Distances {
    pub fn compute(graph: &HeapGraph) -> Distances {
        Self::walk(graph, |_, _| {})
    }

    /// The breadth-first walk, telling `reached` each node and the edge
    /// it was first reached by.
    fn walk(graph: &HeapGraph, mut reached: impl FnMut(NodeId, EdgeId)) -> Distances {
        let n = graph.node_count();
        let mut distance = vec![UNREACHED; n];
        let mut queue = VecDeque::new();
        distance[0] = 0;
        queue.push_back(NodeId::ROOT);
        let table = graph.essential_types();
        let transient = |n: NodeId| {
            graph.node_type(n) == NodeType::Synthetic && TRANSIENT_ROOTS.contains(&graph.name(n))
        };
        // The edges into the transient roots, entered after the rest.
        let mut last: Vec<(NodeId, EdgeId)> = Vec::new();
        loop {
            while let Some(node) = queue.pop_front() {
                let next = distance[node.index()] + 1;
                for e in graph.edges(node) {
                    if !graph.retains(&table, node, e) {
                        continue;
                    }
                    let to = graph.edge_to(e);
                    if distance[to.index()] != UNREACHED {
                        continue;
                    }
                    if transient(to) && !last.iter().any(|(_, seen)| *seen == e) {
                        last.push((node, e));
                        continue;
                    }
                    distance[to.index()] = next;
                    reached(to, e);
                    queue.push_back(to);
                }
            }
            let Some((from, e)) = last.pop() else {
                break;
            };
            let to = graph.edge_to(e);
            if distance[to.index()] == UNREACHED {
                distance[to.index()] = distance[from.index()] + 1;
                reached(to, e);
                queue.push_back(to);
            }
        }
        Distances { distance }
    }

    /// Edges from the root to `n`, or `u32::MAX` when no essential path
    /// reaches it.
    pub fn of(&self, n: NodeId) -> u32 {
        self.distance[n.index()]
    }

    pub fn reachable(&self, n: NodeId) -> bool {
        self.distance[n.index()] != UNREACHED
    }

    /// Nodes no essential path reaches.
    pub fn unreached_count(&self) -> u64 {
        self.distance.iter().filter(|d| **d == UNREACHED).count() as u64
    }
}

pub struct Paths {
    pub distances: Distances,
    /// The edge a node was first reached by; its source is found from the
    /// graph's edge offsets, so no per-node source column is kept.
    parent_edge: Vec<u32>,
}

/// One step of a retainer path: the edge from `from` that leads on.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub from: NodeId,
    pub edge: EdgeId,
    pub to: NodeId,
}

impl Paths {
    pub fn compute(graph: &HeapGraph) -> Paths {
        let mut parent_edge = vec![u32::MAX; graph.node_count()];
        let distances = Distances::walk(graph, |to, e| parent_edge[to.index()] = e.0);
        Paths {
            distances,
            parent_edge,
        }
    }

    pub fn reachable(&self, n: NodeId) -> bool {
        self.distances.reachable(n)
    }

    /// The node an edge leaves from: the last node whose edges start at or before it.
    fn source_of(graph: &HeapGraph, edge: EdgeId) -> NodeId {
        let after = graph.first_edge.partition_point(|start| *start <= edge.0);
        NodeId((after - 1) as u32)
    }

    /// The shortest essential path from the root to `n`, root first.
    pub fn path_to(&self, graph: &HeapGraph, n: NodeId) -> Vec<Step> {
        let mut steps = Vec::new();
        let mut at = n;
        while at != NodeId::ROOT && self.reachable(at) {
            let edge = EdgeId(self.parent_edge[at.index()]);
            let from = Self::source_of(graph, edge);
            steps.push(Step { from, edge, to: at });
            at = from;
        }
        steps.reverse();
        steps
    }
}
