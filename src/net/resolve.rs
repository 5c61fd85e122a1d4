//! Host names to socket addresses, without the system resolver for the
//! names leakcheck is meant for. An IP literal is parsed, and `localhost`
//! (with RFC 6761's `*.localhost`) is the loopback address; only another
//! name, which needs `--allow-remote` anyway, goes to `getaddrinfo`.
//!
//! Why by hand: the npm platform binary is linked statically against glibc
//! so that it runs on any x86_64 Linux, Alpine's musl included. A static
//! glibc's `getaddrinfo` loads the NSS modules (`libnss_files.so`) of the
//! glibc it was built with at run time; in an image without them even
//! `localhost` would not resolve. Loopback names never need them.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

/// The addresses of `host` (an IP literal with or without brackets, or a
/// name) at `port`, IPv4 first for `localhost` as Node's listeners on
/// `127.0.0.1` expect.
pub fn resolve(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    if is_localhost_name(bare) {
        return Ok(vec![
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
            SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), port),
        ]);
    }
    Ok((bare, port).to_socket_addrs()?.collect())
}

/// `host:port` (`[::1]:9229`, `localhost:9229`) to its addresses.
pub fn resolve_host_port(host_port: &str) -> io::Result<Vec<SocketAddr>> {
    let invalid = || io::Error::new(io::ErrorKind::InvalidInput, "expected host:port");
    let (host, port) = host_port.rsplit_once(':').ok_or_else(invalid)?;
    let port = port.parse::<u16>().map_err(|_| invalid())?;
    resolve(host, port)
}

/// `localhost`, `LOCALHOST.`, `app.localhost`: names that RFC 6761 (6.3)
/// reserves for the loopback address.
fn is_localhost_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_and_literals_need_no_resolver() {
        let v4 = SocketAddr::from(([127, 0, 0, 1], 80));
        assert_eq!(resolve("127.0.0.1", 80).unwrap(), vec![v4]);
        assert_eq!(resolve("localhost", 80).unwrap()[0], v4);
        assert_eq!(resolve("api.localhost.", 80).unwrap()[0], v4);
        assert!(resolve("[::1]", 80).unwrap()[0].ip().is_loopback());
        assert_eq!(resolve_host_port("localhost:9229").unwrap()[0].port(), 9229);
        assert_eq!(
            resolve_host_port("[::1]:9229").unwrap(),
            vec![SocketAddr::from((Ipv6Addr::LOCALHOST, 9229))]
        );
    }

    #[test]
    fn a_host_port_without_a_port_is_refused() {
        assert!(resolve_host_port("localhost").is_err());
        assert!(resolve_host_port("localhost:http").is_err());
    }

    #[test]
    fn localhost_lookalikes_are_not_loopback_names() {
        assert!(!is_localhost_name("localhost.example.com"));
        assert!(!is_localhost_name("notlocalhost"));
    }
}
