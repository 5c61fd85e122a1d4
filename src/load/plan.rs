//! `LoadPlan`: one description of a load run. Every mode (exact count,
//! duration, constant rate, several routes) is a field here, so there is one
//! worker loop instead of one per mode.

use std::net::SocketAddr;
use std::time::Duration;

/// When a run ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// Exactly this many requests are sent; each ends as a response or an error.
    Requests(u64),
    /// Requests are started until this much time has passed.
    Duration(Duration),
}

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

#[derive(Debug, Clone, PartialEq)]
pub struct LoadPlan {
    /// Where to connect.
    pub addr: SocketAddr,
    /// The Host header, as the URL spelled it (`127.0.0.1:9750`).
    pub host: String,
    pub requests: Vec<RequestSpec>,
    pub connections: usize,
    pub stop: Stop,
    /// Requests per second across all connections; `None` sends as fast as
    /// responses come back (a closed loop, like wrk and autocannon).
    pub rate: Option<f64>,
    /// How long one request may take before it counts as a timeout.
    pub timeout: Duration,
}

/// A request serialised once before the run, so the hot loop only writes bytes.
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    pub bytes: Vec<u8>,
    pub is_head: bool,
}

impl LoadPlan {
    /// Serialises every request of the plan, expanded by weight so that slot
    /// `n` sends `schedule[n % schedule.len()]`: a fixed rotation rather than a
    /// random draw, so two runs of one plan send the same mix.
    pub fn prepare(&self) -> Vec<PreparedRequest> {
        let mut schedule = Vec::new();
        for spec in &self.requests {
            let prepared = PreparedRequest {
                bytes: serialise(spec, &self.host),
                is_head: spec.method.eq_ignore_ascii_case("HEAD"),
            };
            for _ in 0..spec.weight.max(1) {
                schedule.push(prepared.clone());
            }
        }
        schedule
    }
}

fn serialise(spec: &RequestSpec, host: &str) -> Vec<u8> {
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
    if !spec.body.is_empty() || matches!(spec.method.as_str(), "POST" | "PUT" | "PATCH") {
        out.push_str(&format!("Content-Length: {}\r\n", spec.body.len()));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&spec.body);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(requests: Vec<RequestSpec>) -> LoadPlan {
        LoadPlan {
            addr: "127.0.0.1:1".parse().unwrap(),
            host: "127.0.0.1:1".into(),
            requests,
            connections: 1,
            stop: Stop::Requests(1),
            rate: None,
            timeout: Duration::from_secs(1),
        }
    }

    #[test]
    fn get_request_bytes() {
        let prepared = plan(vec![RequestSpec::get("/leak")]).prepare();
        let text = String::from_utf8(prepared[0].bytes.clone()).unwrap();
        assert!(text.starts_with("GET /leak HTTP/1.1\r\nHost: 127.0.0.1:1\r\n"));
        assert!(text.ends_with("\r\n\r\n"));
        assert!(!text.contains("Content-Length"));
    }

    #[test]
    fn post_with_body_and_custom_host() {
        let mut spec = RequestSpec::get("/x");
        spec.method = "POST".into();
        spec.body = b"{\"a\":1}".to_vec();
        spec.headers.push(("host".into(), "example".into()));
        let text = String::from_utf8(plan(vec![spec]).prepare()[0].bytes.clone()).unwrap();
        assert!(text.contains("Content-Length: 7\r\n"));
        assert!(!text.contains("Host: 127.0.0.1"));
        assert!(text.ends_with("\r\n\r\n{\"a\":1}"));
    }

    #[test]
    fn weights_expand_the_rotation() {
        let mut a = RequestSpec::get("/a");
        a.weight = 3;
        let schedule = plan(vec![a, RequestSpec::get("/b")]).prepare();
        assert_eq!(schedule.len(), 4);
        assert!(schedule[3].bytes.starts_with(b"GET /b "));
    }
}
