//! "What to do" for a page, in the page's terms. A leak in a page is
//! nodes that were removed from the document but are still referenced, or
//! listeners added on every visit to a view and never removed; the
//! server-side wording ("bound it with an LRU", "when the request ends")
//! names neither. From the diagnosis' holder of detached DOM nodes and the
//! listener census:
//!
//! - "`closedDialogs` keeps removed `<div class="dialog">` nodes (1 per
//!   iteration), each with its `<p>`s: drop the reference when they leave
//!   the page (remove them from `closedDialogs`, or keep only the one on
//!   screen)";
//! - "a `resize` listener on Window is added each iteration and never
//!   removed (added at leaky.html:14): remove it when the view closes, or
//!   pass an AbortSignal and abort it".

use super::action::ONE_PER_UNIT;
use crate::model::{Diagnosis, Holder, ListenerGrowth, RouteResult};

/// The page's action from what grew, or `None` when neither detached nodes
/// nor listeners explain it (the holder's generic action stands).
pub fn for_page(route: &RouteResult, unit: &str) -> Option<String> {
    let mut sentences: Vec<String> = Vec::new();
    if let Some(holder) = route.diagnosis.as_ref().and_then(detached_holder) {
        sentences.push(detached_sentence(holder, route.diagnosis.as_ref()?, unit));
    } else if let Some(attached) = route
        .diagnosis
        .as_ref()
        .and_then(|d| attached_sentence(d, unit))
    {
        sentences.push(attached);
    }
    sentences.extend(route.listeners.iter().map(|l| listener_sentence(l, unit)));
    if sentences.is_empty() {
        return None;
    }
    let sentences: Vec<String> = sentences.iter().map(|s| upper_first(s)).collect();
    Some(format!("{}.", sentences.join(". ")))
}

/// Renames the holders a page's snapshot cannot name by a variable when
/// what grew is the document itself: elements added and never removed
/// (`<div class="actually-leaking">` held by `this`, by
/// `globalThis.document[7][9][1][2]`, by `(GC roots) @3`) or listeners
/// added to the page's own targets (`[25][1][3][1]`). Blink keeps those
/// through its own structures, whose slots name nothing the page's code
/// calls them; the document and the listener's target are what to name.
/// A holder that names a variable (`closedDialogs`) is left as it is.
pub fn name_page_holders(route: &mut RouteResult) {
    let listeners = match route
        .listeners
        .iter()
        .map(|l| l.target.as_str())
        .collect::<Vec<_>>()[..]
    {
        [] => None,
        [one] => Some(format!("the listeners added to {one}")),
        [ref many @ .., last] => Some(format!(
            "the listeners added to {} and {last}",
            many.join(", ")
        )),
    };
    let Some(diagnosis) = route.diagnosis.as_mut() else {
        return;
    };
    drop_engine_only_holders(diagnosis);
    let attached = attached_sentence(diagnosis, "iteration").is_some();
    let mut seen = std::collections::HashSet::new();
    diagnosis.holders.retain_mut(|holder| {
        let Some(name) = page_name(holder, attached, listeners.as_deref()) else {
            return true;
        };
        holder.name = name;
        // Several of Blink's slots renamed alike: the document once.
        seen.insert(holder.name.clone())
    });
}

/// What a holder Blink's slots name is, in the page's terms; `None` for
/// one the page's code names (or nothing better to say).
fn page_name(holder: &Holder, attached: bool, listeners: Option<&str>) -> Option<String> {
    if !through_the_document(&holder.name) {
        return None;
    }
    match (listeners, attached, holder.class.starts_with('<')) {
        (_, true, true) => Some(format!(
            "the document: {} nodes still attached",
            holder.class
        )),
        (_, true, false) => Some(
            "the document: what its attached elements keep (their listeners and what those \
             close over)"
                .to_string(),
        ),
        (Some(listeners), false, _) => Some(format!("{listeners} (what they close over)")),
        // The document's own slots, with no listener type growing by one a
        // visit (a new event name each time, say).
        (None, false, _) if holder.name.starts_with("globalThis.document[") => Some(
            "the document: listeners or observers registered on it (one kept per visit)"
                .to_string(),
        ),
        (None, false, _) => None,
    }
}

/// Holders of nothing but the engine's own objects (compiled code, Blink's
/// C++ tables) name nothing the page keeps: `matchRoute` holding the code
/// compiled for a router, while 5 000 arrays of numbers grew in place (a
/// number in an array is no object of its own, and an array's backing
/// store grows without a new one until it is full). Said so instead.
fn drop_engine_only_holders(diagnosis: &mut Diagnosis) {
    if diagnosis.holders.is_empty()
        || !diagnosis
            .holders
            .iter()
            .all(|h| crate::model::is_engine_class(&h.class))
    {
        return;
    }
    diagnosis.holders.clear();
    diagnosis.missing.push(
        "no holder of the page's own objects: between the snapshots only the engine's code and \
         Blink's tables gained objects, so the growth is in place (arrays of numbers filling \
         their backing stores, strings or numbers overwritten); the collections named, if any, \
         are what grew"
            .into(),
    );
}

/// A holder's name that says only "through Blink": a root, bare slots,
/// the document's internal slots, or a closure's `this` alone.
fn through_the_document(name: &str) -> bool {
    !names_a_variable(name) || name == "this" || name.starts_with("globalThis.document[")
}

/// The holder of the most detached DOM nodes (`Detached <p>`,
/// `Detached HTMLDivElement`).
fn detached_holder(diagnosis: &Diagnosis) -> Option<&Holder> {
    diagnosis
        .holders
        .iter()
        .filter(|h| h.class.starts_with("Detached "))
        .max_by_key(|h| h.objects)
}

fn detached_sentence(holder: &Holder, diagnosis: &Diagnosis, unit: &str) -> String {
    let element = |class: &str| class.trim_start_matches("Detached ").to_string();
    let place = super::action::place_of(holder);
    let per_unit = |count: u64| match diagnosis.requests {
        0 => String::new(),
        n => format!(" ({:.0} per {unit})", count as f64 / n as f64),
    };
    // The element the list keeps (the dialog), not its most numerous
    // descendant (the dialog's rows), when the snapshot tells them apart.
    let kept = match holder.root_class.as_deref() {
        Some(root) if root.starts_with("Detached ") && holder.roots > 0 => format!(
            "`{}` nodes{}, each with its `{}`s",
            element(root),
            per_unit(holder.roots),
            element(&holder.class)
        ),
        _ => format!(
            "`{}` nodes{}",
            element(&holder.class),
            per_unit(holder.objects)
        ),
    };
    if !names_a_variable(&holder.name) {
        // `(GC roots) @3`, `[25][1][3][1]`: nothing the code calls it.
        return format!(
            "removed {kept} are still referenced, through the browser's own objects rather than \
             a variable (a listener, an observer or a framework's registry holding them): find \
             the element in DevTools' Memory panel (Detached elements) and what it is registered \
             with"
        );
    }
    format!(
        "`{}`{place} keeps removed {kept}: drop the reference when they leave the page (remove \
         them from `{}`, or keep only the one on screen)",
        holder.name,
        holder.name.rsplit('.').next().unwrap_or(&holder.name)
    )
}

/// Elements added to the document each unit and never taken out: no
/// variable holds them (the document does, through roots the snapshot
/// cannot name), so the holders are Blink's own structures (`this` of the
/// window holding an observer table, `(GC roots) @3` holding layout
/// objects). The grown element class says what stays.
fn attached_sentence(diagnosis: &Diagnosis, unit: &str) -> Option<String> {
    let held_by_code = diagnosis.holders.iter().any(|h| {
        h.class.starts_with('<')
            && !through_the_document(&h.name)
            && !h.name.starts_with("the document:")
    });
    if held_by_code || diagnosis.requests == 0 {
        return None;
    }
    let per = |count: u64| count as f64 / diagnosis.requests as f64;
    let grown = diagnosis
        .classes
        .iter()
        .filter(|c| c.class.starts_with('<') && c.delta_count > 0)
        .max_by_key(|c| c.delta_count);
    let (what, per_unit) = match (grown, &diagnosis.elements) {
        (Some(class), _) if per(class.delta_count as u64) >= ONE_PER_UNIT => (
            format!("`{}` nodes", class.class),
            per(class.delta_count as u64),
        ),
        // An element with a new tag or class each time: no one class
        // grows by one per unit, their sum does.
        (_, Some(all)) if per(all.added) >= ONE_PER_UNIT && all.classes > 1 => (
            format!(
                "elements of {} different tags or classes (such as `{}`)",
                all.classes, all.example
            ),
            per(all.added),
        ),
        _ => return None,
    };
    Some(format!(
        "{what} stay in the document: {per_unit:.0} added each {unit} and never removed (no \
         variable holds them; the page does): remove them when the view that adds them closes, \
         or reuse one"
    ))
}

/// Whether a holder's name is one the page's code uses: not a root's
/// (`(GC roots) @3`), and not slots alone (`[25][1][3][1]`).
fn names_a_variable(name: &str) -> bool {
    let first_named = name.trim_start_matches(|c: char| c == '[' || c == ']' || c.is_ascii_digit());
    !name.starts_with('(') && !first_named.is_empty() && !name.contains(" @")
}

fn listener_sentence(listener: &ListenerGrowth, unit: &str) -> String {
    let added = listener
        .added_at
        .as_deref()
        .map_or(String::new(), |at| format!(" (added at {at})"));
    format!(
        "a `{}` listener on {} is added each {unit} and never removed{added}: remove it when the \
         view closes (removeEventListener), or pass an AbortSignal and abort it",
        listener.event, listener.target
    )
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) if first != '`' => first.to_uppercase().chain(chars).collect(),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blink_s_holders_are_named_as_the_document_or_the_listeners_target() {
        use crate::model::ClassDiff;
        let holder = |name: &str, class: &str| Holder {
            name: name.into(),
            class: class.into(),
            ..Holder::default()
        };
        let mut route = RouteResult {
            diagnosis: Some(Diagnosis {
                requests: 25,
                holders: vec![
                    holder("this", "<div class=\"actually-leaking\">"),
                    holder("(GC roots) @3", "system / JSArrayBufferData"),
                    holder("globalThis.document[7][9][1][2]", "<span>"),
                ],
                classes: vec![ClassDiff {
                    class: "<div class=\"actually-leaking\">".into(),
                    delta_count: 25,
                    ..ClassDiff::default()
                }],
                ..Diagnosis::default()
            }),
            ..RouteResult::default()
        };
        name_page_holders(&mut route);
        let names: Vec<&str> = route
            .diagnosis
            .as_ref()
            .unwrap()
            .holders
            .iter()
            .map(|h| h.name.as_str())
            .collect();
        assert_eq!(
            names[0],
            "the document: <div class=\"actually-leaking\"> nodes still attached"
        );
        assert!(names[1].starts_with("the document: what its attached elements keep"));
        assert_eq!(names[2], "the document: <span> nodes still attached");

        // Listeners on the page's own targets, no element left behind.
        let mut route = RouteResult {
            diagnosis: Some(Diagnosis {
                requests: 25,
                holders: vec![
                    holder("[25][1][3][1]", "(closure)"),
                    holder("closedDialogs", "Array"),
                ],
                ..Diagnosis::default()
            }),
            listeners: vec![
                ListenerGrowth {
                    event: "click".into(),
                    target: "#document".into(),
                    before: 0,
                    after: 25,
                    per_unit: 1.0,
                    added_at: None,
                },
                ListenerGrowth {
                    event: "resize".into(),
                    target: "Window".into(),
                    before: 0,
                    after: 25,
                    per_unit: 1.0,
                    added_at: None,
                },
            ],
            ..RouteResult::default()
        };
        name_page_holders(&mut route);
        let holders = &route.diagnosis.as_ref().unwrap().holders;
        assert_eq!(
            holders[0].name,
            "the listeners added to #document and Window (what they close over)"
        );
        let mut route = RouteResult {
            diagnosis: Some(Diagnosis {
                requests: 25,
                holders: vec![holder("globalThis.document[54][1]", "(closure)")],
                ..Diagnosis::default()
            }),
            ..RouteResult::default()
        };
        name_page_holders(&mut route);
        assert!(
            route.diagnosis.unwrap().holders[0]
                .name
                .starts_with("the document: listeners or observers")
        );
        assert_eq!(holders[1].name, "closedDialogs");
    }

    #[test]
    fn holders_of_the_engine_s_own_objects_are_not_offered() {
        let holder = |name: &str, class: &str| Holder {
            name: name.into(),
            class: class.into(),
            ..Holder::default()
        };
        let mut route = RouteResult {
            diagnosis: Some(Diagnosis {
                holders: vec![
                    holder("matchRoute", "(compiled code)"),
                    holder("this", "blink::HeapHashTableBacking<blink::HashTable<…>>"),
                ],
                ..Diagnosis::default()
            }),
            ..RouteResult::default()
        };
        name_page_holders(&mut route);
        let diagnosis = route.diagnosis.unwrap();
        assert!(diagnosis.holders.is_empty());
        assert!(
            diagnosis.missing[0].contains("in place"),
            "{:?}",
            diagnosis.missing
        );
    }

    #[test]
    fn elements_left_in_the_document_are_named_by_their_class_not_by_blink_s_holder() {
        use crate::model::ClassDiff;
        let grown = |class: &str, delta: i64| ClassDiff {
            class: class.into(),
            delta_count: delta,
            ..ClassDiff::default()
        };
        let route = RouteResult {
            diagnosis: Some(Diagnosis {
                requests: 25,
                holders: vec![Holder {
                    name: "this".into(),
                    class: "blink::HeapHashTableBacking<…>".into(),
                    holder_class: "Window / http://127.0.0.1".into(),
                    objects: 1,
                    ..Holder::default()
                }],
                classes: vec![
                    grown("blink::LayoutBlockFlow", 25),
                    grown("<div class=\"actually-leaking\">", 25),
                ],
                ..Diagnosis::default()
            }),
            ..RouteResult::default()
        };
        let text = for_page(&route, "iteration").expect("a page's words");
        assert!(
            text.starts_with(
                "`<div class=\"actually-leaking\">` nodes stay in the document: 1 added each \
                 iteration and never removed"
            ),
            "{text}"
        );
        assert!(!text.contains("`this`"), "{text}");
        // A variable that holds the elements keeps the holder's words.
        let mut held = route.clone();
        let diagnosis = held.diagnosis.as_mut().unwrap();
        diagnosis.holders[0].class = "<div class=\"actually-leaking\">".into();
        diagnosis.holders[0].name = "views".into();
        assert_eq!(for_page(&held, "iteration"), None);
        // A new tag each iteration: no class grows by one, their sum does.
        let mut renamed = route.clone();
        let diagnosis = renamed.diagnosis.as_mut().unwrap();
        diagnosis.classes.retain(|c| !c.class.starts_with('<'));
        diagnosis.elements = Some(crate::model::ElementGrowth {
            added: 25,
            classes: 25,
            example: "<fake-el1f3a>".into(),
        });
        let text = for_page(&renamed, "iteration").expect("a page's words");
        assert!(
            text.starts_with(
                "Elements of 25 different tags or classes (such as `<fake-el1f3a>`) stay in the \
                 document: 1 added each iteration"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_listener_pile_up_is_worded_for_the_page() {
        let route = RouteResult {
            listeners: vec![ListenerGrowth {
                event: "resize".into(),
                target: "Window".into(),
                before: 0,
                after: 75,
                per_unit: 1.0,
                added_at: Some("http://127.0.0.1/leaky.html:14".into()),
            }],
            ..RouteResult::default()
        };
        let text = for_page(&route, "iteration").unwrap();
        assert!(
            text.starts_with("A `resize` listener on Window is added each iteration and never removed (added at http://127.0.0.1/leaky.html:14)"),
            "{text}"
        );
        assert!(text.contains("AbortSignal"), "{text}");
    }

    #[test]
    fn a_list_of_dialogs_is_named_by_the_dialog_not_its_rows() {
        let holder = Holder {
            class: "Detached <p>".into(),
            name: "this.mounted".into(),
            objects: 500,
            root_class: Some("Detached <div class=\"dialog\">".into()),
            roots: 25,
            ..Holder::default()
        };
        let route = RouteResult {
            diagnosis: Some(Diagnosis {
                requests: 25,
                holders: vec![holder],
                ..Diagnosis::default()
            }),
            ..RouteResult::default()
        };
        let text = for_page(&route, "iteration").unwrap();
        assert!(
            text.starts_with(
                "`this.mounted` keeps removed `<div class=\"dialog\">` nodes (1 per iteration), \
                 each with its `<p>`s"
            ),
            "{text}"
        );
        assert!(text.contains("remove them from `mounted`"), "{text}");
    }

    #[test]
    fn a_holder_that_names_no_variable_is_not_offered_as_one() {
        for name in ["(GC roots) @3", "[25][1][3][1]"] {
            let route = RouteResult {
                diagnosis: Some(Diagnosis {
                    requests: 10,
                    holders: vec![Holder {
                        class: "Detached <div>".into(),
                        name: name.into(),
                        objects: 10,
                        ..Holder::default()
                    }],
                    ..Diagnosis::default()
                }),
                ..RouteResult::default()
            };
            let text = for_page(&route, "iteration").unwrap();
            assert!(!text.contains(name), "{text}");
            assert!(
                text.starts_with("Removed `<div>` nodes (1 per iteration) are still referenced"),
                "{text}"
            );
        }
        assert!(names_a_variable("this.mounted"));
        assert!(names_a_variable("globalThis.document[7]"));
    }

    #[test]
    fn nothing_page_like_leaves_the_holder_s_action() {
        assert_eq!(for_page(&RouteResult::default(), "iteration"), None);
    }
}
