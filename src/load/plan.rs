//! `LoadPlan`: one description of a load run. Every mode (exact count,
//! duration, constant rate, several routes) is a field here, so there is one
//! worker loop instead of one per mode.

use std::net::SocketAddr;
use std::time::Duration;

use super::request::{PrepareError, PreparedRequest, RequestSpec};

/// When a run ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// Exactly this many requests are sent; each ends as a response or an error.
    Requests(u64),
    /// Requests are started until this much time has passed.
    Duration(Duration),
}

#[derive(Debug, Clone)]
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
    /// Run this scenario instead of `requests`: a slot is an iteration.
    pub scenario: Option<std::sync::Arc<super::scenario::Scenario>>,
    /// The fraction of requests sent on a connection that is closed before
    /// the answer (`--abort`), from 0 to below 1.
    pub abort: f64,
}

impl LoadPlan {
    /// Whether slot `n` hangs up before its answer. Spread evenly and
    /// exactly: over any run of slots, the count is the fraction's share
    /// rounded down, so `-a 1000 --abort 0.5` aborts exactly 500.
    pub fn aborts(&self, slot: u64) -> bool {
        if self.abort <= 0.0 {
            return false;
        }
        let share = |n: u64| (n as f64 * self.abort).floor() as u64;
        share(slot + 1) > share(slot)
    }
}

impl LoadPlan {
    /// Prepares every request of the plan, expanded by weight so that slot
    /// `n` sends `schedule[n % schedule.len()]`: a fixed rotation rather than a
    /// random draw, so two runs of one plan send the same mix.
    pub fn prepare(&self) -> Result<Vec<PreparedRequest>, PrepareError> {
        let mut schedule = Vec::new();
        for spec in &self.requests {
            let prepared =
                PreparedRequest::new(spec, &self.host, None).map_err(|error| PrepareError {
                    method: spec.method.clone(),
                    path: spec.path.clone(),
                    error,
                })?;
            for _ in 0..spec.weight.max(1) {
                schedule.push(prepared.clone());
            }
        }
        Ok(schedule)
    }
}

#[cfg(test)]
mod tests {
    use super::super::request::*;
    use super::super::template::RenderContext;
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
            scenario: None,
            abort: 0.0,
        }
    }

    #[test]
    fn get_request_bytes() {
        let prepared = plan(vec![RequestSpec::get("/leak")]).prepare().unwrap();
        let text = String::from_utf8(fixed(&prepared[0])).unwrap();
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
        let text = String::from_utf8(fixed(&plan(vec![spec]).prepare().unwrap()[0])).unwrap();
        assert!(text.contains("Content-Length: 7\r\n"));
        assert!(!text.contains("Host: 127.0.0.1"));
        assert!(text.ends_with("\r\n\r\n{\"a\":1}"));
    }

    #[test]
    fn aborts_are_an_exact_share() {
        let mut p = plan(vec![RequestSpec::get("/")]);
        p.abort = 0.5;
        assert_eq!((0..1000).filter(|n| p.aborts(*n)).count(), 500);
        p.abort = 0.3;
        assert_eq!((0..1000).filter(|n| p.aborts(*n)).count(), 300);
        p.abort = 0.0;
        assert!(!(0..1000).any(|n| p.aborts(n)));
    }

    #[test]
    fn weights_expand_the_rotation() {
        let mut a = RequestSpec::get("/a");
        a.weight = 3;
        let schedule = plan(vec![a, RequestSpec::get("/b")]).prepare().unwrap();
        assert_eq!(schedule.len(), 4);
        assert!(fixed(&schedule[3]).starts_with(b"GET /b "));
    }

    fn fixed(request: &PreparedRequest) -> Vec<u8> {
        assert!(request.is_fixed());
        render(request, 0)
    }

    fn render(request: &PreparedRequest, sequence: u64) -> Vec<u8> {
        let mut rng = super::super::template::Rng::new(0);
        let mut ctx = RenderContext {
            sequence,
            rng: &mut rng,
            captures: &super::super::template::NoCaptures,
        };
        let mut scratch = Scratch::default();
        request.bytes(&mut scratch, &mut ctx, b"").unwrap().to_vec()
    }

    #[test]
    fn templated_path_and_body_render_per_request_with_their_length() {
        let mut spec = RequestSpec::get("/item?id={n}");
        spec.method = "POST".into();
        spec.body = br#"{"user":"u{n}"}"#.to_vec();
        let prepared = PreparedRequest::new(&spec, "h", None).unwrap();
        assert!(!prepared.is_fixed() && prepared.uses_sequence());
        let text = String::from_utf8(render(&prepared, 12345)).unwrap();
        assert!(
            text.starts_with("POST /item?id=12345 HTTP/1.1\r\n"),
            "{text}"
        );
        assert!(text.contains("Content-Length: 17\r\n"), "{text}");
        assert!(text.ends_with("\r\n\r\n{\"user\":\"u12345\"}"), "{text}");
    }
}
