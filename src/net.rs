//! Small network helpers shared by the parts that talk to the target:
//! resolving a URL to a loopback socket address and one-shot HTTP GETs for
//! the inspector's `/json/list` and the seed's `/mem` and `/gc` endpoints.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("{0:?} is not a valid http:// URL: {1}")]
    BadUrl(String, String),
    #[error(
        "{url} resolves to {addr}, which is not a loopback address; leakcheck sends load only to \
         this machine unless --allow-remote is given"
    )]
    NotLoopback { url: String, addr: SocketAddr },
    #[error("GET {url} failed: {reason}")]
    Get { url: String, reason: String },
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

/// Parses an http URL and resolves its host, refusing non-loopback addresses
/// unless `allow_remote`.
pub fn resolve_http(url: &str, allow_remote: bool) -> Result<HttpTarget, NetError> {
    let bad = |why: &str| NetError::BadUrl(url.to_string(), why.to_string());
    let parsed = url::Url::parse(url).map_err(|e| bad(&e.to_string()))?;
    if parsed.scheme() != "http" {
        return Err(bad("only http:// is supported (no TLS)"));
    }
    let host = parsed.host_str().ok_or_else(|| bad("no host"))?;
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| bad("no port"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addr = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
        .map_err(|e| bad(&e.to_string()))?
        .next()
        .ok_or_else(|| bad("the host resolves to no address"))?;
    if !allow_remote && !addr.ip().is_loopback() {
        return Err(NetError::NotLoopback {
            url: url.to_string(),
            addr,
        });
    }
    let mut path = parsed.path().to_string();
    if let Some(query) = parsed.query() {
        path = format!("{path}?{query}");
    }
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

/// True when something accepts TCP connections on `addr`.
pub async fn accepts_connections(addr: SocketAddr) -> bool {
    matches!(
        tokio::time::timeout(Duration::from_secs(1), TcpStream::connect(addr)).await,
        Ok(Ok(_))
    )
}

/// One GET; returns the status and the body. Reads until the body is
/// complete by its Content-Length or chunked framing, so a server that keeps
/// the connection open despite `Connection: close` (Node's inspector does)
/// does not stall it.
pub async fn http_get(
    addr: SocketAddr,
    path: &str,
    limit: Duration,
) -> Result<(u16, String), NetError> {
    let url = format!("http://{addr}{path}");
    let fail = |reason: String| NetError::Get {
        url: url.clone(),
        reason,
    };
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await?;
        let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await?;
        let mut raw = Vec::new();
        let mut buf = [0u8; 16 * 1024];
        loop {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                return Ok::<_, std::io::Error>(raw);
            }
            raw.extend_from_slice(&buf[..n]);
            if response_complete(&raw) {
                return Ok(raw);
            }
        }
    };
    let raw = tokio::time::timeout(limit, exchange)
        .await
        .map_err(|_| fail(format!("no answer within {} s", limit.as_secs())))?
        .map_err(|e| fail(e.to_string()))?;
    let head = parse_head(&raw).ok_or_else(|| fail("the answer is not HTTP".into()))?;
    let body = &raw[head.len..];
    let body = if head.chunked {
        dechunk(body)
    } else {
        body.to_vec()
    };
    Ok((head.status, String::from_utf8_lossy(&body).into_owned()))
}

/// A parsed response head: status, its length, and how the body ends.
struct Head {
    status: u16,
    len: usize,
    chunked: bool,
    content_length: Option<usize>,
}

/// The head, once it is whole in `raw`.
fn parse_head(raw: &[u8]) -> Option<Head> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    let Ok(httparse::Status::Complete(len)) = response.parse(raw) else {
        return None;
    };
    let header = |name: &str| {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    };
    Some(Head {
        status: response.code.unwrap_or(0),
        len,
        chunked: header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case(b"chunked")),
        content_length: header("content-length")
            .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse().ok()),
    })
}

/// True once `raw` holds a whole response by its own framing.
fn response_complete(raw: &[u8]) -> bool {
    let Some(head) = parse_head(raw) else {
        return false;
    };
    let body = &raw[head.len..];
    if head.chunked {
        return body.ends_with(b"0\r\n\r\n");
    }
    head.content_length.is_some_and(|n| body.len() >= n)
}

/// Joins the data of a complete chunked body (small answers only).
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = body.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let Ok(size) = usize::from_str_radix(size_text, 16) else {
            break;
        };
        let start = line_end + 2;
        if size == 0 || start + size > body.len() {
            break;
        }
        out.extend_from_slice(&body[start..start + size]);
        body = &body[(start + size + 2).min(body.len())..];
    }
    out
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
    }

    #[test]
    fn refuses_remote_and_https() {
        let err = resolve_http("http://10.1.2.3:80/", false).unwrap_err();
        assert!(err.to_string().contains("--allow-remote"), "{err}");
        assert!(resolve_http("http://10.1.2.3:80/", true).is_ok());
        assert!(resolve_http("https://127.0.0.1/", false).is_err());
        assert!(resolve_http("not a url", false).is_err());
    }

    #[test]
    fn dechunks_small_bodies() {
        assert_eq!(dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), b"abcde");
    }
}
