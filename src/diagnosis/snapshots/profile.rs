//! Allocation sites from `HeapProfiler.getSamplingProfile`: a tree of call
//! frames, each with the sampled bytes allocated there and still alive
//! (V8 drops samples of collected objects). Read after a forced collection,
//! what remains was allocated during the cycle and survived it.

use std::collections::HashMap;

use serde_json::Value;

use crate::model::AllocationSite;

/// A site as a profile names it: (function, url, line, column), lines and
/// columns counted from 1.
pub type SiteKey = (String, String, u32, u32);

/// One call frame of a sampling profile as its site and its script's id;
/// an unnamed function is `(anonymous)`.
pub fn frame_site(frame: &Value) -> (SiteKey, String) {
    let text = |k: &str| {
        frame
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let number = |k: &str| frame.get(k).and_then(Value::as_i64).unwrap_or(-1);
    let function = match text("functionName") {
        name if name.is_empty() => "(anonymous)".to_string(),
        name => name,
    };
    // V8 counts lines and columns from 0.
    let key = (
        function,
        text("url"),
        (number("lineNumber") + 1) as u32,
        (number("columnNumber") + 1) as u32,
    );
    (key, text("scriptId"))
}

/// The frames with surviving bytes, summed per (function, url, line,
/// column), largest first.
pub fn surviving_sites(profile: &Value, top: usize) -> Vec<AllocationSite> {
    let mut sites: HashMap<SiteKey, u64> = HashMap::new();
    let mut script_ids: HashMap<String, String> = HashMap::new();
    let mut stack: Vec<&Value> = profile.pointer("/profile/head").into_iter().collect();
    while let Some(node) = stack.pop() {
        let bytes = node.get("selfSize").and_then(Value::as_u64).unwrap_or(0);
        if bytes > 0
            && let Some(frame) = node.get("callFrame")
        {
            let (key, script_id) = frame_site(frame);
            script_ids.entry(key.1.clone()).or_insert(script_id);
            *sites.entry(key).or_default() += bytes;
        }
        if let Some(children) = node.get("children").and_then(Value::as_array) {
            stack.extend(children.iter());
        }
    }
    let mut out: Vec<AllocationSite> = sites
        .into_iter()
        .filter(|((_, url, _, _), _)| !url.is_empty())
        .map(|((function, url, line, column), bytes)| AllocationSite {
            script_id: script_ids.get(&url).cloned().unwrap_or_default(),
            function,
            url,
            line,
            column,
            bytes,
            ..AllocationSite::default()
        })
        .collect();
    out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.line.cmp(&b.line)));
    out.truncate(top);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sums_surviving_bytes_per_line_and_counts_from_one() {
        let profile = json!({"profile": {"head": {
        "callFrame": {"functionName": "(root)", "url": "", "lineNumber": -1, "columnNumber": -1},
        "selfSize": 0,
        "children": [
            {"callFrame": {"functionName": "handle", "url": "file:///app.mjs", "lineNumber": 41, "columnNumber": 4}, "selfSize": 8192, "children": []},
            {"callFrame": {"functionName": "handle", "url": "file:///app.mjs", "lineNumber": 41, "columnNumber": 4}, "selfSize": 4096, "children": [
                {"callFrame": {"functionName": "", "url": "node:internal/x", "lineNumber": 0, "columnNumber": 0}, "selfSize": 100, "children": []}
            ]}
        ]}}});
        let sites = surviving_sites(&profile, 10);
        assert_eq!(sites[0].function, "handle");
        assert_eq!(sites[0].line, 42);
        assert_eq!(sites[0].bytes, 12288);
        assert_eq!(sites[1].function, "(anonymous)");
    }
}
