//! A declared path pattern made into a request template, in any of the
//! syntaxes routers use: `{id}` (OpenAPI, Hapi), `:id` (Express, Koa,
//! Fastify), `[id]` and `[...slug]` (Next.js), `*` (a wildcard).
//!
//! A parameter takes, in order: the value the config file gives it, the
//! value the declaration gives (an example, the default, an enum's first),
//! then a value of its own making. A path parameter, or a query parameter
//! named like a key (`id`, `userId`, `slug`, `q`), gets `{n}`: a value
//! unique per request, as production traffic sends, so that a cache keyed
//! by it grows under the check as it does in production. Other query
//! parameters are sent only when required, with a plain value of their
//! type.

use std::collections::BTreeMap;

use super::{Declared, Param, ParamPlace};

/// Values the user gave, by parameter name (`leakcheck.json`'s `params`).
pub type Values = BTreeMap<String, String>;

/// One piece of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    /// A parameter: its name, and whether it spans segments (`[...slug]`,
    /// `*`) or may be left out (`:id?`, `[[...slug]]`, `{id?}`).
    Param {
        name: String,
        rest: bool,
        optional: bool,
    },
}

/// The pieces of `pattern`, whatever its syntax.
fn pieces(pattern: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    for (index, segment) in pattern.split('/').enumerate() {
        if index > 0 {
            out.push(Piece::Literal("/".into()));
        }
        out.extend(segment_pieces(segment));
    }
    out
}

fn param(name: &str, rest: bool, optional: bool) -> Piece {
    let name = if name.is_empty() { "wildcard" } else { name };
    Piece::Param {
        name: name.to_string(),
        rest,
        optional,
    }
}

fn segment_pieces(segment: &str) -> Vec<Piece> {
    // Next.js: the whole segment.
    if let Some(inner) = segment
        .strip_prefix("[[...")
        .and_then(|s| s.strip_suffix("]]"))
    {
        return vec![param(inner, true, true)];
    }
    if let Some(inner) = segment
        .strip_prefix("[...")
        .and_then(|s| s.strip_suffix(']'))
    {
        return vec![param(inner, true, false)];
    }
    if let Some(inner) = segment.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
        return vec![param(inner, false, false)];
    }
    if let Some(name) = segment.strip_prefix('*') {
        return vec![param(name, true, false)];
    }
    let mut out = Vec::new();
    let mut literal = String::new();
    let mut chars = segment.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' => {
                let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                flush(&mut literal, &mut out);
                let optional = name.ends_with('?');
                let rest = name.ends_with('*');
                out.push(param(name.trim_end_matches(['?', '*']), rest, optional));
            }
            ':' => {
                let mut name = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_alphanumeric() || c == '_' {
                        name.push(c);
                        chars.next();
                    } else {
                        break;
                    }
                }
                // Express 4's inline pattern, `:id(\d+)`: not part of the name.
                if chars.peek() == Some(&'(') {
                    let mut depth = 0;
                    for c in chars.by_ref() {
                        depth += match c {
                            '(' => 1,
                            ')' => -1,
                            _ => 0,
                        };
                        if depth == 0 {
                            break;
                        }
                    }
                }
                let optional = chars.peek() == Some(&'?');
                if optional {
                    chars.next();
                }
                flush(&mut literal, &mut out);
                out.push(param(&name, false, optional));
            }
            _ => literal.push(c),
        }
    }
    flush(&mut literal, &mut out);
    out
}

fn flush(literal: &mut String, out: &mut Vec<Piece>) {
    if !literal.is_empty() {
        out.push(Piece::Literal(std::mem::take(literal)));
    }
}

/// The names of the path parameters in `pattern`, in order.
pub fn path_params(pattern: &str) -> Vec<String> {
    pieces(pattern)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Param { name, .. } => Some(name),
            Piece::Literal(_) => None,
        })
        .collect()
}

/// Names that mark a key: a value unique per request is what production
/// sends there.
pub fn is_key_like(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "id"
        || name.ends_with("Id")
        || name.ends_with("ID")
        || lower.ends_with("_id")
        || matches!(
            lower.as_str(),
            "key" | "slug" | "uuid" | "token" | "sku" | "code" | "name" | "user" | "username"
        )
}

/// Names of a search term: `term{n}` rather than a bare number.
fn is_search_like(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "q" | "query" | "search" | "term" | "keyword" | "filter"
    )
}

/// A value of the parameter's own making.
fn made_value(param: &Param) -> Option<String> {
    if param.format.as_deref() == Some("uuid") {
        return Some("{uuid}".into());
    }
    if is_search_like(&param.name) {
        return Some("term{n}".into());
    }
    if param.place == ParamPlace::Path || is_key_like(&param.name) {
        return Some("{n}".into());
    }
    if !param.required {
        return None;
    }
    Some(
        match param.kind.as_deref() {
            Some("integer" | "number") => "1",
            Some("boolean") => "true",
            _ => "x",
        }
        .into(),
    )
}

/// The value `param` is sent with, or `None` to leave it out.
fn value_of(param: &Param, values: &Values) -> Option<String> {
    if let Some(given) = values.get(&param.name) {
        return Some(given.clone());
    }
    // A declared example is one fixed value; a key's example would make
    // every request hit the same entry, so keys (and path segments named
    // by nothing else) still vary.
    match &param.example {
        Some(example) if param.enumerated || !is_key_like(&param.name) => Some(example.clone()),
        _ => made_value(param),
    }
}

/// The request template of `declared` with `values`: `/users/{n}?q=term{n}`.
pub fn fill(declared: &Declared, values: &Values) -> String {
    let declared_param = |name: &str| {
        declared
            .params
            .iter()
            .find(|p| p.name == name && p.place == ParamPlace::Path)
            .cloned()
            .unwrap_or(Param {
                name: name.to_string(),
                place: ParamPlace::Path,
                required: true,
                ..Param::default()
            })
    };
    let mut path = String::new();
    for piece in pieces(&declared.pattern) {
        match piece {
            Piece::Literal(text) => path.push_str(&text),
            Piece::Param {
                name,
                rest,
                optional,
            } => {
                let given = values.get(&name).cloned();
                match (given, optional) {
                    (Some(value), _) => path.push_str(&value),
                    (None, true) => {}
                    (None, false) => {
                        let value = value_of(&declared_param(&name), values)
                            .unwrap_or_else(|| "{n}".into());
                        if rest {
                            path.push_str("a/");
                        }
                        path.push_str(&value);
                    }
                }
            }
        }
    }
    // An optional last segment left out leaves a trailing slash.
    if path.len() > 1 && path.ends_with('/') && !declared.pattern.ends_with('/') {
        path.pop();
    }
    if path.is_empty() {
        path.push('/');
    }
    let query: Vec<String> = declared
        .params
        .iter()
        .filter(|p| p.place == ParamPlace::Query)
        .filter_map(|p| Some(format!("{}={}", p.name, value_of(p, values)?)))
        .collect();
    if !query.is_empty() {
        path.push(if path.contains('?') { '&' } else { '?' });
        path.push_str(&query.join("&"));
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routes::RouteSource;

    fn declared(pattern: &str, params: Vec<Param>) -> Declared {
        Declared {
            method: "GET".into(),
            pattern: pattern.into(),
            params,
            body: None,
            source: RouteSource::App,
            origin: "test".into(),
        }
    }

    fn query(name: &str, required: bool, example: Option<&str>) -> Param {
        Param {
            name: name.into(),
            place: ParamPlace::Query,
            required,
            example: example.map(String::from),
            ..Param::default()
        }
    }

    #[test]
    fn every_routers_syntax_fills_keys_with_a_value_per_request() {
        let none = Values::new();
        assert_eq!(fill(&declared("/users/:id", vec![]), &none), "/users/{n}");
        assert_eq!(
            fill(&declared("/users/{userId}", vec![]), &none),
            "/users/{n}"
        );
        assert_eq!(fill(&declared("/items/[id]", vec![]), &none), "/items/{n}");
        assert_eq!(
            fill(&declared("/docs/[...slug]", vec![]), &none),
            "/docs/a/{n}"
        );
        assert_eq!(fill(&declared("/shop/[[...slug]]", vec![]), &none), "/shop");
        assert_eq!(fill(&declared("/a/:id(\\d+)/b", vec![]), &none), "/a/{n}/b");
        assert_eq!(fill(&declared("/posts/:page?", vec![]), &none), "/posts");
        assert_eq!(fill(&declared("/files/*", vec![]), &none), "/files/a/{n}");
        assert_eq!(fill(&declared("/", vec![]), &none), "/");
    }

    #[test]
    fn given_values_win_then_declared_examples_then_made_ones() {
        let mut values = Values::new();
        values.insert("lang".into(), "en".into());
        let route = declared(
            "/:lang/search",
            vec![
                query("q", true, None),
                query("page", false, None),
                query("limit", true, Some("20")),
                query("sort", false, Some("name")),
                query("userId", false, None),
            ],
        );
        assert_eq!(
            fill(&route, &values),
            "/en/search?q=term{n}&limit=20&sort=name&userId={n}"
        );
    }

    #[test]
    fn path_parameter_names_are_read_in_every_syntax() {
        assert_eq!(path_params("/a/:x/b/{y}/[z]/[...w]"), ["x", "y", "z", "w"]);
    }
}
