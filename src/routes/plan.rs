//! From declared routes to the routes a run checks: the methods that are
//! safe to send (GET and HEAD unless `--methods` names more: a check sends
//! each route thousands of times, and a POST or DELETE changes the app's
//! data), the config file's skips, values, headers and bodies, and the
//! reason for every route left out.

use serde::Serialize;

use super::config::RoutesConfig;
use super::fill::{Values, fill};
use super::{Declared, RouteSpec};

/// Methods checked when neither `--methods` nor the config names any.
pub const SAFE_METHODS: [&str; 2] = ["GET", "HEAD"];

/// A declared route that is not checked, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    pub method: String,
    pub pattern: String,
    pub reason: String,
}

/// What a source's routes become: the checked ones and the skipped.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct RoutePlan {
    pub routes: Vec<RouteSpec>,
    pub skipped: Vec<Skipped>,
}

/// Plans `declared` with the `methods` asked (upper case; empty: the
/// config's, else the safe ones) and the config.
pub fn plan(declared: Vec<Declared>, methods: &[String], config: &RoutesConfig) -> RoutePlan {
    let methods: Vec<String> = if !methods.is_empty() {
        methods.to_vec()
    } else if let Some(listed) = &config.methods {
        listed.iter().map(|m| m.to_ascii_uppercase()).collect()
    } else {
        SAFE_METHODS.iter().map(|m| m.to_string()).collect()
    };
    let mut out = RoutePlan::default();
    for route in declared {
        let skip = |reason: String| Skipped {
            method: route.method.clone(),
            pattern: route.pattern.clone(),
            reason,
        };
        if !methods.contains(&route.method) {
            let reason = format!(
                "{} changes data and is not sent unless asked: add --methods {}",
                route.method, route.method
            );
            out.skipped.push(skip(reason));
            continue;
        }
        if config.skips(&route.method, &route.pattern) {
            out.skipped.push(skip("skipped by the config file".into()));
            continue;
        }
        out.routes.push(spec(&route, config));
    }
    out
}

fn spec(route: &Declared, config: &RoutesConfig) -> RouteSpec {
    let own = config.for_route(&route.method, &route.pattern);
    let mut values: Values = config.params.clone();
    values.extend(own.params.clone());
    let path = fill(route, &values);
    let mut headers: Vec<(String, String)> = config
        .headers
        .iter()
        .chain(own.headers.iter())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let body = match &own.body {
        Some(serde_json::Value::String(text)) => Some(text.clone()),
        Some(value) => Some(value.to_string()),
        None => route.body.clone(),
    };
    if body.is_some()
        && !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
        headers.push(("Content-Type".into(), "application/json".into()));
    }
    let get = route.method == "GET";
    RouteSpec {
        name: if get {
            path.clone()
        } else {
            format!("{} {path}", route.method)
        },
        path,
        method: (!get).then(|| route.method.clone()),
        headers,
        body,
        source: route.source,
        pattern: Some(route.pattern.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routes::RouteSource;

    fn declared(method: &str, pattern: &str, body: Option<&str>) -> Declared {
        Declared {
            body: body.map(String::from),
            ..Declared::from_path(method, pattern, RouteSource::OpenApi, "test")
        }
    }

    #[test]
    fn only_safe_methods_unless_asked_and_every_skip_has_its_reason() {
        let routes = vec![
            declared("GET", "/users/{id}", None),
            declared("POST", "/orders", Some(r#"{"item":"x"}"#)),
            declared("GET", "/admin/stats", None),
        ];
        let config: RoutesConfig = serde_json::from_str(r#"{"skip": ["/admin/*"]}"#).unwrap();
        let safe = plan(routes.clone(), &[], &config);
        assert_eq!(safe.routes.len(), 1);
        assert_eq!(safe.routes[0].name, "/users/{n}");
        assert_eq!(safe.skipped.len(), 2);
        assert!(safe.skipped[0].reason.contains("--methods POST"));
        assert!(safe.skipped[1].reason.contains("config"));

        let asked = plan(routes, &["GET".into(), "POST".into()], &config);
        let post = &asked.routes[1];
        assert_eq!(post.name, "POST /orders");
        assert_eq!(post.method.as_deref(), Some("POST"));
        assert_eq!(post.body.as_deref(), Some(r#"{"item":"x"}"#));
        assert!(post.headers.iter().any(|(k, _)| k == "Content-Type"));
    }

    #[test]
    fn the_config_gives_values_headers_and_bodies() {
        let config: RoutesConfig = serde_json::from_str(
            r#"{"params": {"id": "u{n}"}, "headers": {"Authorization": "Bearer t"},
                "routes": {"POST /orders": {"body": {"item": "b{n}"}}}}"#,
        )
        .unwrap();
        let routes = vec![
            declared("GET", "/users/{id}", None),
            declared("POST", "/orders", None),
        ];
        let planned = plan(routes, &["GET".into(), "POST".into()], &config);
        assert_eq!(planned.routes[0].path, "/users/u{n}");
        assert_eq!(planned.routes[0].headers[0].0, "Authorization");
        assert_eq!(
            planned.routes[1].body.as_deref(),
            Some(r#"{"item":"b{n}"}"#)
        );
    }
}
