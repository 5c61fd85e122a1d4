//! Which event listeners pile up, on what: `resize on Window +1.00 per
//! iteration, added at app.js:12`. The `dom.JSEventListeners` series says
//! that listeners grow; this names them, as DevTools' Event Listeners
//! panel does: `DOMDebugger.getEventListeners` on the window, the
//! document and every element in it, counted by target and event type
//! before the route's first cycle and after its last.
//!
//! Listeners on detached nodes are not reachable from the document and
//! are not listed here; the detached nodes themselves are named by the
//! diagnosis (`Detached <div>`). The targets are held in an object group
//! released after each count, so counting keeps nothing alive.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

use crate::inspector::{Inspector, InspectorError};
use crate::model::ListenerGrowth;

/// The object group the counted targets are held in, released at the end.
const GROUP: &str = "leakcheck-listeners";
/// At most this many elements are asked about (a page of 10 000 nodes
/// takes about a second of round trips).
const MAX_TARGETS: usize = 5_000;

/// Listeners by (target, event type): how many, and where the last one
/// counted was added (script id, line).
#[derive(Debug, Default, Clone)]
pub struct Census {
    counts: BTreeMap<(String, String), Counted>,
}

/// A script id and a 1-based line.
type Place = (String, u64);

/// Listeners of one type on one target, and where the last was added.
type Counted = (u64, Option<Place>);

impl Census {
    /// Counts the listeners of the window, the document and its elements.
    pub async fn take(page: &Inspector) -> Result<Census, InspectorError> {
        let targets = page
            .call(
                "Runtime.evaluate",
                json!({
                    "expression": "[window, document, ...document.querySelectorAll('*')]",
                    "objectGroup": GROUP,
                }),
            )
            .await?;
        let mut census = Census::default();
        if let Some(array) = targets.pointer("/result/objectId").and_then(Value::as_str) {
            let counted = census.count(page, array).await;
            let _ = page
                .call(
                    "Runtime.releaseObjectGroup",
                    json!({ "objectGroup": GROUP }),
                )
                .await;
            counted?;
        }
        Ok(census)
    }

    async fn count(&mut self, page: &Inspector, array: &str) -> Result<(), InspectorError> {
        let items = page
            .call(
                "Runtime.getProperties",
                json!({ "objectId": array, "ownProperties": true }),
            )
            .await?;
        let items = items
            .get("result")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for item in items.iter().take(MAX_TARGETS + 2) {
            if item
                .get("name")
                .and_then(Value::as_str)
                .is_none_or(|n| n.parse::<u32>().is_err())
            {
                continue;
            }
            let Some(object) = item.pointer("/value/objectId").and_then(Value::as_str) else {
                continue;
            };
            let target = item
                .pointer("/value/description")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string();
            let found = page
                .call(
                    "DOMDebugger.getEventListeners",
                    json!({ "objectId": object, "depth": 0 }),
                )
                .await?;
            for listener in found
                .get("listeners")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let kind = listener.get("type").and_then(Value::as_str).unwrap_or("?");
                let at = listener
                    .get("scriptId")
                    .and_then(Value::as_str)
                    .zip(listener.get("lineNumber").and_then(Value::as_u64))
                    .map(|(script, line)| (script.to_string(), line + 1));
                let entry = self
                    .counts
                    .entry((target.clone(), kind.to_string()))
                    .or_insert((0, None));
                entry.0 += 1;
                if at.is_some() {
                    entry.1 = at;
                }
            }
        }
        Ok(())
    }

    /// The (target, type) pairs that gained at least `min_per_unit`
    /// listeners per unit over `units`, most first; `scripts` names the
    /// script ids.
    pub fn grown_since(
        &self,
        earlier: &Census,
        units: u64,
        min_per_unit: f64,
        scripts: &HashMap<String, String>,
    ) -> Vec<ListenerGrowth> {
        if units == 0 {
            return Vec::new();
        }
        let mut grown: Vec<ListenerGrowth> = self
            .counts
            .iter()
            .filter_map(|(key, (after, at))| {
                let before = earlier.counts.get(key).map_or(0, |c| c.0);
                let per_unit = after.saturating_sub(before) as f64 / units as f64;
                (per_unit >= min_per_unit && per_unit > 0.0).then(|| ListenerGrowth {
                    event: key.1.clone(),
                    target: key.0.clone(),
                    before,
                    after: *after,
                    per_unit,
                    added_at: at.as_ref().map(|(script, line)| {
                        let url = scripts
                            .get(script)
                            .map_or("(inline script)", String::as_str);
                        format!("{}:{line}", crate::net::redacted(url))
                    }),
                })
            })
            .collect();
        grown.sort_by(|a, b| b.per_unit.total_cmp(&a.per_unit));
        grown
    }
}

/// Script ids to URLs, for `added_at` (`crate::inspector::parsed_scripts`).
pub async fn script_urls(page: &Inspector) -> HashMap<String, String> {
    crate::inspector::parsed_scripts(page)
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|s| !s.url.is_empty())
        .map(|s| (s.id, s.url))
        .collect()
}
