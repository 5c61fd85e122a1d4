//! Naming what keeps a leak. For a grown class, each new object (in B, not
//! in A) is walked up the dominator tree to the first object that already
//! existed in A: the old object that grew to hold it. The holder is the one
//! such object that holds most of the class's new bytes; its shortest
//! retainer path from the GC roots, read from the end, names the variable
//! (`naming.rs`).

use rustc_hash::FxHashMap as HashMap;

use super::analysis::Analysis;
use super::classes::ClassIndex;
use super::diff::NewNodes;
use super::dominators::Dominators;
use super::graph::{EdgeId, EdgeType, HeapGraph, NodeId, NodeType};
use crate::model::Holder;

/// The least a Map or Set entry takes in JavaScriptCore's storage: its key
/// and its value, a pointer each.
const MIN_ENTRY_BYTES: u64 = 16;

/// A slot must carry at least this share of a holder's new bytes to name
/// it: a variable whose value is replaced carries all of them, while a
/// dictionary keyed per request spreads them over one key per request.
const SLOT_SHARE: f64 = 0.5;

/// What one holder keeps of a class: objects, their bytes, and the top of
/// the new subtrees under it (what the holder's slots point at) that
/// carries the most of those bytes.
#[derive(Default)]
struct Tally {
    objects: u64,
    new_bytes: u64,
    /// The child with the most new bytes, and its bytes (ties: the larger
    /// node id).
    largest_child: Option<(u64, NodeId)>,
    /// Children: the new subtrees it holds.
    tops: u64,
}

/// New objects of a class in the subtrees of one top that only a
/// synthetic root dominates, and that root.
struct Unowned {
    objects: u64,
    bytes: u64,
    root: NodeId,
}

/// A holder found by its tally, before its path is read: the object (or
/// its slot) that keeps most of a class's new bytes.
pub struct Found {
    class: String,
    node: NodeId,
    slot: Option<EdgeId>,
    objects: u64,
    new_bytes: u64,
    /// The class of the top it keeps the most of, when that is another
    /// (the `<div>` that holds the grown `<p>`s), and how many tops.
    root_class: Option<String>,
    roots: u64,
}

/// What the holders' tallies of every class looked at share, by node:
///
/// - `child_bytes`: new bytes under each top of a new subtree (a leak of
///   records has one per record: a hash map of them was most of the
///   holders' time). Each tally leaves it zeroed again, touching only the
///   slots it used, so one array serves every class.
/// - `new_top`: for a new node a long climb went through, the top of its
///   new subtree, plus one (0: not known yet). A new object's holder is found
///   by climbing the dominator tree through new objects; in a chain that
///   grew by one link a request (`list = { prev: list }`) each link
///   dominates the older ones, and climbing from every link afresh was
///   quadratic: 16 s for 150 000 links (a 14 MB snapshot). Each node is
///   now climbed through a bounded number of times.
///
/// Both are allocated zeroed, so their pages are touched only where used:
/// `new_top` only by chains deeper than `PLAIN_STEPS`.
pub struct HolderScratch {
    child_bytes: Vec<u64>,
    new_top: Vec<u32>,
    /// The nodes of one climb, given its top when it ends.
    climbed: Vec<NodeId>,
    /// Steps climbed in all (the tests' measure of the work).
    #[cfg(test)]
    steps: usize,
}

impl HolderScratch {
    pub fn new(graph: &HeapGraph) -> HolderScratch {
        HolderScratch {
            child_bytes: vec![0; graph.node_count()],
            new_top: vec![0; graph.node_count()],
            climbed: Vec::new(),
            #[cfg(test)]
            steps: 0,
        }
    }
}

/// The holders of the new objects of `class` in the later snapshot,
/// largest first, at most `limit`: what needs only the graph and its
/// dominators, so that it runs while the paths are still being found.
pub fn tally_holders(
    graph: &HeapGraph,
    dominators: &Dominators,
    classes: &ClassIndex,
    new: &NewNodes,
    class: &str,
    limit: usize,
    scratch: &mut HolderScratch,
) -> Vec<Found> {
    let Some(class_id) = classes.names.iter().position(|c| c == class) else {
        return Vec::new();
    };
    // The child's holder is its immediate dominator.
    let mut children = Vec::new();
    let mut by_holder: HashMap<NodeId, Tally> = HashMap::default();
    let mut unowned: HashMap<NodeId, Unowned> = HashMap::default();
    let opaque_store = std::sync::OnceLock::new();
    for n in graph.nodes() {
        if !new.is_new[n.index()] || classes.of[n.index()] != class_id as u32 {
            continue;
        }
        let (mut at, child) = first_old_dominator(graph, dominators, new, n, scratch);
        // Bun's snapshots list no Map or Set entries: what only such a
        // store keeps has no retainer at all (`parse/jsc.rs`).
        if at == NodeId::ROOT
            && graph.written_by_javascriptcore()
            && let Some((store, _)) = *opaque_store.get_or_init(|| graph.largest_keyed_store())
        {
            at = store;
        }
        if at == NodeId::ROOT {
            // Nothing but the roots keeps it (an internalized string in
            // the string table): no holder to name.
            continue;
        }
        if graph.node_type(at) == NodeType::Synthetic {
            let top = unowned.entry(child).or_insert(Unowned {
                objects: 0,
                bytes: 0,
                root: at,
            });
            top.objects += 1;
            top.bytes += graph.self_size(n);
            continue;
        }
        let child_bytes = &mut scratch.child_bytes;
        let tally = by_holder.entry(at).or_default();
        tally.objects += 1;
        tally.new_bytes += graph.self_size(n);
        if child_bytes[child.index()] == 0 {
            children.push(child);
        }
        child_bytes[child.index()] += graph.self_size(n);
    }
    for child in children {
        let bytes = std::mem::take(&mut scratch.child_bytes[child.index()]);
        // A child's immediate dominator is the holder it was counted for.
        let Some(tally) = by_holder.get_mut(&dominators.idom(child)) else {
            continue;
        };
        tally.count_child(child, bytes);
    }
    // A store too small to hold an entry per object it was given did not
    // keep them (they are held where the snapshot shows nothing: Bun's
    // native listener lists).
    if let Some(Some((store, bytes))) = opaque_store.get()
        && by_holder
            .get(store)
            .is_some_and(|t| *bytes < MIN_ENTRY_BYTES * t.objects)
    {
        by_holder.remove(store);
    }
    let owners = old_owners(graph, dominators, new, unowned.keys().copied());
    for (top, kept) in unowned {
        let holder = owners.get(&top).copied().unwrap_or(kept.root);
        let tally = by_holder.entry(holder).or_default();
        tally.objects += kept.objects;
        tally.new_bytes += kept.bytes;
        tally.count_child(top, kept.bytes);
    }
    let mut holders: Vec<(NodeId, Tally)> = by_holder.into_iter().collect();
    holders.sort_by(|x, y| y.1.new_bytes.cmp(&x.1.new_bytes).then(x.0.cmp(&y.0)));
    holders
        .into_iter()
        .take(limit)
        .map(|(node, tally)| Found {
            class: class.to_string(),
            node,
            slot: replaced_slot(graph, node, &tally),
            objects: tally.objects,
            new_bytes: tally.new_bytes,
            root_class: tally
                .largest_child
                .map(|(_, top)| classes.names[classes.of[top.index()] as usize].clone())
                .filter(|root| root != class),
            roots: tally.tops,
        })
        .collect()
}

impl Tally {
    fn count_child(&mut self, child: NodeId, bytes: u64) {
        self.tops += 1;
        if self
            .largest_child
            .is_none_or(|(b, c)| (bytes, child.0) > (b, c.0))
        {
            self.largest_child = Some((bytes, child));
        }
    }
}

/// The old objects that point straight at new subtrees which only a
/// synthetic root dominates. A view kept in a list and also reached by a
/// listener the page registered (through Blink's native objects) has two
/// retainers that meet only at the roots; the dominator tree then names
/// `(GC roots)`, and the list, what the code calls, is the old JS object
/// among the top's retainers. An internal store (an array's elements, a
/// Map's table, new when it grew) stands for the object that owns it.
fn old_owners(
    graph: &HeapGraph,
    dominators: &Dominators,
    new: &NewNodes,
    tops: impl Iterator<Item = NodeId>,
) -> HashMap<NodeId, NodeId> {
    let mut wanted = vec![false; graph.node_count()];
    let mut any = false;
    for top in tops {
        wanted[top.index()] = true;
        any = true;
    }
    let mut owners = HashMap::default();
    if !any {
        return owners;
    }
    let is_old = |n: NodeId| !new.is_new[n.index()];
    for (top, from, edge) in graph.edges_into_any(&wanted) {
        if owners.contains_key(&top)
            || !matches!(
                graph.edge_type(edge),
                EdgeType::Element | EdgeType::Property | EdgeType::Context | EdgeType::Internal
            )
        {
            continue;
        }
        let owner = match graph.node_type(from) {
            NodeType::Object | NodeType::Closure => from,
            NodeType::Array | NodeType::Hidden => dominators.idom(from),
            _ => continue,
        };
        if is_old(owner) && matches!(graph.node_type(owner), NodeType::Object | NodeType::Closure) {
            owners.insert(top, owner);
        }
    }
    owners
}

/// A holder found, named: its retainer path and the variable it reads as.
pub fn describe_holder(b: &Analysis, found: &Found) -> Holder {
    let mut holder = super::naming::describe(
        b,
        &found.class,
        found.node,
        found.slot,
        found.objects,
        found.new_bytes,
    );
    holder.root_class = found.root_class.clone();
    holder.roots = found.roots;
    holder
}

/// Climbs the dominator tree from a new object to the first object that
/// existed before (the holder), and the node just below it (the top of
/// the new subtree, what the holder's slot points at).
fn first_old_dominator(
    graph: &HeapGraph,
    dominators: &Dominators,
    new: &NewNodes,
    n: NodeId,
    scratch: &mut HolderScratch,
) -> (NodeId, NodeId) {
    let mut child = new_subtree_top(dominators, new, n, scratch);
    let mut at = dominators.idom(child);
    // An internal store (a Map's hash table, an array's elements) is
    // reported as the object that owns it, which is what the code names.
    while matches!(graph.node_type(at), NodeType::Array | NodeType::Hidden)
        && graph.node_type(dominators.idom(at)) == NodeType::Object
    {
        child = at;
        at = dominators.idom(at);
    }
    (at, child)
}

/// Steps climbed from a new object before the climb consults and fills
/// `HolderScratch::new_top`: the seed pair's strings and arrays (235 000
/// of each) sit two new objects deep, and remembering every such climb
/// doubled the holders' time (8 → 14 ms); a chain deeper than this is
/// climbed through once.
const PLAIN_STEPS: usize = 8;

/// The topmost new node on the dominator chain from `n` (itself when its
/// immediate dominator is old or the root). Past `PLAIN_STEPS`, the
/// climb stops at a node whose top is known, and remembers the top for
/// every node it passed (`HolderScratch::new_top`).
fn new_subtree_top(
    dominators: &Dominators,
    new: &NewNodes,
    n: NodeId,
    scratch: &mut HolderScratch,
) -> NodeId {
    let is_top = |at: NodeId| {
        let up = dominators.idom(at);
        up == NodeId::ROOT || !new.is_new[up.index()]
    };
    let mut at = n;
    for _ in 0..PLAIN_STEPS {
        if is_top(at) {
            return at;
        }
        at = dominators.idom(at);
        #[cfg(test)]
        {
            scratch.steps += 1;
        }
    }
    let climbed = &mut scratch.climbed;
    climbed.clear();
    let top = loop {
        let known = scratch.new_top[at.index()];
        if known != 0 {
            break NodeId(known - 1);
        }
        climbed.push(at);
        if is_top(at) {
            break at;
        }
        at = dominators.idom(at);
    };
    for node in climbed.iter() {
        scratch.new_top[node.index()] = top.0 + 1;
    }
    #[cfg(test)]
    {
        scratch.steps += climbed.len();
    }
    top
}

/// The slot that names a replaced value: a variable (context edge) or a
/// property through which the holder reaches most of what is new. When a
/// variable is reassigned each request (`log += line`, `list = { prev:
/// list }`, `state = { ...state }`), the holder's slot keeps a new object
/// each time, so the object that existed before is the enclosing scope or
/// object, and the slot is what the code calls the leak.
///
/// Found for the holders shown only, in one pass over the holder's edges:
/// a synthetic root directly dominates one subtree per new object, and a
/// search of its edges per object would be quadratic.
fn replaced_slot(graph: &HeapGraph, holder: NodeId, tally: &Tally) -> Option<EdgeId> {
    let (bytes, child) = tally.largest_child?;
    if (bytes as f64) < SLOT_SHARE * tally.new_bytes as f64 {
        return None;
    }
    let slot = graph.edges(holder).find(|e| graph.edge_to(*e) == child)?;
    matches!(
        graph.edge_type(slot),
        EdgeType::Context | EdgeType::Property
    )
    .then_some(slot)
}

#[cfg(test)]
#[path = "holder_tests.rs"]
mod tests;
