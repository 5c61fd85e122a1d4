//! The heap graph in columns. A V8 snapshot lists nodes and edges as flat
//! integer arrays; here each field gets its own column, indexed by a
//! newtype (`NodeId`, `EdgeId`, `StringId`), so a node costs 18 bytes and an
//! edge 9, whatever the file's text took.
//!
//! Encoding:
//! - Nodes are numbered by their order in the file (`NodeId(0)` is the
//!   synthetic root). Node `n`'s outgoing edges are `first_edge[n] ..
//!   first_edge[n + 1]` (CSR), in file order.
//! - `edge_to` holds the target's `NodeId` (the file's `to_node` divided by
//!   the node field count). `edge_name` is a `StringId` for context,
//!   property, internal, shortcut and weak edges, and a plain index for
//!   element and hidden edges (see `EdgeType::name_is_index`).
//! - Retainers (the reverse index) list, per node, the sources of its
//!   *essential* edges only: weak edges never retain, and shortcut edges
//!   count only from the root (they mark user roots). Dominators and paths
//!   use exactly these.

/// A node's position in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);
/// An edge's position in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EdgeId(pub u32);
/// An index into the snapshot's `strings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StringId(pub u32);

impl NodeId {
    pub const ROOT: NodeId = NodeId(0);
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The reverse index of essential edges: `list[first[n]..first[n + 1]]`
/// holds one entry per essential edge into node `n`, in edge order.
pub struct Retainers {
    pub(crate) first: Vec<u32>,
    pub(crate) list: Vec<NodeId>,
}

impl Retainers {
    pub fn of(&self, n: NodeId) -> &[NodeId] {
        &self.list[self.first[n.index()] as usize..self.first[n.index() + 1] as usize]
    }
}

/// Which raw edge types retain, from the root and from any other node.
pub(crate) struct EssentialTypes {
    anywhere: [bool; 256],
    from_root: [bool; 256],
}

impl EssentialTypes {
    /// Whether each raw edge type retains, from the root or from another
    /// node: for a loop over one node's edges.
    pub(crate) fn row(&self, from_root: bool) -> &[bool; 256] {
        if from_root {
            &self.from_root
        } else {
            &self.anywhere
        }
    }
}

/// Interned strings: one byte arena and the start of each string.
#[derive(Debug, Default)]
pub struct Strings {
    pub(crate) bytes: Vec<u8>,
    /// `starts[i]..starts[i + 1]` is string `i` (u32: the parser refuses
    /// an arena past 4 GiB, far beyond any snapshot this engine can hold).
    pub(crate) starts: Vec<u32>,
}

impl Strings {
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The id of a string, by a scan of the table (V8 writes each string
    /// once). Compares bytes: validating each of half a million strings as
    /// UTF-8 made this scan half of building the class index.
    pub fn find(&self, text: &str) -> Option<StringId> {
        (0..self.len() as u32)
            .map(StringId)
            .find(|id| self.bytes_of(*id) == text.as_bytes())
    }

    pub fn get(&self, id: StringId) -> &str {
        // The scanner copies the file's bytes; a file that is not UTF-8
        // reads as empty names rather than a panic.
        std::str::from_utf8(self.bytes_of(id)).unwrap_or("")
    }

    /// The raw bytes of a string, for hashing without validating.
    pub fn bytes_of(&self, id: StringId) -> &[u8] {
        let i = id.0 as usize;
        if i + 1 >= self.starts.len() {
            return b"";
        }
        &self.bytes[self.starts[i] as usize..self.starts[i + 1] as usize]
    }
}

/// The kinds of `meta.node_types[0]` leakcheck tells apart; others map to `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeType {
    Hidden,
    Array,
    String,
    Object,
    Code,
    Closure,
    Regexp,
    Number,
    Native,
    Synthetic,
    ConcatenatedString,
    SlicedString,
    Symbol,
    BigInt,
    ObjectShape,
    Other,
}

impl NodeType {
    /// String nodes, which V8 names by their value: what `inspect` never
    /// prints (`shown.rs`) and what `redact.rs` hides.
    pub fn is_string_value(self) -> bool {
        matches!(
            self,
            NodeType::String | NodeType::ConcatenatedString | NodeType::SlicedString
        )
    }

    pub fn from_name(name: &str) -> NodeType {
        match name {
            "hidden" => NodeType::Hidden,
            "array" => NodeType::Array,
            "string" => NodeType::String,
            "object" => NodeType::Object,
            "code" => NodeType::Code,
            "closure" => NodeType::Closure,
            "regexp" => NodeType::Regexp,
            "number" => NodeType::Number,
            "native" => NodeType::Native,
            "synthetic" => NodeType::Synthetic,
            "concatenated string" => NodeType::ConcatenatedString,
            "sliced string" => NodeType::SlicedString,
            "symbol" => NodeType::Symbol,
            "bigint" => NodeType::BigInt,
            "object shape" => NodeType::ObjectShape,
            _ => NodeType::Other,
        }
    }

    /// The name V8 writes in `meta.node_types` (what DevTools and the method's
    /// script print); `Other` stands for every kind leakcheck does not tell apart.
    pub fn v8_name(self) -> &'static str {
        match self {
            NodeType::Hidden => "hidden",
            NodeType::Array => "array",
            NodeType::String => "string",
            NodeType::Object => "object",
            NodeType::Code => "code",
            NodeType::Closure => "closure",
            NodeType::Regexp => "regexp",
            NodeType::Number => "number",
            NodeType::Native => "native",
            NodeType::Synthetic => "synthetic",
            NodeType::ConcatenatedString => "concatenated string",
            NodeType::SlicedString => "sliced string",
            NodeType::Symbol => "symbol",
            NodeType::BigInt => "bigint",
            NodeType::ObjectShape => "object shape",
            NodeType::Other => "other",
        }
    }
}

/// The kinds of `meta.edge_types[0]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeType {
    Context,
    Element,
    Property,
    Internal,
    Hidden,
    Shortcut,
    Weak,
    Other,
}

impl EdgeType {
    pub fn from_name(name: &str) -> EdgeType {
        match name {
            "context" => EdgeType::Context,
            "element" => EdgeType::Element,
            "property" => EdgeType::Property,
            "internal" => EdgeType::Internal,
            "hidden" => EdgeType::Hidden,
            "shortcut" => EdgeType::Shortcut,
            "weak" => EdgeType::Weak,
            _ => EdgeType::Other,
        }
    }

    /// Element and hidden edges are named by a number, the others by a string.
    pub fn name_is_index(self) -> bool {
        matches!(self, EdgeType::Element | EdgeType::Hidden)
    }
}

/// A parsed snapshot.
#[derive(Debug, Default)]
pub struct HeapGraph {
    /// Per-snapshot type tables, indexed by the raw type number.
    pub(crate) node_type_table: Vec<NodeType>,
    pub(crate) edge_type_table: Vec<EdgeType>,
    pub(crate) node_type: Vec<u8>,
    pub(crate) node_name: Vec<StringId>,
    pub(crate) node_id: Vec<u32>,
    pub(crate) self_size: Vec<u32>,
    pub(crate) detachedness: Vec<u8>,
    /// CSR offsets into the edge columns, `node_count + 1` long.
    pub(crate) first_edge: Vec<u32>,
    pub(crate) edge_type: Vec<u8>,
    pub(crate) edge_name: Vec<u32>,
    pub(crate) edge_to: Vec<NodeId>,
    /// CSR offsets into `retainers`, `node_count + 1` long.
    pub(crate) first_retainer: Vec<u32>,
    /// Sources of essential edges, grouped by target.
    pub(crate) retainers: Vec<NodeId>,
    pub strings: Strings,
    /// Bytes of input the snapshot was parsed from.
    pub file_bytes: u64,
    /// Where the `strings` array lies in the file: the offset of its value
    /// and the offset just past its `]` (what `redact.rs` rewrites).
    pub(crate) strings_span: (u64, u64),
    /// JavaScriptCore (Bun) wrote it (`parse/jsc.rs`): ids are per
    /// snapshot and property order is not an object's shape.
    pub(crate) javascriptcore: bool,
}

impl HeapGraph {
    pub fn node_count(&self) -> usize {
        self.node_id.len()
    }
    pub fn edge_count(&self) -> usize {
        self.edge_to.len()
    }
    pub fn nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.node_count() as u32).map(NodeId)
    }
    pub fn node_type(&self, n: NodeId) -> NodeType {
        self.node_type_of_raw(self.node_type[n.index()])
    }
    /// The kind a raw type number of this snapshot stands for.
    pub fn node_type_of_raw(&self, raw: u8) -> NodeType {
        self.node_type_table
            .get(raw as usize)
            .copied()
            .unwrap_or(NodeType::Other)
    }
    pub fn name(&self, n: NodeId) -> &str {
        self.strings.get(self.node_name[n.index()])
    }
    /// The snapshot's stable object id (the same object keeps it across
    /// snapshots of one process; higher ids were allocated later).
    pub fn id(&self, n: NodeId) -> u32 {
        self.node_id[n.index()]
    }
    pub fn self_size(&self, n: NodeId) -> u64 {
        u64::from(self.self_size[n.index()])
    }
    pub fn detachedness(&self, n: NodeId) -> u8 {
        self.detachedness.get(n.index()).copied().unwrap_or(0)
    }
    pub fn edges(&self, n: NodeId) -> impl Iterator<Item = EdgeId> + use<> {
        (self.first_edge[n.index()]..self.first_edge[n.index() + 1]).map(EdgeId)
    }
    pub fn edge_type(&self, e: EdgeId) -> EdgeType {
        self.edge_type_of_raw(self.edge_type[e.0 as usize])
    }
    pub fn edge_to(&self, e: EdgeId) -> NodeId {
        self.edge_to[e.0 as usize]
    }
    /// The edge's name as DevTools prints it: `[3]` for element and hidden
    /// edges, the property or variable name otherwise.
    pub fn edge_name(&self, e: EdgeId) -> String {
        let raw = self.edge_name[e.0 as usize];
        if self.edge_type(e).name_is_index() {
            format!("[{raw}]")
        } else {
            self.strings.get(StringId(raw)).to_string()
        }
    }
    /// The edge's string name, without allocating; `None` for element and
    /// hidden edges, which are named by an index.
    pub fn edge_name_str(&self, e: EdgeId) -> Option<&str> {
        if self.edge_type(e).name_is_index() {
            return None;
        }
        Some(self.strings.get(StringId(self.edge_name[e.0 as usize])))
    }

    /// The edge columns and offsets, taken out for their last reader to
    /// free them beside other work; the graph has no edges after.
    pub(crate) fn take_edges(&mut self) -> (Vec<u32>, Vec<u8>, Vec<u32>, Vec<NodeId>) {
        (
            std::mem::take(&mut self.first_edge),
            std::mem::take(&mut self.edge_type),
            std::mem::take(&mut self.edge_name),
            std::mem::take(&mut self.edge_to),
        )
    }

    /// The reverse index of essential edges, taken out of the graph: the
    /// dominator tree consumes it (it is the largest structure after the
    /// edges, and only that algorithm needs it for every node).
    pub fn take_retainers(&mut self) -> Retainers {
        Retainers {
            first: std::mem::take(&mut self.first_retainer),
            list: std::mem::take(&mut self.retainers),
        }
    }

    /// Essential edges into `n`, in edge order, by one scan of every edge:
    /// for the few nodes (holders) that need it after the index is gone.
    pub fn edges_into(&self, n: NodeId) -> Vec<(NodeId, EdgeId)> {
        /// Edges tested at once: the test of a whole chunk (an `|` of
        /// comparisons, no early exit) is vectorised; the rare chunk that
        /// holds `n` is then read edge by edge.
        const CHUNK: usize = 64;
        let mut found = Vec::new();
        for (c, chunk) in self.edge_to.chunks(CHUNK).enumerate() {
            if !chunk.iter().fold(false, |any, to| any | (*to == n)) {
                continue;
            }
            for (k, to) in chunk.iter().enumerate() {
                if *to != n {
                    continue;
                }
                let e = c * CHUNK + k;
                let edge = EdgeId(e as u32);
                let from =
                    NodeId((self.first_edge.partition_point(|start| *start <= edge.0) - 1) as u32);
                if self.is_essential(from, self.edge_type(edge)) {
                    found.push((from, edge));
                }
            }
        }
        found
    }

    /// Essential edges into any node `wanted` marks, as (to, from, edge),
    /// by one scan of every edge: `edges_into` for a set of nodes (the new
    /// objects only the roots dominate, `holder.rs`).
    pub fn edges_into_any(&self, wanted: &[bool]) -> Vec<(NodeId, NodeId, EdgeId)> {
        let mut found = Vec::new();
        for (e, to) in self.edge_to.iter().enumerate() {
            if !wanted[to.index()] {
                continue;
            }
            let edge = EdgeId(e as u32);
            let from =
                NodeId((self.first_edge.partition_point(|start| *start <= edge.0) - 1) as u32);
            if self.is_essential(from, self.edge_type(edge)) {
                found.push((*to, from, edge));
            }
        }
        found
    }

    /// `is_essential` for every raw edge type, looked up once for the
    /// loops over all edges (the DFS, the reverse index, the paths): a
    /// table read instead of the type's decoding per edge.
    pub(crate) fn essential_types(&self) -> EssentialTypes {
        let mut anywhere = [true; 256];
        let mut from_root = [true; 256];
        // `is_essential` tells the root from any other node, nothing more.
        let not_the_root = NodeId(1);
        for (raw, slot) in anywhere.iter_mut().enumerate() {
            let t = self.edge_type_of_raw(raw as u8);
            *slot = self.is_essential(not_the_root, t);
            from_root[raw] = self.is_essential(NodeId::ROOT, t);
        }
        EssentialTypes {
            anywhere,
            from_root,
        }
    }

    pub(super) fn edge_type_of_raw(&self, raw: u8) -> EdgeType {
        self.edge_type_table
            .get(raw as usize)
            .copied()
            .unwrap_or(EdgeType::Other)
    }

    /// Per raw edge type, whether its name is a string id (all but element
    /// and hidden edges, whose name is an index): one lookup an edge in
    /// the loops over every edge that read names.
    pub(super) fn string_named_edge_types(&self) -> [bool; 256] {
        std::array::from_fn(|raw| !self.edge_type_of_raw(raw as u8).name_is_index())
    }

    /// Whether edge `e`, from `from`, keeps its target alive (the table's
    /// answer to `is_essential`).
    #[inline]
    pub(crate) fn retains(&self, table: &EssentialTypes, from: NodeId, e: EdgeId) -> bool {
        let raw = self.edge_type[e.0 as usize] as usize;
        if from == NodeId::ROOT {
            table.from_root[raw]
        } else {
            table.anywhere[raw]
        }
    }

    /// Whether an edge from `from` of type `t` keeps its target alive
    /// (DevTools' "essential edge").
    pub fn is_essential(&self, from: NodeId, t: EdgeType) -> bool {
        t != EdgeType::Weak && (t != EdgeType::Shortcut || from == NodeId::ROOT)
    }

    /// The reverse index of essential edges, for edge offsets
    /// `first_edge` (called once by the parser, before it sets them, so
    /// that the graph can be read beside it): the start of each node's
    /// range, and the retaining nodes.
    pub(crate) fn retainers_for(&self, first_edge: &[u32]) -> (Vec<u32>, Vec<NodeId>) {
        let n = self.node_count();
        // Counts summed into the end of each node's range, then filled from
        // the back, edges in reverse: each range ends in edge order with
        // `first[to]` at its start (no second array of cursors).
        let table = self.essential_types();
        let edges = |from: usize| first_edge[from]..first_edge[from + 1];
        let mut first = vec![0u32; n + 1];
        for from in 0..n {
            for e in edges(from).map(EdgeId) {
                if self.retains(&table, NodeId(from as u32), e) {
                    first[self.edge_to(e).index()] += 1;
                }
            }
        }
        let mut sum = 0;
        for f in &mut first {
            sum += *f;
            *f = sum;
        }
        let mut retainers = vec![NodeId(0); sum as usize];
        for from in (0..n).rev() {
            for e in edges(from).rev().map(EdgeId) {
                if self.retains(&table, NodeId(from as u32), e) {
                    let to = self.edge_to(e).index();
                    first[to] -= 1;
                    retainers[first[to] as usize] = NodeId(from as u32);
                }
            }
        }
        (first, retainers)
    }
}
