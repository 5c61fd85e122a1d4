//! A virtual user's cookie jar, by the rules of RFC 6265 (§5.1.3 domain
//! matching, §5.1.4 paths, §5.2 attributes) that apply to one origin: a
//! cookie whose `Domain` the target's host does not match is refused (a
//! server's `Domain=example.invalid` is never sent back to 127.0.0.1), a
//! cookie goes only to paths under its `Path` (by default the directory of
//! the request that set it), and `Max-Age=0` (or less) removes one. Written
//! here rather than with a general jar because it sits on a scenario's
//! request path: a general one parses a URL per request to pick cookies.
//! Not modelled, since a run talks to one host over plain HTTP for
//! minutes: `Expires` dates (a cookie lives for the run), `Secure`,
//! `HttpOnly` and `SameSite`.

/// A stored cookie.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Cookie {
    name: Vec<u8>,
    value: Vec<u8>,
    path: String,
}

#[derive(Debug, Default)]
pub struct CookieJar {
    cookies: Vec<Cookie>,
    /// The last `Cookie:` line built, and the path it was built for.
    header: Vec<u8>,
    built_for: Option<String>,
}

impl CookieJar {
    /// Takes a `Set-Cookie` value answered to a request for `path` on
    /// `host` (no port).
    pub fn store(&mut self, set_cookie: &[u8], host: &str, path: &str) {
        let mut parts = set_cookie.split(|b| *b == b';');
        let pair = parts.next().unwrap_or(b"");
        let Some(eq) = pair.iter().position(|b| *b == b'=') else {
            return;
        };
        let name = pair[..eq].trim_ascii().to_vec();
        let value = pair[eq + 1..].trim_ascii().to_vec();
        if name.is_empty() || value.contains(&b'\r') || value.contains(&b'\n') {
            return;
        }
        let mut cookie_path = default_path(path);
        let mut expired = false;
        for attribute in parts {
            let text = String::from_utf8_lossy(attribute);
            let (key, val) = text.split_once('=').unwrap_or((&text, ""));
            let (key, val) = (key.trim().to_ascii_lowercase(), val.trim());
            match key.as_str() {
                "domain" if !val.is_empty() && !domain_matches(host, val) => return,
                "path" if val.starts_with('/') => cookie_path = val.to_string(),
                "max-age" => expired = val.parse::<i64>().is_ok_and(|age| age <= 0),
                _ => {}
            }
        }
        // A cookie of the same name and path is replaced where it stood.
        let same = self
            .cookies
            .iter()
            .position(|c| c.name == name && c.path == cookie_path);
        match (same, expired) {
            (Some(at), true) => {
                self.cookies.remove(at);
            }
            (Some(at), false) => self.cookies[at].value = value,
            (None, true) => {}
            (None, false) => self.cookies.push(Cookie {
                name,
                value,
                path: cookie_path,
            }),
        }
        self.built_for = None;
    }

    /// The `Cookie:` line (CRLF-terminated) for a request to `path`, or
    /// nothing when no cookie applies.
    pub fn header_for(&mut self, path: &str) -> &[u8] {
        let path = path.split('?').next().unwrap_or(path);
        if self.built_for.as_deref() != Some(path) {
            self.header.clear();
            // RFC 6265 §5.4: longer paths first.
            let mut sending: Vec<&Cookie> = self
                .cookies
                .iter()
                .filter(|c| path_matches(path, &c.path))
                .collect();
            sending.sort_by_key(|c| std::cmp::Reverse(c.path.len()));
            for (i, cookie) in sending.iter().enumerate() {
                self.header
                    .extend_from_slice(if i == 0 { b"Cookie: " } else { b"; " });
                self.header.extend_from_slice(&cookie.name);
                self.header.push(b'=');
                self.header.extend_from_slice(&cookie.value);
            }
            if !self.header.is_empty() {
                self.header.extend_from_slice(b"\r\n");
            }
            self.built_for = Some(path.to_string());
        }
        &self.header
    }
}

/// RFC 6265 §5.1.3: the host is the domain, or ends in `.domain` and is
/// not an IP address. A leading dot of the attribute is ignored.
fn domain_matches(host: &str, domain: &str) -> bool {
    let host = host.to_ascii_lowercase();
    let domain = domain.trim_start_matches('.').to_ascii_lowercase();
    if host == domain {
        return true;
    }
    let is_ip = host.parse::<std::net::IpAddr>().is_ok()
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok();
    !is_ip && host.ends_with(&format!(".{domain}"))
}

/// RFC 6265 §5.1.4: the request path's directory.
fn default_path(path: &str) -> String {
    let path = path.split('?').next().unwrap_or(path);
    match path.rfind('/') {
        Some(0) | None => "/".to_string(),
        Some(last) => path[..last].to_string(),
    }
}

/// RFC 6265 §5.1.4: the same path, or one below the cookie's.
fn path_matches(request: &str, cookie: &str) -> bool {
    request == cookie
        || (request.starts_with(cookie)
            && (cookie.ends_with('/') || request.as_bytes().get(cookie.len()) == Some(&b'/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_one_value_per_cookie_and_refuses_line_breaks() {
        let mut jar = CookieJar::default();
        jar.store(b"sid=abc; Path=/; HttpOnly", "127.0.0.1", "/login");
        jar.store(b"theme=dark; Path=/", "127.0.0.1", "/");
        jar.store(b"sid=def; Path=/", "127.0.0.1", "/login");
        assert_eq!(
            jar.header_for("/profile"),
            b"Cookie: sid=def; theme=dark\r\n"
        );
        jar.store(b"evil=a\r\nX: y", "127.0.0.1", "/");
        assert_eq!(
            jar.header_for("/profile"),
            b"Cookie: sid=def; theme=dark\r\n"
        );
    }

    #[test]
    fn a_foreign_domain_is_refused_and_paths_are_matched() {
        let mut jar = CookieJar::default();
        jar.store(b"evil=1; Domain=example.invalid", "127.0.0.1", "/");
        jar.store(b"near=1; Domain=127.0.0.1", "127.0.0.1", "/");
        assert_eq!(jar.header_for("/"), b"Cookie: near=1\r\n");
        jar.store(b"api=2; Path=/api", "127.0.0.1", "/");
        assert_eq!(
            jar.header_for("/api/users?x=1"),
            b"Cookie: api=2; near=1\r\n"
        );
        assert_eq!(jar.header_for("/apiary"), b"Cookie: near=1\r\n");
        // Without a Path: the directory of the request that set it.
        jar.store(b"cart=3", "127.0.0.1", "/shop/add");
        assert_eq!(jar.header_for("/shop/list"), b"Cookie: cart=3; near=1\r\n");
        assert_eq!(jar.header_for("/other"), b"Cookie: near=1\r\n");
        // A subdomain matches a host name, never an IP.
        assert!(domain_matches("api.example.test", ".example.test"));
        assert!(!domain_matches("10.0.0.1", "0.0.1"));
    }

    #[test]
    fn max_age_zero_removes_a_cookie() {
        let mut jar = CookieJar::default();
        jar.store(b"sid=abc; Path=/", "localhost", "/login");
        jar.store(b"sid=; Max-Age=0; Path=/", "localhost", "/logout");
        assert_eq!(jar.header_for("/"), b"");
    }
}
