//! Small network helpers shared by the parts that talk to the target:
//! resolving a URL to a loopback socket address and one-shot HTTP GETs for
//! the inspector's `/json/list` and an app's `/mem` and `/gc` endpoints.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub mod resolve;
pub mod response;

use response::{Framing, parse_head};

#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("{0:?} is not a valid http:// URL: {1}")]
    BadUrl(String, String),
    #[error(
        "{url} resolves to {addr}, which is not a loopback address; leakcheck sends load only to \
         this machine unless --allow-remote is given"
    )]
    NotLoopback { url: String, addr: SocketAddr },
    #[error("GET {url} failed")]
    Get {
        url: String,
        #[source]
        source: std::io::Error,
    },
    #[error("GET {url} got no answer within {} s", limit.as_secs_f64())]
    Timeout { url: String, limit: Duration },
}

/// A parsed `http://host:port` target.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpTarget {
    pub addr: SocketAddr,
    /// `host:port` as written, for the Host header.
    pub host: String,
    /// The URL's path and query, `/` when it has none.
    pub path: String,
}

/// The URL as reports show it: a password in it becomes `***`, so that
/// `http://user:secret@127.0.0.1/` never reaches a JSON, HTML or Markdown
/// file, a terminal or an error message.
pub fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

/// Parses an http URL and resolves its host, refusing non-loopback addresses
/// unless `allow_remote`.
pub fn resolve_http(url: &str, allow_remote: bool) -> Result<HttpTarget, NetError> {
    let bad = |why: &str| NetError::BadUrl(redacted(url), why.to_string());
    let parsed = url::Url::parse(url).map_err(|e| bad(&e.to_string()))?;
    if parsed.scheme() != "http" {
        return Err(bad("only http:// is supported (no TLS)"));
    }
    let host = parsed.host_str().ok_or_else(|| bad("no host"))?;
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| bad("no port"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addr = resolve::resolve(host, port)
        .map_err(|e| bad(&e.to_string()))?
        .into_iter()
        .next()
        .ok_or_else(|| bad("the host resolves to no address"))?;
    if !allow_remote && !addr.ip().is_loopback() {
        return Err(NetError::NotLoopback {
            url: redacted(url),
            addr,
        });
    }
    // The path as written, not as the URL parser normalised it: it would
    // percent-encode the braces of a template (`/item/{n}`).
    let path = written_path(url).unwrap_or_else(|| match parsed.query() {
        Some(query) => format!("{}?{query}", parsed.path()),
        None => parsed.path().to_string(),
    });
    let host_header = match parsed.port() {
        Some(p) => format!("{}:{p}", parsed.host_str().unwrap_or(host)),
        None => parsed.host_str().unwrap_or(host).to_string(),
    };
    Ok(HttpTarget {
        addr,
        host: host_header,
        path,
    })
}

/// `/a/{n}?q=1` from `http://host:port/a/{n}?q=1#frag`; `None` when the
/// URL has no path or its path holds a space or line break.
fn written_path(url: &str) -> Option<String> {
    let after_scheme = url.split_once("://")?.1;
    let start = after_scheme.find(['/', '?'])?;
    let rest = &after_scheme[start..];
    let rest = rest.split('#').next().unwrap_or(rest);
    if rest.contains([' ', '\r', '\n', '\t']) {
        return None;
    }
    Some(if rest.starts_with('?') {
        format!("/{rest}")
    } else {
        rest.to_string()
    })
}

/// True when something accepts TCP connections on `addr`.
pub async fn accepts_connections(addr: SocketAddr) -> bool {
    matches!(
        tokio::time::timeout(Duration::from_secs(1), TcpStream::connect(addr)).await,
        Ok(Ok(_))
    )
}

/// The largest answer `http_get` reads: the inspector's `/json/list` and
/// an app's `/mem` are a few KB; anything past this is not what was asked.
pub const MAX_GET_BYTES: usize = 4 * 1024 * 1024;

/// One GET; returns the status and the body. The body ends by its own
/// framing (Content-Length or chunked, through the load generator's
/// framer), so a server that keeps the connection open despite
/// `Connection: close` (Node's inspector does) does not stall it.
pub async fn http_get(
    addr: SocketAddr,
    path: &str,
    limit: Duration,
) -> Result<(u16, String), NetError> {
    let url = format!("http://{addr}{path}");
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await?;
        let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await?;
        read_response(&mut stream).await
    };
    match tokio::time::timeout(limit, exchange).await {
        Err(_) => Err(NetError::Timeout { url, limit }),
        Ok(Err(source)) => Err(NetError::Get { url, source }),
        Ok(Ok(answer)) => Ok(answer),
    }
}

/// Reads one response: its status and its body, decoded.
async fn read_response(stream: &mut TcpStream) -> std::io::Result<(u16, String)> {
    let mut response = OneResponse::default();
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = stream.read(&mut buf).await?;
        let step = if n == 0 {
            response.end_of_stream()
        } else {
            response.push(&buf[..n])
        };
        if let Some(answer) =
            step.map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?
        {
            return Ok(answer);
        }
    }
}

/// One HTTP response taken from a byte stream, without I/O: bytes go in
/// as they arrive, and out comes the status and the decoded body once the
/// response's own framing says it is whole (the load generator's framer
/// does the parsing). Bounded by `MAX_GET_BYTES`, so a hostile answer (a
/// chunk size near 2^64, a head that never ends) is an error, not a hang
/// on memory.
#[derive(Debug, Default)]
pub struct OneResponse {
    raw: Vec<u8>,
    head: Option<(u16, Framing)>,
    body: Vec<u8>,
}

impl OneResponse {
    /// Takes the next bytes; `Some` once the response is complete.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Option<(u16, String)>, String> {
        let pending = match self.head {
            Some(_) => bytes.to_vec(),
            None => {
                self.raw.extend_from_slice(bytes);
                let Some(head) = parse_head(&self.raw, false).map_err(|e| e.to_string())? else {
                    if self.raw.len() > MAX_GET_BYTES {
                        return Err("the answer's head never ended".into());
                    }
                    return Ok(None);
                };
                let rest = self.raw.split_off(head.len);
                self.head = Some((head.status, head.framing));
                rest
            }
        };
        let Some((status, framing)) = self.head.as_mut() else {
            return Ok(None);
        };
        let done = match framing {
            Framing::Empty => true,
            Framing::Length(n) => {
                self.body.extend_from_slice(&pending);
                if self.body.len() as u64 >= *n {
                    self.body.truncate(*n as usize);
                    true
                } else {
                    false
                }
            }
            Framing::UntilClose => {
                self.body.extend_from_slice(&pending);
                false
            }
            Framing::Chunked(decoder) => {
                let body = &mut self.body;
                decoder
                    .feed_with(&pending, |data| body.extend_from_slice(data))
                    .map_err(|e| e.to_string())?
                    .1
            }
        };
        if self.body.len() > MAX_GET_BYTES {
            return Err(format!(
                "the answer is larger than {} MB",
                MAX_GET_BYTES >> 20
            ));
        }
        Ok(done.then(|| (*status, String::from_utf8_lossy(&self.body).into_owned())))
    }

    /// The peer closed the connection: complete only for a body that runs
    /// until close.
    pub fn end_of_stream(&mut self) -> Result<Option<(u16, String)>, String> {
        match &self.head {
            Some((status, Framing::UntilClose)) => Ok(Some((
                *status,
                String::from_utf8_lossy(&self.body).into_owned(),
            ))),
            Some(_) => Err("the connection closed in the middle of the body".into()),
            None => Err("the connection closed before a whole HTTP head".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_loopback_urls() {
        let t = resolve_http("http://127.0.0.1:9750/leak?x=1", false).unwrap();
        assert_eq!(t.addr, "127.0.0.1:9750".parse().unwrap());
        assert_eq!(t.host, "127.0.0.1:9750");
        assert_eq!(t.path, "/leak?x=1");
        let t = resolve_http("http://localhost:8080", false).unwrap();
        assert!(t.addr.ip().is_loopback());
        assert_eq!(t.path, "/");
        let t = resolve_http("http://127.0.0.1:9/item/{n}?k={n%3}#x", false).unwrap();
        assert_eq!(t.path, "/item/{n}?k={n%3}", "templates survive");
    }

    #[test]
    fn a_password_never_leaves_the_url() {
        let shown = redacted("http://admin:hunter2@127.0.0.1:9750/leak");
        assert_eq!(shown, "http://admin:***@127.0.0.1:9750/leak");
        assert_eq!(redacted("http://127.0.0.1:9750/"), "http://127.0.0.1:9750/");
        let error = resolve_http("http://admin:hunter2@10.1.2.3/", false).unwrap_err();
        assert!(!error.to_string().contains("hunter2"), "{error}");
    }

    #[test]
    fn refuses_remote_and_https() {
        let err = resolve_http("http://10.1.2.3:80/", false).unwrap_err();
        assert!(err.to_string().contains("--allow-remote"), "{err}");
        assert!(resolve_http("http://10.1.2.3:80/", true).is_ok());
        assert!(resolve_http("https://127.0.0.1/", false).is_err());
        assert!(resolve_http("not a url", false).is_err());
    }

    /// Serves `answer` once on a loopback port and keeps the connection
    /// open, as Node's inspector does.
    async fn serve_once(answer: &'static [u8]) -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 1024];
            let _ = socket.read(&mut request).await;
            socket.write_all(answer).await.unwrap();
            tokio::time::sleep(Duration::from_secs(5)).await;
        });
        addr
    }

    #[tokio::test]
    async fn reads_chunked_and_sized_bodies_without_waiting_for_close() {
        let limit = Duration::from_secs(2);
        let chunked = serve_once(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=1\r\nde\r\n0\r\n\r\n",
        )
        .await;
        assert_eq!(
            http_get(chunked, "/", limit).await.unwrap(),
            (200, "abcde".into())
        );
        let sized = serve_once(b"HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope").await;
        assert_eq!(
            http_get(sized, "/", limit).await.unwrap(),
            (404, "nope".into())
        );
    }

    #[tokio::test]
    async fn a_hostile_chunk_size_is_an_error_not_a_panic() {
        let limit = Duration::from_secs(2);
        let huge = serve_once(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nabc",
        )
        .await;
        // The size fits in u64, so the decoder waits for data: the body cap
        // or the time limit ends it, never an allocation of that size.
        assert!(http_get(huge, "/", limit).await.is_err());
        let overflow = serve_once(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1ffffffffffffffff\r\n",
        )
        .await;
        let error = http_get(overflow, "/", limit).await.unwrap_err();
        assert!(format!("{:#}", anyhow::Error::new(error)).contains("overflows"));
    }
}
