//! Routes from an OpenAPI document (3.0 and 3.1, and Swagger 2.0), JSON
//! or YAML: every operation with its method, its path under the first
//! server's (or `basePath`'s) prefix, its path and query parameters with
//! what the document says of their values, and a JSON body built from the
//! request body's example or schema. Only local `$ref`s (`#/components/…`,
//! `#/definitions/…`) are followed; a document split over files should be
//! bundled first (`redocly bundle`, `swagger-cli bundle`).

use serde_json::{Map, Value};

use super::fill::is_key_like;
use super::{Declared, Param, ParamPlace, RouteSource};

/// The methods an OpenAPI path item may hold.
const METHODS: [&str; 8] = [
    "get", "head", "options", "post", "put", "patch", "delete", "trace",
];
/// Nested schemas followed when building a body: enough for real request
/// bodies, and no loop on a recursive schema.
const MOST_DEPTH: usize = 6;
/// Stands for `{n}` in a JSON number's place until the body is written.
const SEQUENCE_MARK: &str = "@@leakcheck-sequence@@";

#[derive(Debug, thiserror::Error)]
pub enum OpenApiError {
    #[error("{0} is neither JSON nor YAML: {1}")]
    Syntax(String, String),
    #[error("{0} has no `openapi` or `swagger` version: is it an OpenAPI document?")]
    NotOpenApi(String),
    #[error("{0} has no `paths`")]
    NoPaths(String),
}

/// Reads `text` (named `name` in errors): JSON when it parses as JSON,
/// YAML otherwise.
pub fn parse(name: &str, text: &str) -> Result<Vec<Declared>, OpenApiError> {
    let document: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(_) => serde_saphyr::from_str(text)
            .map_err(|e| OpenApiError::Syntax(name.to_string(), e.to_string()))?,
    };
    let version = document
        .get("openapi")
        .or_else(|| document.get("swagger"))
        .and_then(value_text)
        .ok_or_else(|| OpenApiError::NotOpenApi(name.to_string()))?;
    let paths = document
        .get("paths")
        .and_then(Value::as_object)
        .ok_or_else(|| OpenApiError::NoPaths(name.to_string()))?;
    let doc = Document { root: &document };
    let prefix = base_path(&document);
    let origin = format!("openapi {version}");
    let mut routes = Vec::new();
    for (path, item) in paths {
        let item = doc.resolve(item);
        let shared = item.get("parameters");
        for method in METHODS {
            let Some(operation) = item.get(method).map(|o| doc.resolve(o)) else {
                continue;
            };
            let params = doc.params(shared, operation.get("parameters"));
            routes.push(Declared {
                method: method.to_ascii_uppercase(),
                pattern: join(&prefix, path),
                body: doc.body(operation),
                params,
                source: RouteSource::OpenApi,
                origin: origin.clone(),
            });
        }
    }
    Ok(routes)
}

/// A scalar as text: `3.1.0`, `42`, `true`.
fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The path part of the first server's URL (3.x) or `basePath` (2.0).
fn base_path(document: &Value) -> String {
    let url = document
        .pointer("/servers/0/url")
        .and_then(Value::as_str)
        .or_else(|| document.get("basePath").and_then(Value::as_str))
        .unwrap_or("");
    let path = match url.find("://") {
        Some(at) => url[at + 3..]
            .find('/')
            .map_or("", |slash| &url[at + 3 + slash..]),
        None => url,
    };
    path.trim_end_matches('/').to_string()
}

fn join(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.starts_with('/')) {
        (true, _) => path.to_string(),
        (false, true) => format!("{prefix}{path}"),
        (false, false) => format!("{prefix}/{path}"),
    }
}

struct Document<'a> {
    root: &'a Value,
}

impl<'a> Document<'a> {
    /// Follows a local `$ref` (a few times at most: a ref to a ref).
    fn resolve(&self, value: &'a Value) -> &'a Value {
        let mut at = value;
        for _ in 0..8 {
            let Some(target) = at.get("$ref").and_then(Value::as_str) else {
                return at;
            };
            let Some(pointer) = target.strip_prefix('#') else {
                return at;
            };
            match self.root.pointer(pointer) {
                Some(found) => at = found,
                None => return at,
            }
        }
        at
    }

    /// The path item's parameters overridden by the operation's (same
    /// name and place), path and query only.
    fn params(&self, shared: Option<&'a Value>, own: Option<&'a Value>) -> Vec<Param> {
        let mut params: Vec<Param> = Vec::new();
        let listed = |v: Option<&'a Value>| v.and_then(Value::as_array).into_iter().flatten();
        for raw in listed(shared).chain(listed(own)) {
            let Some(param) = self.param(self.resolve(raw)) else {
                continue;
            };
            params.retain(|p| !(p.name == param.name && p.place == param.place));
            params.push(param);
        }
        params.sort_by_key(|p| p.place == ParamPlace::Query);
        params
    }

    fn param(&self, raw: &Value) -> Option<Param> {
        let place = match raw.get("in")?.as_str()? {
            "path" => ParamPlace::Path,
            "query" => ParamPlace::Query,
            _ => return None,
        };
        // 3.x keeps type and values in `schema`; 2.0 on the parameter.
        let schema = raw.get("schema").map(|s| self.resolve(s)).unwrap_or(raw);
        let example = raw
            .get("example")
            .or_else(|| first_example(raw.get("examples")))
            .or_else(|| schema.get("example"))
            .or_else(|| schema.get("default"))
            .or_else(|| schema.pointer("/enum/0"))
            .and_then(value_text);
        Some(Param {
            name: raw.get("name")?.as_str()?.to_string(),
            place,
            required: raw
                .get("required")
                .and_then(Value::as_bool)
                .unwrap_or(false)
                || place == ParamPlace::Path,
            kind: schema.get("type").and_then(value_text),
            format: schema.get("format").and_then(value_text),
            example,
            enumerated: schema.get("enum").is_some_and(Value::is_array),
        })
    }

    /// A JSON body: the request body's example, else one built from its
    /// schema (3.x `requestBody`, 2.0's `in: body` parameter).
    fn body(&self, operation: &'a Value) -> Option<String> {
        let media = operation
            .get("requestBody")
            .map(|b| self.resolve(b))
            .and_then(|b| b.get("content"))
            .and_then(Value::as_object)
            .and_then(|content| {
                content
                    .iter()
                    .find(|(kind, _)| kind.contains("json"))
                    .map(|(_, media)| media)
            });
        let (example, schema) = match media {
            Some(media) => (
                media
                    .get("example")
                    .or_else(|| first_example(media.get("examples"))),
                media.get("schema"),
            ),
            None => {
                let body = operation
                    .get("parameters")
                    .and_then(Value::as_array)?
                    .iter()
                    .map(|p| self.resolve(p))
                    .find(|p| p.get("in").and_then(Value::as_str) == Some("body"))?;
                (None, body.get("schema"))
            }
        };
        let value = match example {
            Some(example) => example.clone(),
            None => self.sample(schema?, None, 0)?,
        };
        let text = serde_json::to_string(&value).ok()?;
        Some(text.replace(&format!("\"{SEQUENCE_MARK}\""), "{n}"))
    }

    /// A value for `schema`: its example, default or first enum value,
    /// else one of its type; an object's required properties (all of them
    /// when none is marked).
    fn sample(&self, schema: &'a Value, name: Option<&str>, depth: usize) -> Option<Value> {
        let schema = self.resolve(schema);
        if depth > MOST_DEPTH {
            return None;
        }
        if let Some(v) = schema
            .get("example")
            .or_else(|| schema.get("default"))
            .or_else(|| schema.pointer("/enum/0"))
        {
            return Some(v.clone());
        }
        if let Some(first) = schema
            .get("allOf")
            .or_else(|| schema.get("oneOf"))
            .or_else(|| schema.get("anyOf"))
            .and_then(|v| v.get(0))
        {
            return self.sample(first, name, depth + 1);
        }
        let key = name.is_some_and(is_key_like);
        let kind = schema.get("type").and_then(|t| match t {
            Value::Array(kinds) => kinds.iter().find(|k| *k != "null").and_then(Value::as_str),
            other => other.as_str(),
        });
        Some(match kind {
            Some("integer" | "number") if key => Value::String(SEQUENCE_MARK.into()),
            Some("integer" | "number") => Value::from(1),
            Some("boolean") => Value::Bool(true),
            Some("array") => {
                let item = schema
                    .get("items")
                    .and_then(|i| self.sample(i, None, depth + 1));
                Value::Array(item.into_iter().collect())
            }
            Some("string") if schema.get("format").and_then(Value::as_str) == Some("uuid") => {
                Value::String("{uuid}".into())
            }
            Some("string") if key => Value::String(format!("{}-{{n}}", name.unwrap_or("v"))),
            Some("string") => Value::String("x".into()),
            _ => {
                let properties = schema.get("properties").and_then(Value::as_object)?;
                let required: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_else(|| properties.keys().map(String::as_str).collect());
                let mut object = Map::new();
                for (property, sub) in properties {
                    if required.contains(&property.as_str())
                        && let Some(value) = self.sample(sub, Some(property), depth + 1)
                    {
                        object.insert(property.clone(), value);
                    }
                }
                Value::Object(object)
            }
        })
    }
}

/// The first value of an `examples` map (`{name: {value}}`) or list.
fn first_example(examples: Option<&Value>) -> Option<&Value> {
    match examples? {
        Value::Object(map) => map.values().next().map(|e| e.get("value").unwrap_or(e)),
        Value::Array(list) => list.first(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const YAML: &str = r##"
openapi: 3.1.0
servers:
  - url: http://localhost:3000/api
paths:
  /users/{id}:
    parameters:
      - $ref: '#/components/parameters/UserId'
    get:
      parameters:
        - name: fields
          in: query
          schema: { type: string, example: name }
    delete: {}
  /orders:
    post:
      requestBody:
        content:
          application/json:
            schema: { $ref: '#/components/schemas/Order' }
components:
  parameters:
    UserId: { name: id, in: path, required: true, schema: { type: integer } }
  schemas:
    Order:
      type: object
      required: [orderId, item, qty]
      properties:
        orderId: { type: integer }
        item: { type: string }
        qty: { type: integer, default: 2 }
        note: { type: string }
"##;

    #[test]
    fn a_yaml_document_gives_every_operation_under_its_servers_prefix() {
        let routes = parse("api.yaml", YAML).unwrap();
        let seen: Vec<(&str, &str)> = routes
            .iter()
            .map(|r| (r.method.as_str(), r.pattern.as_str()))
            .collect();
        // Paths in order of their text (a JSON object keeps no order), then
        // the methods in the order OpenAPI lists them.
        assert_eq!(
            seen,
            [
                ("POST", "/api/orders"),
                ("GET", "/api/users/{id}"),
                ("DELETE", "/api/users/{id}")
            ]
        );
        let get = &routes[1];
        assert_eq!(get.params.len(), 2);
        assert_eq!(get.params[0].name, "id");
        assert_eq!(get.params[0].kind.as_deref(), Some("integer"));
        assert_eq!(get.params[1].example.as_deref(), Some("name"));
        assert_eq!(
            routes[0].body.as_deref(),
            Some(r#"{"item":"x","orderId":{n},"qty":2}"#)
        );
    }

    #[test]
    fn swagger_two_reads_its_base_path_and_body_parameter() {
        let json = r##"{"swagger":"2.0","basePath":"/v1","paths":{"/pets":{"post":{
            "parameters":[{"in":"body","name":"pet","schema":{"$ref":"#/definitions/Pet"}},
                          {"in":"query","name":"dryRun","type":"boolean","required":true}]}}},
            "definitions":{"Pet":{"type":"object","properties":{"name":{"type":"string","example":"rex"}}}}}"##;
        let routes = parse("pets.json", json).unwrap();
        assert_eq!(routes[0].pattern, "/v1/pets");
        assert_eq!(routes[0].body.as_deref(), Some(r#"{"name":"rex"}"#));
        assert_eq!(routes[0].params[0].kind.as_deref(), Some("boolean"));
    }

    #[test]
    fn a_document_that_is_not_openapi_says_so() {
        assert!(matches!(
            parse("x.json", r#"{"name":"x"}"#),
            Err(OpenApiError::NotOpenApi(_))
        ));
        assert!(matches!(
            parse("x.yaml", "a: [unclosed"),
            Err(OpenApiError::Syntax(..))
        ));
    }
}
