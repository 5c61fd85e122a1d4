//! Routes from the live app's router, read through the inspector with no
//! change to the app. The router modules a framework loads are found in
//! the target's CommonJS cache by file (`app_prototypes.js`), their live
//! instances by prototype (`Runtime.queryObjects`, what DevTools'
//! `queryObjects()` uses), and each framework's route table read from
//! them (`app_routes.js`):
//!
//! | framework | instances of | routes from |
//! |---|---|---|
//! | Express 4 (and Nest on it) | `express/lib/router` | `stack` layers, mount paths from their regexps |
//! | Express 5 | `router` | `stack` layers, mount paths from `rawPath` |
//! | Fastify (and Nest on it) | `find-my-way` | `routes` |
//! | Koa | `@koa/router` | `stack` layers (prefix applied) |
//! | Hapi | its core | `router.table()` |
//!
//! HEAD routes a framework adds for each GET (Fastify, Koa) are dropped.

use serde_json::{Value, json};

use super::{Declared, RouteSource};
use crate::inspector::{Inspector, InspectorError};

const PROTOTYPES: &str = include_str!("app_prototypes.js");
const ROUTES: &str = include_str!("app_routes.js");
/// Objects the discovery holds in the target, released together after.
const GROUP: &str = "leakcheck-routes";

/// The routes every framework in the target declares; empty when none of
/// the known routers is loaded.
pub async fn discover(inspector: &Inspector) -> Result<Vec<Declared>, InspectorError> {
    let found = discover_in_group(inspector).await;
    // Releasing is housekeeping: the routes stand without it.
    let _ = inspector
        .call(
            "Runtime.releaseObjectGroup",
            json!({ "objectGroup": GROUP }),
        )
        .await;
    found
}

async fn discover_in_group(inspector: &Inspector) -> Result<Vec<Declared>, InspectorError> {
    let listed = inspector
        .call(
            "Runtime.evaluate",
            json!({
                "expression": PROTOTYPES,
                "objectGroup": GROUP,
                "includeCommandLineAPI": true,
                "silent": true,
            }),
        )
        .await?;
    let Some(list) = listed.pointer("/result/objectId").and_then(Value::as_str) else {
        return Ok(Vec::new());
    };
    let mut routes: Vec<Declared> = Vec::new();
    let count = call_on(
        inspector,
        list,
        "function () { return this.length; }",
        &[],
        true,
    )
    .await?
    .pointer("/result/value")
    .and_then(Value::as_u64)
    .unwrap_or(0);
    for index in 0..count {
        let entry = |part: u64| format!("function (i) {{ return this[i][{part}]; }}");
        let framework = call_on(inspector, list, &entry(0), &[json!(index)], true).await?;
        let Some(framework) = framework.pointer("/result/value").and_then(Value::as_str) else {
            continue;
        };
        let prototype = call_on(inspector, list, &entry(1), &[json!(index)], false).await?;
        let Some(prototype) = prototype
            .pointer("/result/objectId")
            .and_then(Value::as_str)
        else {
            continue;
        };
        let instances = inspector
            .call(
                "Runtime.queryObjects",
                json!({ "prototypeObjectId": prototype, "objectGroup": GROUP }),
            )
            .await?;
        let Some(instances) = instances
            .pointer("/objects/objectId")
            .and_then(Value::as_str)
        else {
            continue;
        };
        let table = call_on(inspector, instances, ROUTES, &[json!(framework)], true).await?;
        let pairs = table
            .pointer("/result/value")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        routes.extend(pairs.iter().filter_map(|pair| declared(framework, pair)));
    }
    Ok(tidy(routes))
}

async fn call_on(
    inspector: &Inspector,
    object: &str,
    function: &str,
    arguments: &[Value],
    by_value: bool,
) -> Result<Value, InspectorError> {
    let arguments: Vec<Value> = arguments.iter().map(|v| json!({ "value": v })).collect();
    let answer = inspector
        .call(
            "Runtime.callFunctionOn",
            json!({
                "functionDeclaration": function,
                "objectId": object,
                "arguments": arguments,
                "returnByValue": by_value,
                "objectGroup": GROUP,
                "silent": true,
            }),
        )
        .await?;
    if let Some(details) = answer.get("exceptionDetails") {
        return Err(InspectorError::Evaluation {
            expression: "the route discovery".into(),
            message: details
                .pointer("/exception/description")
                .and_then(Value::as_str)
                .unwrap_or("an exception")
                .to_string(),
        });
    }
    Ok(answer)
}

fn declared(framework: &str, pair: &Value) -> Option<Declared> {
    let method = pair.get(0)?.as_str()?;
    let pattern = pair.get(1)?.as_str()?;
    Some(Declared::from_path(
        method,
        pattern,
        RouteSource::App,
        framework,
    ))
}

/// One route per method and pattern, in declaration order, without the
/// HEAD a framework adds beside each GET, and `ALL` read as GET.
fn tidy(routes: Vec<Declared>) -> Vec<Declared> {
    let mut out: Vec<Declared> = Vec::new();
    for mut route in routes {
        if route.method == "ALL" {
            route.method = "GET".into();
        }
        if !out
            .iter()
            .any(|r| r.method == route.method && r.pattern == route.pattern)
        {
            out.push(route);
        }
    }
    let gets: Vec<String> = out
        .iter()
        .filter(|r| r.method == "GET")
        .map(|r| r.pattern.clone())
        .collect();
    out.retain(|r| r.method != "HEAD" || !gets.contains(&r.pattern));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(method: &str, pattern: &str) -> Declared {
        declared("koa", &json!([method, pattern])).unwrap()
    }

    #[test]
    fn the_head_beside_each_get_and_repeats_are_dropped() {
        let routes = tidy(vec![
            route("HEAD", "/a"),
            route("GET", "/a"),
            route("GET", "/a"),
            route("HEAD", "/b"),
            route("ALL", "/c/:id"),
        ]);
        let seen: Vec<(&str, &str)> = routes
            .iter()
            .map(|r| (r.method.as_str(), r.pattern.as_str()))
            .collect();
        assert_eq!(seen, [("GET", "/a"), ("HEAD", "/b"), ("GET", "/c/:id")]);
        assert_eq!(routes[2].params[0].name, "id");
    }
}
