//! A found route's first requests, before any is measured: a route that
//! answers 4xx or 5xx to all of them (it needs a login, a body the
//! declaration did not give, an id that exists) would be measured as
//! garbage, so it is skipped with the status it gave; one that redirects
//! is measured, the redirect named. Their pace gives the run's duration
//! estimate. A request per connection (`Connection: close`), sent one
//! after another: a few per route, so no concern of the load generator's.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::RouteSpec;
use crate::load::template::{NoCaptures, RenderContext, Rng, Template, next_sequence};

/// Requests sent to each found route before it is checked.
pub const FIRST_REQUESTS: usize = 3;
/// The most bytes of an answer's head read for its status and Location.
const MOST_HEAD_BYTES: usize = 64 * 1024;

/// What a route's first requests answered.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstAnswers {
    pub statuses: Vec<u16>,
    /// The Location of a redirect, when one answered 3xx.
    pub location: Option<String>,
    /// Mean seconds per request.
    pub seconds: f64,
    /// A request that got no answer at all, and why.
    pub failure: Option<String>,
}

impl FirstAnswers {
    /// Why the route is not checked: every answer was an error.
    pub fn skip_reason(&self) -> Option<String> {
        if let Some(failure) = &self.failure {
            return Some(format!("its first request failed: {failure}"));
        }
        if self.statuses.is_empty() || self.statuses.iter().any(|s| *s < 300) {
            return None;
        }
        // Every answer a redirect: the load would measure the redirect, not
        // the page, and count each as a failed request.
        if let Some(redirect) = self
            .redirect()
            .filter(|_| self.statuses.iter().all(|s| *s < 400))
        {
            return Some(format!(
                "{redirect}: check where it leads instead (it is measured there if declared)"
            ));
        }
        let status = self.statuses[0];
        let hint = match status {
            401 | 403 => ": it needs a login; give -H (or \"headers\" in the config file)",
            404 => ": give a value that exists in the config file's \"params\"",
            405 => ": the method is not served there",
            400 | 422 => ": give a body or values in the config file",
            _ => "",
        };
        Some(format!(
            "answered {status} to its first {} requests{hint}",
            self.statuses.len()
        ))
    }

    /// "redirects (302) to /login", when it does.
    pub fn redirect(&self) -> Option<String> {
        let status = *self.statuses.iter().find(|s| (300..400).contains(*s))?;
        Some(match &self.location {
            Some(location) => format!("redirects ({status}) to {location}"),
            None => format!("redirects ({status})"),
        })
    }
}

/// Sends `route`'s first requests with the run's method and headers under
/// the route's own.
pub async fn send(
    addr: SocketAddr,
    host: &str,
    route: &RouteSpec,
    run_method: &str,
    run_headers: &[(String, String)],
    timeout: Duration,
) -> FirstAnswers {
    let mut answers = FirstAnswers {
        statuses: Vec::new(),
        location: None,
        seconds: 0.0,
        failure: None,
    };
    let started = Instant::now();
    let mut rng = Rng::new(next_sequence());
    for _ in 0..FIRST_REQUESTS {
        let request = match render(route, host, run_method, run_headers, &mut rng) {
            Ok(request) => request,
            Err(error) => {
                answers.failure = Some(error);
                break;
            }
        };
        match tokio::time::timeout(timeout, exchange(addr, &request)).await {
            Ok(Ok((status, location))) => {
                answers.statuses.push(status);
                answers.location = answers.location.or(location);
            }
            Ok(Err(error)) => {
                answers.failure = Some(error.to_string());
                break;
            }
            Err(_) => {
                answers.failure = Some(format!("no answer within {timeout:?}"));
                break;
            }
        }
    }
    answers.seconds = started.elapsed().as_secs_f64() / answers.statuses.len().max(1) as f64;
    answers
}

fn render(
    route: &RouteSpec,
    host: &str,
    run_method: &str,
    run_headers: &[(String, String)],
    rng: &mut Rng,
) -> Result<Vec<u8>, String> {
    let mut one = |text: &str| -> Result<Vec<u8>, String> {
        let template = Template::parse(text, None).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        let mut ctx = RenderContext {
            sequence: next_sequence(),
            rng: &mut *rng,
            captures: &NoCaptures,
        };
        template
            .render(&mut out, &mut ctx)
            .map_err(|e| e.to_string())?;
        Ok(out)
    };
    let path = one(&route.path)?;
    let body = match &route.body {
        Some(body) => one(body)?,
        None => Vec::new(),
    };
    let mut request = Vec::new();
    request.extend_from_slice(route.method_or(run_method).as_bytes());
    request.push(b' ');
    request.extend_from_slice(&path);
    request.extend_from_slice(
        format!(" HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n").as_bytes(),
    );
    for (name, value) in run_headers.iter().chain(&route.headers) {
        request.extend_from_slice(format!("{name}: ").as_bytes());
        request.extend_from_slice(&one(value)?);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    request.extend_from_slice(&body);
    Ok(request)
}

/// One request on its own connection: the answer's status and Location.
async fn exchange(addr: SocketAddr, request: &[u8]) -> std::io::Result<(u16, Option<String>)> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(request).await?;
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 && head.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the connection closed without an answer",
            ));
        }
        head.extend_from_slice(&buf[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut headers);
        match response.parse(&head) {
            Ok(httparse::Status::Complete(_)) => {
                let location = response
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("location"))
                    .map(|h| String::from_utf8_lossy(h.value).into_owned());
                return Ok((response.code.unwrap_or(0), location));
            }
            Ok(httparse::Status::Partial) if n > 0 && head.len() < MOST_HEAD_BYTES => continue,
            Ok(httparse::Status::Partial) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the answer's head never ended",
                ));
            }
            Err(e) => return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(statuses: &[u16]) -> FirstAnswers {
        FirstAnswers {
            statuses: statuses.to_vec(),
            location: Some("/login".into()),
            seconds: 0.01,
            failure: None,
        }
    }

    #[test]
    fn only_a_route_that_errs_every_time_is_skipped_and_a_redirect_is_named() {
        assert_eq!(answers(&[200, 200, 200]).skip_reason(), None);
        assert_eq!(answers(&[500, 200, 500]).skip_reason(), None);
        let login = answers(&[401, 401, 401]).skip_reason().unwrap();
        assert!(
            login.starts_with("answered 401 to its first 3 requests: it needs a login"),
            "{login}"
        );
        assert_eq!(
            answers(&[302, 302, 302]).redirect().as_deref(),
            Some("redirects (302) to /login")
        );
        let redirect = answers(&[302, 302, 302]).skip_reason().unwrap();
        assert!(
            redirect.starts_with("redirects (302) to /login: check where it leads"),
            "{redirect}"
        );
        assert_eq!(answers(&[200]).redirect(), None);
    }
}
