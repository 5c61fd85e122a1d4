//! The routes config file, `leakcheck.json` in the working folder or
//! `--config FILE`: what the declarations cannot say. Every key is
//! optional:
//!
//! ```json
//! {
//!   "source": "openapi",
//!   "openapi": "api/openapi.yaml",
//!   "next": ".",
//!   "methods": ["GET", "POST"],
//!   "params": { "lang": "en", "id": "{n}" },
//!   "headers": { "Authorization": "Bearer test-token" },
//!   "skip": ["/admin/*", "DELETE /users/:id"],
//!   "routes": {
//!     "POST /orders": { "body": { "item": "book-{n}", "qty": 1 } },
//!     "/users/:id": { "params": { "id": "u{n}" }, "headers": { "X-Tenant": "t1" } },
//!     "/health": { "skip": true }
//!   }
//! }
//! ```
//!
//! A route is named as its source declares it, `METHOD PATTERN` or
//! `PATTERN` for every method; a pattern ending in `*` names every route
//! under it. `params` are by parameter name; values may use the request
//! templates (`{n}`, `{uuid}`, …). Flags win over the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// The file looked for in the working folder when `--config` is not given.
pub const DEFAULT_FILE: &str = "leakcheck.json";

#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RoutesConfig {
    pub source: Option<String>,
    pub openapi: Option<String>,
    pub next: Option<PathBuf>,
    pub methods: Option<Vec<String>>,
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub skip: Vec<String>,
    #[serde(default)]
    pub routes: BTreeMap<String, RouteConfig>,
}

#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RouteConfig {
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A JSON value sent as the body (a string is sent as it is).
    pub body: Option<Value>,
    #[serde(default)]
    pub skip: bool,
}

impl RoutesConfig {
    /// `--config FILE`, else `leakcheck.json` when the working folder has
    /// one, else nothing.
    pub fn load(asked: Option<&Path>) -> anyhow::Result<Option<(PathBuf, RoutesConfig)>> {
        use anyhow::Context;
        let path = match asked {
            Some(path) => path.to_path_buf(),
            None if Path::new(DEFAULT_FILE).is_file() => PathBuf::from(DEFAULT_FILE),
            None => return Ok(None),
        };
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read the config file {}", path.display()))?;
        let config = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a valid leakcheck config (its format is in the book: docs/src/routes.md, \"The routes config file\")",
                path.display()
            )
        })?;
        Ok(Some((path, config)))
    }

    /// The settings of the route `method pattern`: every entry that names
    /// it, the exact one last so that it wins.
    pub fn for_route(&self, method: &str, pattern: &str) -> RouteConfig {
        let mut merged = RouteConfig::default();
        let mut matching: Vec<(&String, &RouteConfig)> = self
            .routes
            .iter()
            .filter(|(key, _)| names(key, method, pattern))
            .collect();
        matching.sort_by_key(|(key, _)| !key.ends_with('*'));
        for (_, entry) in matching {
            merged.params.extend(entry.params.clone());
            merged.headers.extend(entry.headers.clone());
            if entry.body.is_some() {
                merged.body = entry.body.clone();
            }
            merged.skip |= entry.skip;
        }
        merged
    }

    /// Whether `skip` or a route's own `skip` leaves the route out.
    pub fn skips(&self, method: &str, pattern: &str) -> bool {
        self.skip.iter().any(|key| names(key, method, pattern))
            || self.for_route(method, pattern).skip
    }
}

/// Whether `key` (`GET /a/:id`, `/a/:id`, `/admin/*`) names the route.
fn names(key: &str, method: &str, pattern: &str) -> bool {
    let (key_method, key_pattern) = match key.split_once(' ') {
        Some((m, p)) => (Some(m), p.trim()),
        None => (None, key.trim()),
    };
    if key_method.is_some_and(|m| !m.eq_ignore_ascii_case(method)) {
        return false;
    }
    match key_pattern.strip_suffix('*') {
        Some(prefix) => pattern.starts_with(prefix),
        None => key_pattern == pattern,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_is_named_with_or_without_its_method_and_by_prefix() {
        let config: RoutesConfig = serde_json::from_str(
            r#"{"skip": ["/admin/*", "DELETE /users/:id"],
                "routes": {"/users/:id": {"params": {"id": "u{n}"}},
                           "/users/*": {"params": {"id": "x", "lang": "en"}}}}"#,
        )
        .unwrap();
        assert!(config.skips("GET", "/admin/stats"));
        assert!(config.skips("DELETE", "/users/:id"));
        assert!(!config.skips("GET", "/users/:id"));
        let route = config.for_route("GET", "/users/:id");
        assert_eq!(route.params["id"], "u{n}");
        assert_eq!(route.params["lang"], "en");
    }

    #[test]
    fn an_unknown_key_is_refused() {
        assert!(serde_json::from_str::<RoutesConfig>(r#"{"rotes": {}}"#).is_err());
    }
}
