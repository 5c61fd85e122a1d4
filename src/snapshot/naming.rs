//! Naming a holder found by its tally (`holder.rs`): the retainer path to
//! it through its most telling retainer, read from the end as the
//! variable or property the code calls the leak, what kind of holder that
//! is, and the script whose closure keeps it.

use super::analysis::Analysis;
use super::classes::class_key;
use super::graph::{EdgeId, EdgeType, NodeId, NodeType};
use super::paths::Step;
use crate::model::{Holder, HolderKind, PathStep};

/// The path to `node` through its most telling retainer: a variable
/// (context edge) first, then a property, an element, anything else; among
/// equals the one nearest the roots. The plain shortest path often runs
/// through "(Stack roots)" and names nothing.
fn naming_path(b: &Analysis, node: NodeId) -> Vec<Step> {
    let graph = &b.graph;
    let rank = |t: EdgeType| match t {
        EdgeType::Context => 0,
        EdgeType::Property => 1,
        EdgeType::Element => 2,
        _ => 3,
    };
    let mut best: Option<(u32, u32, Step)> = None;
    for (from, e) in graph.edges_into(node) {
        if !b.paths.reachable(from) || graph.node_type(from) == NodeType::Synthetic {
            continue;
        }
        let key = (rank(graph.edge_type(e)), b.paths.distances.of(from));
        if best.as_ref().is_none_or(|(r, d, _)| key < (*r, *d)) {
            best = Some((
                key.0,
                key.1,
                Step {
                    from,
                    edge: e,
                    to: node,
                },
            ));
        }
    }
    match best {
        Some((_, _, last)) => {
            let mut steps = b.paths.path_to(&b.graph, last.from);
            steps.push(last);
            steps
        }
        None => b.paths.path_to(&b.graph, node),
    }
}

pub(super) fn describe(
    b: &Analysis,
    class: &str,
    node: NodeId,
    slot: Option<EdgeId>,
    objects: u64,
    new_bytes: u64,
) -> Holder {
    let graph = &b.graph;
    let mut steps = naming_path(b, node);
    if let Some(slot) = slot {
        steps.push(Step {
            from: node,
            edge: slot,
            to: graph.edge_to(slot),
        });
    }
    let path: Vec<PathStep> = steps
        .iter()
        .map(|s| PathStep {
            edge_type: format!("{:?}", graph.edge_type(s.edge)).to_lowercase(),
            edge_name: graph.edge_name(s.edge),
            node_type: graph.node_type(s.to).v8_name().to_string(),
            node_name: graph.name(s.to).to_string(),
            node_id: graph.id(s.to),
        })
        .collect();
    let (mut name, mut kind, named_from) = variable(b, &steps, node, slot.is_some());
    let mut text = String::from("(root)");
    for step in &path {
        let edge = match step.edge_type.as_str() {
            "element" | "hidden" => step.edge_name.clone(),
            _ => format!("{} {}", step.edge_type, step.edge_name),
        };
        text.push_str(&format!(
            " → [{edge}] {} \"{}\" @{}",
            step.node_type, step.node_name, step.node_id
        ));
    }
    let script = steps
        .iter()
        .rev()
        .find(|s| graph.edge_type(s.edge) == EdgeType::Context || is_context(b, s.from))
        .and_then(|s| script_of_context(b, s.from));
    // Through a replaced slot, the object that keeps the leak is the
    // slot's current value, not the scope or object that has the slot.
    let kept = slot.map_or(node, |e| graph.edge_to(e));
    let framework = super::framework_names::recognise(b, &steps, named_from, kept, &name);
    let mut script = script;
    if let Some(named) = &framework {
        name.clone_from(&named.name);
        // A framework's holder is named by what it is (`app.middleware`),
        // not by the variable the engine reached it through, whose script
        // (koa-compose's) would say where to look in the wrong place.
        if let Some(framework_kind) = named.kind {
            kind = framework_kind;
            script = None;
        }
    }
    Holder {
        class: class.to_string(),
        name,
        kind,
        script,
        holder_class: class_key(graph, kept),
        holder_id: graph.id(kept),
        slot: slot.map(|e| graph.edge_name(e)),
        objects,
        new_bytes,
        retained_bytes: b.dominators.retained(kept),
        path,
        path_text: text,
        framework: framework.map(|named| named.framework),
        ..Holder::default()
    }
}

/// Reads the path from its end: the names after the last variable (context
/// edge) or global object, joined as code would write them; with the kind
/// of holder its structure makes it, and the step the name starts at.
fn variable(
    b: &Analysis,
    steps: &[Step],
    holder: NodeId,
    through_slot: bool,
) -> (String, HolderKind, usize) {
    let graph = &b.graph;
    let mut parts: Vec<String> = Vec::new();
    let mut kind: Option<HolderKind> = None;
    // Where the name starts: the kind is read from these steps only, not
    // from whatever route the roots happen to reach the variable by.
    let mut naming_from = steps.len();
    for (index, step) in steps.iter().enumerate().rev() {
        if graph.node_type(step.from) == NodeType::Synthetic {
            break;
        }
        naming_from = index;
        let t = graph.edge_type(step.edge);
        let name = graph.edge_name(step.edge);
        if is_context(b, step.from) && matches!(t, EdgeType::Element | EdgeType::Hidden) {
            // A block scope's slots are not named on their edges; the
            // scope's ScopeInfo lists its variables' names in slot order.
            let slot = name.trim_matches(|c| c == '[' || c == ']');
            parts.push(
                block_variable_name(b, step.from, slot)
                    .unwrap_or_else(|| format!("(variable {slot} of a block scope)")),
            );
            kind.get_or_insert(HolderKind::ClosureVariable);
            break;
        }
        match t {
            EdgeType::Context => {
                parts.push(name);
                kind.get_or_insert(HolderKind::ClosureVariable);
                break;
            }
            EdgeType::Property | EdgeType::Shortcut => {
                let from_global = is_global_object(b, step.from);
                let name = cached_accessor(&name).unwrap_or(name);
                if name != "__proto__" && name != "map" {
                    parts.push(name);
                }
                if from_global {
                    parts.push("globalThis".to_string());
                    kind.get_or_insert(HolderKind::GlobalProperty);
                    break;
                }
            }
            EdgeType::Element => parts.push(name),
            _ => {}
        }
    }
    parts.reverse();
    let mut text = String::new();
    for part in parts {
        if part.starts_with('[') || text.is_empty() {
            text.push_str(&part);
        } else {
            text.push('.');
            text.push_str(&part);
        }
    }
    // Through a replaced slot, the object that keeps the leak is what the
    // slot points at, and its class says what kind of holder it is.
    let holder = if through_slot {
        steps.last().map_or(holder, |s| s.to)
    } else {
        holder
    };
    let holder_class = class_key(graph, holder);
    let named = &steps[naming_from..];
    let kind = if is_listener_list(b, named) {
        HolderKind::EventListenerList
    } else if is_timer_list(b, named, &holder_class) {
        HolderKind::TimerList
    } else if matches!(holder_class.as_str(), "Map" | "Set" | "WeakMap" | "WeakSet")
        && kind.is_none()
    {
        HolderKind::MapSetEntries
    } else if let Some(kind) = kind {
        kind
    } else if graph.node_type(holder) == NodeType::Object {
        HolderKind::ObjectProperty
    } else {
        HolderKind::Internal
    };
    if text.is_empty() {
        text = format!("{} @{}", holder_class, graph.id(holder));
    }
    (text, kind, naming_from)
}

/// An emitter's listeners: the holder is `_events` itself, one event's
/// listeners (`bus._events.data`), or one listener in that list. Not
/// whatever a listener function keeps further on (`server._events.
/// request._router.stack` is the Express app's middleware stack, reached
/// through the request listener that the app is).
fn is_listener_list(b: &Analysis, named: &[Step]) -> bool {
    let graph = &b.graph;
    let Some(at) = named
        .iter()
        .rposition(|s| graph.edge_name_str(s.edge) == Some("_events"))
    else {
        return false;
    };
    let after = &named[at + 1..];
    let properties = after
        .iter()
        .filter(|s| matches!(graph.edge_type(s.edge), EdgeType::Property))
        .count();
    properties <= 1 && after.len() <= 2
}

/// Node's timer lists: the holder is a `TimersList` or a `Timeout`, or a
/// slot of one (a timer's callback), not a variable somewhere past it.
fn is_timer_list(b: &Analysis, named: &[Step], holder_class: &str) -> bool {
    const TIMERS: [&str; 2] = ["Timeout", "TimersList"];
    TIMERS.contains(&holder_class)
        || named
            .iter()
            .rev()
            .take(2)
            .any(|s| TIMERS.contains(&b.graph.name(s.to)))
}

/// What the code calls a property Blink caches under a symbol:
/// `<symbol Window#DocumentCachedAccessor>` is `document`.
fn cached_accessor(edge_name: &str) -> Option<String> {
    let inner = edge_name.strip_prefix("<symbol ")?.strip_suffix('>')?;
    let (_, accessor) = inner.split_once('#')?;
    let property = accessor.strip_suffix("CachedAccessor")?;
    let mut chars = property.chars();
    let first = chars.next()?;
    Some(first.to_lowercase().chain(chars).collect())
}

/// The name of slot `slot` of a block scope `context`: the `slot`-th name
/// its `scope_info` lists (hidden edges to strings, in slot order; seen on
/// Node 20 and 22 for `if (…) { const seen = []; … }`).
fn block_variable_name(b: &Analysis, context: NodeId, slot: &str) -> Option<String> {
    let graph = &b.graph;
    let index: usize = slot.parse().ok()?;
    let scope_info = graph
        .edges(context)
        .find(|e| graph.edge_name_str(*e) == Some("scope_info"))
        .map(|e| graph.edge_to(e))?;
    graph
        .edges(scope_info)
        .filter(|e| matches!(graph.edge_type(*e), EdgeType::Hidden | EdgeType::Element))
        .map(|e| graph.edge_to(e))
        .filter(|n| graph.node_type(*n) == NodeType::String)
        .nth(index)
        .map(|n| graph.name(n).to_string())
}

/// A function's scope: V8 names these `system / Context`.
fn is_context(b: &Analysis, n: NodeId) -> bool {
    b.graph.name(n) == "system / Context"
}

/// The global object: what the root's shortcut edges point at (user roots;
/// from V8 14, Node 26, they point at the native context, whose internal
/// `global_object` edge leads to it), or a node named `global` (V8 14:
/// `global (global*) / `), `globalThis` or `Window`.
fn is_global_object(b: &Analysis, n: NodeId) -> bool {
    let graph = &b.graph;
    let name = graph.name(n);
    let first_word = name.split([' ', '/']).next().unwrap_or("");
    if matches!(first_word, "global" | "globalThis") || name.starts_with("Window") {
        return true;
    }
    let leads_to_global = |context: NodeId| {
        graph.edges(context).any(|e| {
            graph.edge_type(e) == EdgeType::Internal
                && graph.edge_name(e) == "global_object"
                && graph.edge_to(e) == n
        })
    };
    graph
        .edges(NodeId::ROOT)
        .filter(|e| graph.edge_type(*e) == EdgeType::Shortcut)
        .map(|e| graph.edge_to(e))
        .any(|to| to == n || leads_to_global(to))
}

/// The script of a function that closes over `context`: context ← closure
/// (internal `context`) → `shared` → `script_or_debug_info`, a node named
/// by the script's URL.
fn script_of_context(b: &Analysis, context: NodeId) -> Option<String> {
    let graph = &b.graph;
    let follow = |from: NodeId, names: &[&str]| {
        graph
            .edges(from)
            .find(|e| names.contains(&graph.edge_name(*e).as_str()))
            .map(|e| graph.edge_to(e))
    };
    graph
        .edges_into(context)
        .into_iter()
        .map(|(from, _)| from)
        .filter(|r| graph.node_type(*r) == NodeType::Closure)
        .find_map(|closure| {
            let shared = follow(closure, &["shared"])?;
            let script = follow(shared, &["script_or_debug_info", "script"])?;
            let name = graph.name(script);
            (!name.is_empty() && !name.starts_with("system /")).then(|| name.to_string())
        })
}

#[cfg(test)]
mod tests {
    use super::cached_accessor;

    #[test]
    fn blinks_cached_accessors_read_as_the_property_the_code_uses() {
        assert_eq!(
            cached_accessor("<symbol Window#DocumentCachedAccessor>").as_deref(),
            Some("document")
        );
        assert_eq!(cached_accessor("<symbol owner_symbol>"), None);
        assert_eq!(cached_accessor("closedDialogs"), None);
    }
}
