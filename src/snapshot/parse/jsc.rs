//! Snapshots in V8's format written by JavaScriptCore (Bun's
//! `Bun.generateHeapSnapshot("v8")`). One thing in them misleads the
//! holder: a compiled function (`FunctionCodeBlock`, and its unlinked and
//! program kin) keeps the constants its code reads, a module-level `const
//! sessions = {}` among them, by unnamed internal edges. They keep the
//! object alive to the collector, but they are a second path beside the
//! scope variable (`JSLexicalEnvironment --context sessions-->`), so the
//! object's dominator becomes `(GC roots)` and the holder a person would
//! name is lost. V8's code objects keep no such references to user
//! objects. Here those edges are made weak, as DevTools treats V8's weak
//! edges: still shown on paths, not counted as keeping anything. So are
//! the edges of the inspector's own `InjectedScript` objects, which hold
//! what leakcheck's evaluations made, not what the app keeps.

use crate::snapshot::graph::{EdgeType, HeapGraph, NodeId, NodeType};

/// A node name only JavaScriptCore writes: it marks the snapshot as Bun's.
const JSC_MARK: &str = "FunctionCodeBlock";

impl HeapGraph {
    /// Whether JavaScriptCore (Bun) wrote this snapshot: its node ids are
    /// then numbered afresh in each snapshot, not kept per object.
    pub fn written_by_javascriptcore(&self) -> bool {
        self.javascriptcore
    }
}

impl HeapGraph {
    /// The Map or Set whose storage (`Cell Butterfly`) is the largest:
    /// JavaScriptCore's snapshots give a Map its storage's size but no
    /// edge to any entry, so objects kept only in a Map are unreachable in
    /// them. When such objects grew, the largest store is taken as the one
    /// that keeps them (`holder.rs`), and its retainer path names it.
    pub fn largest_keyed_store(&self) -> Option<(NodeId, u64)> {
        let mut best: Option<(u64, NodeId)> = None;
        for n in self.nodes() {
            if self.node_type(n) != NodeType::Object || !matches!(self.name(n), "Map" | "Set") {
                continue;
            }
            for e in self.edges(n) {
                let store = self.edge_to(e);
                if self.node_type(store) == NodeType::Hidden && self.name(store) == "Cell Butterfly"
                {
                    let size = self.self_size(store);
                    if best.is_none_or(|(b, _)| size > b) {
                        best = Some((size, n));
                    }
                }
            }
        }
        best.map(|(size, n)| (n, size))
    }
}

/// Makes the edges of JavaScriptCore's code blocks weak and rebuilds the
/// reverse index; a snapshot V8 wrote is left as it is.
pub(super) fn weaken_code_block_edges(graph: &mut HeapGraph) {
    graph.javascriptcore = graph.strings.find(JSC_MARK).is_some();
    if !graph.javascriptcore {
        return;
    }
    let weak = match graph
        .edge_type_table
        .iter()
        .position(|t| *t == EdgeType::Weak)
    {
        Some(raw) => raw as u8,
        None => {
            graph.edge_type_table.push(EdgeType::Weak);
            (graph.edge_type_table.len() - 1) as u8
        }
    };
    let mut changed = false;
    for n in 0..graph.node_count() as u32 {
        let node = NodeId(n);
        let name = graph.name(node);
        let code_block = graph.node_type(node) == NodeType::Code && name.contains("CodeBlock");
        // The inspector's own objects (leakcheck's evaluations) are not the app's.
        let inspector = name.starts_with("InjectedScript");
        if !code_block && !inspector {
            continue;
        }
        let range =
            graph.first_edge[n as usize] as usize..graph.first_edge[n as usize + 1] as usize;
        for slot in &mut graph.edge_type[range] {
            *slot = weak;
            changed = true;
        }
    }
    if changed {
        let (first_retainer, retainers) = graph.retainers_for(&graph.first_edge);
        graph.first_retainer = first_retainer;
        graph.retainers = retainers;
    }
}
