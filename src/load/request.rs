//! One request as the user gave it (`RequestSpec`: method, path, headers,
//! body, any of them templated) and as the hot loop sends it
//! (`PreparedRequest`: the fixed bytes laid out once, templates rendered
//! into a reused scratch buffer per request).

use super::template::{RenderContext, Template, TemplateError};

/// One kind of request the run sends, with its share of the traffic.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestSpec {
    pub method: String,
    /// Path and query, e.g. `/leak?x=1`.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Relative share when several routes are sent; 1 for a single route.
    pub weight: u32,
}

impl RequestSpec {
    pub fn get(path: &str) -> Self {
        RequestSpec {
            method: "GET".to_string(),
            path: path.to_string(),
            headers: Vec::new(),
            body: Vec::new(),
            weight: 1,
        }
    }
}

/// A request made ready before the run: serialised once when it is fixed,
/// or parsed into templates rendered per request (see `template.rs`).
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    pub is_head: bool,
    form: Form,
}

#[derive(Debug, Clone)]
enum Form {
    /// The whole request, and where its head ends (before the blank line).
    Fixed { bytes: Vec<u8>, head_len: usize },
    /// The head up to (not including) the blank line, and the body;
    /// Content-Length is written per request when the body is templated.
    Templated {
        head: Template,
        body: Template,
        length_per_request: bool,
    },
}

/// A connection's buffers for rendering templated requests, reused so
/// that the hot loop does not allocate per request.
#[derive(Debug, Default)]
pub struct Scratch {
    request: Vec<u8>,
    body: Vec<u8>,
}

/// A request whose method line, headers or body cannot be prepared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{part}: {error}")]
pub struct RequestError {
    /// `body`, or `request` for the method line and headers.
    pub part: &'static str,
    pub error: TemplateError,
}

/// A request of a plan that cannot be prepared, named by method and path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{method} {path}: {error}")]
pub struct PrepareError {
    pub method: String,
    pub path: String,
    pub error: RequestError,
}

impl PreparedRequest {
    /// Prepares `spec`; in a scenario, `captures` are the names its step
    /// may use (see `Template::parse`).
    pub fn new(
        spec: &RequestSpec,
        host: &str,
        captures: Option<&[String]>,
    ) -> Result<Self, RequestError> {
        let is_head = spec.method.eq_ignore_ascii_case("HEAD");
        let in_part = |part| move |error| RequestError { part, error };
        let body = Template::parse(&String::from_utf8_lossy(&spec.body), captures)
            .map_err(in_part("body"))?;
        let body_fixed = body.as_fixed().is_some();
        let head_text = head(spec, host, body_fixed.then_some(spec.body.len()));
        let head = Template::parse(&head_text, captures).map_err(in_part("request"))?;
        let form = match (head.as_fixed(), body.as_fixed()) {
            (Some(head), Some(_)) => {
                let mut bytes = head.to_vec();
                let head_len = bytes.len();
                bytes.extend_from_slice(b"\r\n");
                bytes.extend_from_slice(&spec.body);
                Form::Fixed { bytes, head_len }
            }
            _ => Form::Templated {
                head,
                body,
                length_per_request: !body_fixed,
            },
        };
        Ok(PreparedRequest { is_head, form })
    }

    /// Whether a render of this request takes a `{n}`.
    pub fn uses_sequence(&self) -> bool {
        match &self.form {
            Form::Fixed { .. } => false,
            Form::Templated { head, body, .. } => head.uses_sequence() || body.uses_sequence(),
        }
    }

    /// Whether every request sent from this one is the same bytes.
    pub fn is_fixed(&self) -> bool {
        matches!(self.form, Form::Fixed { .. })
    }

    /// The bytes to send: the fixed ones, or this request rendered into
    /// `scratch`. `extra_headers` (whole lines, such as a scenario's
    /// `Cookie:`) go at the end of the head.
    pub fn bytes<'a>(
        &'a self,
        scratch: &'a mut Scratch,
        ctx: &mut RenderContext,
        extra_headers: &[u8],
    ) -> Result<&'a [u8], TemplateError> {
        let (head, body, length_per_request) = match &self.form {
            Form::Fixed { bytes, .. } if extra_headers.is_empty() => return Ok(bytes),
            Form::Fixed { bytes, head_len } => {
                let out = &mut scratch.request;
                out.clear();
                out.extend_from_slice(&bytes[..*head_len]);
                out.extend_from_slice(extra_headers);
                out.extend_from_slice(&bytes[*head_len..]);
                return Ok(out);
            }
            Form::Templated {
                head,
                body,
                length_per_request,
            } => (head, body, *length_per_request),
        };
        scratch.body.clear();
        body.render(&mut scratch.body, ctx)?;
        let out = &mut scratch.request;
        out.clear();
        head.render(out, ctx)?;
        out.extend_from_slice(extra_headers);
        if length_per_request && !scratch.body.is_empty() {
            out.extend_from_slice(b"Content-Length: ");
            out.extend_from_slice(itoa::Buffer::new().format(scratch.body.len()).as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&scratch.body);
        Ok(out)
    }
}

/// Why a header may not be given (`-H`, a scenario step): leakcheck frames
/// every request itself — `Content-Length` from the body it sends, no
/// `Transfer-Encoding`, keep-alive on every connection (hang-ups are
/// `--abort`'s) — so these would make a second, contradicting framing and
/// split the request. `Host` and every other header may be given.
pub fn framing_header(name: &str) -> Option<&'static str> {
    match name.trim().to_ascii_lowercase().as_str() {
        "content-length" => Some("leakcheck sets Content-Length from the body it sends"),
        "transfer-encoding" => Some("leakcheck sends bodies with a Content-Length, never chunked"),
        "connection" => {
            Some("leakcheck keeps every connection alive; clients that hang up are --abort's")
        }
        "expect" => Some("leakcheck sends the body with the head and reads no 100-continue"),
        _ => None,
    }
}

/// The request line and headers, each line ending in CRLF, without the
/// blank line; Content-Length when the body's length is known now.
fn head(spec: &RequestSpec, host: &str, body_length: Option<usize>) -> String {
    let mut out = format!("{} {} HTTP/1.1\r\n", spec.method, spec.path);
    let has = |name: &str| {
        spec.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    if !has("host") {
        out.push_str(&format!("Host: {host}\r\n"));
    }
    if !has("user-agent") {
        out.push_str(concat!(
            "User-Agent: leakcheck/",
            env!("CARGO_PKG_VERSION"),
            "\r\n"
        ));
    }
    for (name, value) in &spec.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    let has_body = body_length.is_none_or(|n| n > 0);
    if let Some(length) = body_length
        && (has_body || matches!(spec.method.as_str(), "POST" | "PUT" | "PATCH"))
    {
        out.push_str(&format!("Content-Length: {length}\r\n"));
    }
    out
}
