//! Scenario files (`--scenario FILE`): the steps each virtual user (one
//! connection) runs in a loop. One pass over the steps is one *iteration*,
//! the unit of work that `-a` counts and the fit divides by.
//!
//! ```json
//! { "steps": [
//!     { "method": "POST", "path": "/login",
//!       "headers": { "content-type": "application/json" },
//!       "body": { "user": "u{n}", "password": "secret" },
//!       "capture": { "token": "json:access.token" } },
//!     { "path": "/profile", "repeat": 5,
//!       "headers": { "authorization": "Bearer {token}" } }
//! ] }
//! ```
//!
//! A step: `path` (required), `method` (GET), `headers` (an object),
//! `body` (a string, or any JSON value, sent as compact JSON), `repeat`
//! (1), `expect` (`2xx`, a class like `3xx`, or an exact status such as
//! `201`; default `2xx`), `capture` (`name: "json:dotted.path"` or
//! `name: "header:x-name"`). `{name}` uses a value captured by an earlier
//! step of the same iteration, next to the templates of `template.rs`
//! (`{n}` is one number per iteration, shared by its steps). Each virtual
//! user keeps a cookie jar: `Set-Cookie` is stored and sent back as
//! `Cookie`. JSON only: the YAML crates for serde are unmaintained
//! (serde_yaml is archived), so leakcheck does not take one on.
//!
//! A file is checked whole before any target starts: an unknown field, a
//! missing path or a bad capture is refused with the file, the step and
//! the field.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::request::{PreparedRequest, RequestSpec};

/// The largest scenario file read.
const MAX_SCENARIO_BYTES: u64 = 4 * 1024 * 1024;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileFormat {
    steps: Vec<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepFormat {
    #[serde(default)]
    name: Option<String>,
    #[serde(default = "get")]
    method: String,
    path: String,
    #[serde(default)]
    headers: serde_json::Map<String, Value>,
    #[serde(default)]
    body: Option<Value>,
    #[serde(default = "one")]
    repeat: u32,
    #[serde(default)]
    expect: Option<Value>,
    #[serde(default)]
    capture: serde_json::Map<String, Value>,
}

fn get() -> String {
    "GET".to_string()
}

fn one() -> u32 {
    1
}

/// Which statuses a step expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// `2xx`: a status class, by its hundreds digit.
    Class(u16),
    Exact(u16),
}

impl Expect {
    pub fn accepts(self, status: u16) -> bool {
        match self {
            Expect::Class(class) => status / 100 == class,
            Expect::Exact(code) => status == code,
        }
    }
}

impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expect::Class(class) => write!(f, "{class}xx"),
            Expect::Exact(code) => write!(f, "{code}"),
        }
    }
}

/// Where a capture reads its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaptureFrom {
    /// A dotted path into the JSON body: `access.token`, `items.0.id`.
    Json(Vec<String>),
    /// A response header, by its lowercase name.
    Header(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    pub name: String,
    pub from: CaptureFrom,
    /// As written, for messages: `json:access.token`.
    pub source: String,
}

/// A step ready to run.
#[derive(Debug, Clone)]
pub struct Step {
    /// `name`, or `METHOD path` as written.
    pub label: String,
    /// The path as written, for the cookie jar's path rule (a template's
    /// placeholders unrendered: a cookie for `/users` goes to `/users/{n}`,
    /// one for `/users/42` does not).
    pub path: String,
    pub request: PreparedRequest,
    pub repeat: u32,
    pub expect: Expect,
    pub captures: Vec<Capture>,
    /// Whether the step sets its own `Cookie` header (the jar then stays out).
    pub own_cookie: bool,
}

/// A scenario file that cannot be used, with the place that says why.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("cannot read {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is larger than 4 MB: not a scenario")]
    TooLarge { path: String },
    #[error(
        "{file}: a scenario is a JSON object, {{\"steps\": [{{\"path\": \"/login\"}}, …]}}, not \
         {found}"
    )]
    NotAnObject { file: String, found: &'static str },
    #[error("{file}: {error}")]
    Format {
        file: String,
        error: serde_json::Error,
    },
    #[error("{file}: \"steps\" is empty: give at least one step")]
    Empty { file: String },
    #[error("{file}: step {step}: {error}")]
    StepFormat {
        file: String,
        step: usize,
        error: serde_json::Error,
    },
    #[error("{file}: step {step}: {field}: {why}")]
    Step {
        file: String,
        step: usize,
        field: &'static str,
        why: String,
    },
}

/// A checked, prepared scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file it came from, for reports.
    pub source: String,
    pub steps: Vec<Step>,
}

impl Scenario {
    /// Reads and checks `path`; `host` is the Host header of every request.
    pub fn load(path: &Path, host: &str) -> Result<Scenario, ScenarioError> {
        Scenario::load_with(path, host, &[])
    }

    /// `load`, with `shared` headers (`-H`) sent by every step that does
    /// not set the same header itself.
    pub fn load_with(
        path: &Path,
        host: &str,
        shared: &[(String, String)],
    ) -> Result<Scenario, ScenarioError> {
        use std::io::Read;
        let shown = path.display().to_string();
        let read = |source| ScenarioError::Read {
            path: shown.clone(),
            source,
        };
        let file = std::fs::File::open(path).map_err(read)?;
        let mut text = String::new();
        file.take(MAX_SCENARIO_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(read)?;
        if text.len() as u64 > MAX_SCENARIO_BYTES {
            return Err(ScenarioError::TooLarge { path: shown });
        }
        Scenario::parse_with(&text, &shown, host, shared)
    }

    /// Checks a scenario's text; `source` names it in messages.
    pub fn parse(text: &str, source: &str, host: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse_with(text, source, host, &[])
    }

    /// `parse`, with `shared` headers as in `load_with`.
    pub fn parse_with(
        text: &str,
        source: &str,
        host: &str,
        shared: &[(String, String)],
    ) -> Result<Scenario, ScenarioError> {
        let whole: Value = serde_json::from_str(text).map_err(|error| ScenarioError::Format {
            file: source.to_string(),
            error,
        })?;
        let found = match &whole {
            Value::Object(_) => None,
            Value::Array(_) => Some("an array (put the steps under \"steps\")"),
            _ => Some("a single value"),
        };
        if let Some(found) = found {
            return Err(ScenarioError::NotAnObject {
                file: source.to_string(),
                found,
            });
        }
        let file: FileFormat =
            serde_json::from_value(whole).map_err(|error| ScenarioError::Format {
                file: source.to_string(),
                error,
            })?;
        if file.steps.is_empty() {
            return Err(ScenarioError::Empty {
                file: source.to_string(),
            });
        }
        let mut captured: Vec<String> = Vec::new();
        let mut steps = Vec::new();
        for (index, raw) in file.steps.into_iter().enumerate() {
            let at = |field: &'static str, why: String| ScenarioError::Step {
                file: source.to_string(),
                step: index + 1,
                field,
                why,
            };
            let step: StepFormat =
                serde_json::from_value(raw).map_err(|error| ScenarioError::StepFormat {
                    file: source.to_string(),
                    step: index + 1,
                    error,
                })?;
            steps.push(prepare_step(step, &mut captured, host, shared, &at)?);
        }
        Ok(Scenario {
            source: source.to_string(),
            steps,
        })
    }

    /// Whether any step reads a `{n}`.
    pub fn uses_sequence(&self) -> bool {
        self.steps.iter().any(|s| s.request.uses_sequence())
    }

    /// Response headers some step reads: cookies and header captures.
    pub fn wanted_headers(&self) -> Vec<String> {
        let mut names = vec!["set-cookie".to_string()];
        for capture in self.steps.iter().flat_map(|s| &s.captures) {
            if let CaptureFrom::Header(name) = &capture.from
                && !names.contains(name)
            {
                names.push(name.clone());
            }
        }
        names
    }
}

fn prepare_step(
    step: StepFormat,
    captured: &mut Vec<String>,
    host: &str,
    shared: &[(String, String)],
    at: &dyn Fn(&'static str, String) -> ScenarioError,
) -> Result<Step, ScenarioError> {
    if !step.path.starts_with('/') || step.path.contains(['\r', '\n', ' ']) {
        return Err(at(
            "path",
            format!(
                "{:?} must start with `/` and hold no space or line break",
                step.path
            ),
        ));
    }
    if step.method.is_empty() || !step.method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(at(
            "method",
            format!("{:?} is not an HTTP method", step.method),
        ));
    }
    if step.repeat == 0 {
        return Err(at("repeat", "must be at least 1".into()));
    }
    // `-H` headers first, unless the step sets the same one.
    let mut headers: Vec<(String, String)> = shared
        .iter()
        .filter(|(name, _)| {
            !step
                .headers
                .keys()
                .any(|own| own.eq_ignore_ascii_case(name))
        })
        .cloned()
        .collect();
    for (name, value) in &step.headers {
        let Some(value) = value.as_str() else {
            return Err(at("headers", format!("{name:?} must be a string")));
        };
        if let Some(why) = super::framing_header(name) {
            return Err(at("headers", format!("{name:?} is refused: {why}")));
        }
        if name.contains(['\r', '\n', ':']) || value.contains(['\r', '\n']) {
            return Err(at(
                "headers",
                format!("{name:?} holds a colon or line break"),
            ));
        }
        headers.push((name.clone(), value.to_string()));
    }
    let body = match step.body {
        None => Vec::new(),
        Some(Value::String(text)) => text.into_bytes(),
        Some(other) => other.to_string().into_bytes(),
    };
    let expect = match &step.expect {
        None => Expect::Class(2),
        Some(value) => parse_expect(value).ok_or_else(|| {
            at(
                "expect",
                format!("{value} is neither a class like \"2xx\" nor a status like 201"),
            )
        })?,
    };
    let spec = RequestSpec {
        method: step.method.to_ascii_uppercase(),
        path: step.path.clone(),
        headers,
        body,
        weight: 1,
    };
    // Captures of earlier steps are in scope; this step's own only after it.
    let request = PreparedRequest::new(&spec, host, Some(captured))
        .map_err(|e| at("template", e.to_string()))?;
    let mut captures = Vec::new();
    for (name, source) in &step.capture {
        let Some(source) = source.as_str() else {
            return Err(at("capture", format!("{name:?} must be a string")));
        };
        let valid_name = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && !matches!(name.as_str(), "n" | "uuid");
        if !valid_name {
            return Err(at(
                "capture",
                format!("{name:?} is not a usable name (letters, digits, _)"),
            ));
        }
        let from = parse_capture(source).ok_or_else(|| {
            at(
                "capture",
                format!("{name}: {source:?} must be \"json:path.to.field\" or \"header:name\""),
            )
        })?;
        captures.push(Capture {
            name: name.clone(),
            from,
            source: source.to_string(),
        });
        if !captured.contains(name) {
            captured.push(name.clone());
        }
    }
    let own_cookie = spec
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("cookie"));
    Ok(Step {
        label: step
            .name
            .unwrap_or_else(|| format!("{} {}", spec.method, spec.path)),
        path: spec.path.clone(),
        request,
        repeat: step.repeat,
        expect,
        captures,
        own_cookie,
    })
}

fn parse_expect(value: &Value) -> Option<Expect> {
    if let Some(code) = value.as_u64() {
        return (100..600)
            .contains(&code)
            .then_some(Expect::Exact(code as u16));
    }
    let text = value.as_str()?.to_ascii_lowercase();
    if let Some(class) = text.strip_suffix("xx") {
        let class: u16 = class.parse().ok()?;
        return (1..=5).contains(&class).then_some(Expect::Class(class));
    }
    let code: u16 = text.parse().ok()?;
    (100..600).contains(&code).then_some(Expect::Exact(code))
}

fn parse_capture(source: &str) -> Option<CaptureFrom> {
    if let Some(path) = source.strip_prefix("json:") {
        let parts: Vec<String> = path.split('.').map(str::to_string).collect();
        return parts
            .iter()
            .all(|p| !p.is_empty())
            .then_some(CaptureFrom::Json(parts));
    }
    let name = source.strip_prefix("header:")?.trim().to_ascii_lowercase();
    (!name.is_empty() && !name.contains(['\r', '\n', ':'])).then_some(CaptureFrom::Header(name))
}

/// Reads a capture's value from a response. `None` when it finds nothing;
/// a value with a line break is refused too (it would split a request).
pub fn extract(capture: &Capture, headers: &[(String, Vec<u8>)], body: &[u8]) -> Option<Vec<u8>> {
    let value = match &capture.from {
        CaptureFrom::Header(name) => headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())?,
        CaptureFrom::Json(path) => {
            let mut node: Value = serde_json::from_slice(body).ok()?;
            for key in path {
                node = match node {
                    Value::Object(mut map) => map.remove(key)?,
                    Value::Array(mut items) => {
                        let index: usize = key.parse().ok()?;
                        (index < items.len()).then(|| items.swap_remove(index))?
                    }
                    _ => return None,
                };
            }
            match node {
                Value::String(text) => text.into_bytes(),
                Value::Number(n) => n.to_string().into_bytes(),
                Value::Bool(b) => b.to_string().into_bytes(),
                _ => return None,
            }
        }
    };
    (!value.contains(&b'\r') && !value.contains(&b'\n')).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOGIN: &str = r#"{ "steps": [
        { "method": "POST", "path": "/login", "body": { "user": "u{n}" },
          "capture": { "token": "json:access.token", "sid": "header:X-Session" } },
        { "path": "/profile", "repeat": 5, "headers": { "authorization": "Bearer {token}" } }
    ] }"#;

    #[test]
    fn a_login_scenario_is_prepared() {
        let scenario = Scenario::parse(LOGIN, "login.json", "h").unwrap();
        assert_eq!(scenario.steps.len(), 2);
        assert_eq!(scenario.steps[1].repeat, 5);
        let sid = scenario.steps[0].captures.iter().find(|c| c.name == "sid");
        assert_eq!(sid.unwrap().from, CaptureFrom::Header("x-session".into()));
        assert!(scenario.uses_sequence());
        assert_eq!(scenario.wanted_headers(), vec!["set-cookie", "x-session"]);
    }

    #[test]
    fn mistakes_name_the_file_the_step_and_the_field() {
        let cases = [
            (r#"{"steps":[{"pth":"/x"}]}"#, "step 1: unknown field `pth`"),
            (
                r#"{"steps":[{"method":"GET"}]}"#,
                "step 1: missing field `path`",
            ),
            (r#"{"steps":[{"path":"/a"},{"path":"x"}]}"#, "step 2: path"),
            (
                r#"{"steps":[{"path":"/a","capture":{"t":"body:x"}}]}"#,
                "step 1: capture",
            ),
            (
                r#"{"steps":[{"path":"/a","headers":{"a":"{tok}"},"capture":{"tok":"json:a"}}]}"#,
                "step 1: template",
            ),
            (
                r#"{"steps":[{"path":"/a","expect":"7xx"}]}"#,
                "step 1: expect",
            ),
            (r#"{"steps":[]}"#, "empty"),
            (r#"{"stepz":[]}"#, "unknown field `stepz`"),
            (
                r#"[{"path":"/a"}]"#,
                "not an array (put the steps under \"steps\")",
            ),
        ];
        for (text, expected) in cases {
            let error = Scenario::parse(text, "s.json", "h")
                .unwrap_err()
                .to_string();
            assert!(error.starts_with("s.json: "), "{error}");
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn captures_read_json_paths_and_headers() {
        let capture = |source: &str| Capture {
            name: "x".into(),
            from: parse_capture(source).unwrap(),
            source: source.into(),
        };
        let body = br#"{"access":{"token":"abc"},"items":[{"id":7}]}"#;
        assert_eq!(
            extract(&capture("json:access.token"), &[], body),
            Some(b"abc".to_vec())
        );
        assert_eq!(
            extract(&capture("json:items.0.id"), &[], body),
            Some(b"7".to_vec())
        );
        assert_eq!(extract(&capture("json:access.missing"), &[], body), None);
        let headers = vec![("x-token".to_string(), b"t1".to_vec())];
        assert_eq!(
            extract(&capture("header:X-Token"), &headers, b""),
            Some(b"t1".to_vec())
        );
        let evil = vec![("x-token".to_string(), b"a\r\nX: y".to_vec())];
        assert_eq!(extract(&capture("header:x-token"), &evil, b""), None);
    }

    #[test]
    fn shared_headers_go_to_every_step_that_does_not_set_its_own() {
        use crate::load::template::{NoCaptures, RenderContext, Rng};
        let shared = [("Authorization".to_string(), "Bearer team".to_string())];
        let text =
            r#"{"steps":[{"path":"/a"},{"path":"/b","headers":{"authorization":"Bearer own"}}]}"#;
        let scenario = Scenario::parse_with(text, "s.json", "h", &shared).unwrap();
        let sent = |index: usize| {
            let mut scratch = crate::load::request::Scratch::default();
            let mut rng = Rng::new(1);
            let mut ctx = RenderContext {
                sequence: 0,
                rng: &mut rng,
                captures: &NoCaptures,
            };
            let bytes = scenario.steps[index]
                .request
                .bytes(&mut scratch, &mut ctx, b"");
            String::from_utf8(bytes.unwrap().to_vec()).unwrap()
        };
        assert!(
            sent(0).contains("Authorization: Bearer team\r\n"),
            "{}",
            sent(0)
        );
        assert!(
            sent(1).contains("authorization: Bearer own\r\n"),
            "{}",
            sent(1)
        );
        assert!(!sent(1).contains("team"), "{}", sent(1));
    }
}
