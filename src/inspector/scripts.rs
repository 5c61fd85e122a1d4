//! The scripts a target has parsed, as the `Debugger` domain replays them
//! when it is enabled: each script's id, URL and source map URL. The
//! domain is disabled again at once (it slows the target while on). Used
//! by attribution (source maps) and by a page's listener census (the
//! script a listener was added in).

use std::time::Duration;

use serde_json::{Value, json};

use super::{Inspector, InspectorError};

/// How long to wait for the last `Debugger.scriptParsed` of the scripts
/// already loaded, which V8 sends as soon as the domain is enabled.
const SCRIPTS_QUIET: Duration = Duration::from_millis(100);

/// One parsed script. Empty strings where V8 gives none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedScript {
    pub id: String,
    pub url: String,
    pub source_map_url: String,
}

/// Every script the target has parsed so far.
pub async fn parsed_scripts(inspector: &Inspector) -> Result<Vec<ParsedScript>, InspectorError> {
    let mut events = inspector.subscribe_to("Debugger.scriptParsed");
    inspector.call("Debugger.enable", json!({})).await?;
    let mut scripts = Vec::new();
    while let Ok(Some(event)) = tokio::time::timeout(SCRIPTS_QUIET, events.recv()).await {
        let text = |k: &str| {
            event
                .params
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        scripts.push(ParsedScript {
            id: text("scriptId"),
            url: text("url"),
            source_map_url: text("sourceMapURL"),
        });
    }
    inspector.call("Debugger.disable", json!({})).await?;
    Ok(scripts)
}
