//! "What to do" for a page, in the page's terms. A leak in a page is
//! nodes that were removed from the document but are still referenced, or
//! listeners added on every visit to a view and never removed; the
//! server-side wording ("bound it with an LRU", "when the request ends")
//! names neither. From the diagnosis' holder of detached DOM nodes and the
//! listener census:
//!
//! - "`closedDialogs` keeps removed `<p>` nodes (Detached <p> +20 per
//!   iteration): drop them when they leave the page (remove them from the
//!   array, or keep only the open one)";
//! - "a `resize` listener on Window is added each iteration and never
//!   removed (added at leaky.html:14): remove it when the view closes, or
//!   pass an AbortSignal and abort it".

use crate::model::{Diagnosis, Holder, ListenerGrowth, RouteResult};

/// The page's action from what grew, or `None` when neither detached nodes
/// nor listeners explain it (the holder's generic action stands).
pub fn for_page(route: &RouteResult, unit: &str) -> Option<String> {
    let mut sentences: Vec<String> = Vec::new();
    if let Some(holder) = route.diagnosis.as_ref().and_then(detached_holder) {
        sentences.push(detached_sentence(holder, route.diagnosis.as_ref()?, unit));
    }
    sentences.extend(route.listeners.iter().map(|l| listener_sentence(l, unit)));
    if sentences.is_empty() {
        return None;
    }
    let sentences: Vec<String> = sentences.iter().map(|s| upper_first(s)).collect();
    Some(format!("{}.", sentences.join(". ")))
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
    let element = holder.class.trim_start_matches("Detached ");
    let place = super::action::place_of(holder);
    let per_unit = match diagnosis.requests {
        0 => String::new(),
        n => format!(" ({:.0} per {unit})", holder.objects as f64 / n as f64),
    };
    format!(
        "`{}`{place} keeps removed `{element}` nodes{per_unit}: drop the reference when they \
         leave the page (remove them from `{}`, or keep only the one on screen)",
        holder.name,
        holder.name.rsplit('.').next().unwrap_or(&holder.name)
    )
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
    fn nothing_page_like_leaves_the_holder_s_action() {
        assert_eq!(for_page(&RouteResult::default(), "iteration"), None);
    }
}
