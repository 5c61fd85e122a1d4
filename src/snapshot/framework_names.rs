//! A holder in its framework's words (`frameworks/*.yaml`, read by
//! `frameworks.rs`).
//!
//! Two rules, the first that applies wins:
//!
//! 1. **A known holder.** The holder is reached from a known object by the
//!    properties a `holders` entry lists (`[app, _router, stack]`): then it
//!    is that entry (`app._router.stack`, Express's middleware stack), with
//!    its kind and action. Any of the holder's retainers may lead there,
//!    not only the one its name was read from: Koa's `app.middleware` is
//!    also koa-compose's closure variable `middleware`, and a variable is
//!    what the name prefers.
//! 2. **Under a known object.** A known object (or the function an HTTP
//!    server calls per request) on the path the name was read from starts
//!    the name: `fastify.seen`, not `<symbol owner_symbol>._events.
//!    clientError.seen`. The holder keeps the kind its structure gives.
//!
//! Both read only the few nodes near the holder: one scan of the edges
//! into the holder, and one more per step of an entry that matched so far.

use super::analysis::Analysis;
use super::frameworks::{Framework, KnownObject, frameworks};
use super::graph::{EdgeType, NodeId, NodeType};
use super::paths::Step;
use crate::model::{FrameworkHolder, HolderKind};

/// What the framework calls a holder.
pub(super) struct Named {
    pub name: String,
    /// `None`: the kind the holder's structure gives stands.
    pub kind: Option<HolderKind>,
    pub framework: FrameworkHolder,
}

/// `steps`: the path the holder's name was read from, root first;
/// `named_from`: the first step of that name; `holder`: the object that
/// keeps the growth; `engine_name`: the name read from the path.
pub(super) fn recognise(
    b: &Analysis,
    steps: &[Step],
    named_from: usize,
    holder: NodeId,
    engine_name: &str,
) -> Option<Named> {
    known_holder(b, steps, holder, engine_name)
        .or_else(|| under_known_object(b, &steps[named_from.min(steps.len())..], engine_name))
}

fn known_holder(b: &Analysis, steps: &[Step], holder: NodeId, engine_name: &str) -> Option<Named> {
    let graph = &b.graph;
    let retainers = graph.edges_into(holder);
    for framework in frameworks() {
        for entry in &framework.holders {
            let (last, before) = entry.path.split_last()?;
            let found = retainers.iter().any(|&(from, edge)| {
                is_named_slot(b, edge, last) && reaches(b, framework, from, before)
            });
            if found {
                return Some(Named {
                    name: with_the_codes_variable(b, steps, framework, &entry.path[0], &entry.name),
                    kind: Some(entry.kind),
                    framework: FrameworkHolder {
                        framework: framework.framework.clone(),
                        what: entry.what.clone(),
                        path_name: engine_name.to_string(),
                        action: Some(entry.action.clone()),
                    },
                });
            }
        }
    }
    None
}

/// `config$.observers` rather than `subject.observers`: where the path the
/// name was read from reaches the known object through a variable, the
/// code's name for it leads.
fn with_the_codes_variable(
    b: &Analysis,
    steps: &[Step],
    framework: &Framework,
    object: &str,
    name: &str,
) -> String {
    let Some(rest) = name.strip_prefix(object).filter(|r| r.starts_with('.')) else {
        return name.to_string();
    };
    let variable = steps.iter().rev().find(|step| {
        code_variable(b, step.edge).is_some()
            && framework
                .objects
                .iter()
                .any(|o| o.name == object && is_object(b, o, step.to))
    });
    match variable {
        Some(step) => format!("{}{rest}", b.graph.edge_name(step.edge)),
        None => name.to_string(),
    }
}

/// The name the user's code gave a known object, when `edge` is a
/// closure's variable. Not `this` (an arrow function inside the
/// framework's own method captures it, as socket.io's request handler
/// does) nor a transpiler's `_this`/`self`/`that`: nobody can find the
/// object by those, so the framework's usual name (`io`) leads.
fn code_variable(b: &Analysis, edge: super::graph::EdgeId) -> Option<String> {
    const NOT_A_NAME: [&str; 4] = ["this", "_this", "self", "that"];
    if b.graph.edge_type(edge) != EdgeType::Context {
        return None;
    }
    let name = b.graph.edge_name(edge);
    (!NOT_A_NAME.contains(&name.as_str())).then_some(name)
}

/// Whether `node` is reached from a known object by `path` (the object's
/// name, then properties), read backwards from `node`.
fn reaches(b: &Analysis, framework: &Framework, node: NodeId, path: &[String]) -> bool {
    match path.split_last() {
        None => false,
        Some((object, [])) => framework
            .objects
            .iter()
            .any(|o| o.name == *object && is_object(b, o, node)),
        Some((slot, before)) => b.graph.edges_into(node).into_iter().any(|(from, edge)| {
            is_named_slot(b, edge, slot) && reaches(b, framework, from, before)
        }),
    }
}

fn is_named_slot(b: &Analysis, edge: super::graph::EdgeId, name: &str) -> bool {
    matches!(
        b.graph.edge_type(edge),
        EdgeType::Property | EdgeType::Internal | EdgeType::Context
    ) && b.graph.edge_name_str(edge) == Some(name)
}

/// Whether `node` is the known object `object`: its V8 name (function or
/// constructor) and every property it must have.
fn is_object(b: &Analysis, object: &KnownObject, node: NodeId) -> bool {
    let graph = &b.graph;
    let type_matches = match (&object.function, &object.class) {
        (Some(function), _) => {
            graph.node_type(node) == NodeType::Closure && graph.name(node) == function
        }
        (None, Some(class)) => {
            graph.node_type(node) == NodeType::Object && graph.name(node) == class
        }
        (None, None) => graph.node_type(node) == NodeType::Object,
    };
    type_matches
        && object.has.iter().all(|property| {
            graph
                .edges(node)
                .any(|e| graph.edge_name_str(e) == Some(property.as_str()))
        })
}

/// Rule 2: the name starts at the known object nearest the holder.
fn under_known_object(b: &Analysis, named: &[Step], engine_name: &str) -> Option<Named> {
    let graph = &b.graph;
    for (index, step) in named.iter().enumerate().rev() {
        let Some((object_name, framework, members)) = known_object_at(b, named, index) else {
            continue;
        };
        // A variable keeps the name the code gave it (`const server =
        // express()`); the framework's usual name is for what the engine
        // reaches through its own slots.
        let start = code_variable(b, step.edge).unwrap_or(object_name);
        let mut name = start.clone();
        for later in &named[index + 1..] {
            let slot = graph.edge_name(later.edge);
            match graph.edge_type(later.edge) {
                EdgeType::Property if slot != "__proto__" && slot != "map" => {
                    name.push('.');
                    name.push_str(&slot);
                }
                EdgeType::Element => name.push_str(&format!("[{slot}]")),
                _ => {}
            }
        }
        if name == engine_name {
            return None;
        }
        let what = match &members {
            Some(members) if index + 2 == named.len() => members.clone(),
            _ => format!("held under {framework}'s `{start}`"),
        };
        return Some(Named {
            name,
            kind: None,
            framework: FrameworkHolder {
                framework,
                what,
                path_name: engine_name.to_string(),
                action: None,
            },
        });
    }
    None
}

/// The known object `named[index]` leads to: its name, its framework, and
/// what its plain properties are. The function a Node HTTP server calls
/// per request (`server._events.request`) counts as one: it is the app.
fn known_object_at(
    b: &Analysis,
    named: &[Step],
    index: usize,
) -> Option<(String, String, Option<String>)> {
    let node = named[index].to;
    for framework in frameworks() {
        if let Some(object) = framework.objects.iter().find(|o| is_object(b, o, node)) {
            return Some((
                object.name.clone(),
                framework.framework.clone(),
                object.members.clone(),
            ));
        }
    }
    let graph = &b.graph;
    let listener_of_server = index >= 1
        && graph.node_type(node) == NodeType::Closure
        && graph.edge_name_str(named[index].edge) == Some("request")
        && graph.edge_name_str(named[index - 1].edge) == Some("_events")
        && graph.name(named[index - 1].from) == "Server";
    if listener_of_server {
        let function = graph.name(node);
        let name = if function.is_empty() || function == "native_bind" {
            "requestListener"
        } else {
            function
        };
        return Some((
            name.to_string(),
            "Node.js".to_string(),
            Some("a property of the HTTP server's request listener".to_string()),
        ));
    }
    None
}
