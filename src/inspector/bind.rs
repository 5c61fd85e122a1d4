//! Where an inspector listens, and the loopback rule for it. The inspector
//! runs any code its client sends: leakcheck never opens one, attaches to
//! one, or follows a WebSocket URL to one beyond this machine unless
//! `--allow-remote-inspector` says so.
//!
//! Node takes the inspector's address from `--inspect[-brk|-wait][=[host:]port]`
//! and `--inspect-port=[host:]port` (also in NODE_OPTIONS); SIGUSR1 opens it
//! on that address, so a process started with `--inspect-port=0.0.0.0:9229`
//! would expose it on every interface.

use std::net::{IpAddr, SocketAddr};

/// The flags whose value may carry the inspector's host.
const INSPECT_FLAGS: [&str; 5] = [
    "--inspect",
    "--inspect-brk",
    "--inspect-wait",
    "--inspect-port",
    "--debug-port",
];

/// The first non-loopback host an inspector flag in `args` names, if any.
pub fn remote_inspect_host<'a>(args: impl IntoIterator<Item = &'a str>) -> Option<String> {
    args.into_iter()
        .filter_map(|arg| {
            let (flag, value) = arg.split_once('=')?;
            INSPECT_FLAGS.contains(&flag).then_some(value)
        })
        .filter_map(|value| {
            let (host, _port) = value.rsplit_once(':')?;
            Some(
                host.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_string(),
            )
        })
        .find(|host| !is_loopback_host(host))
}

/// `127.0.0.1`, `::1`, `localhost` (and anything that resolves to loopback only).
pub fn is_loopback_host(host: &str) -> bool {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return ip.is_loopback();
    }
    crate::net::resolve::resolve(host, 0)
        .map(|addrs| !addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback()))
        .unwrap_or(false)
}

/// Refuses a WebSocket URL whose host is not loopback. `/json/list` is
/// answered by the process, not by leakcheck: a loopback port may still
/// name `ws://10.1.2.3:…`, which leakcheck must not follow.
pub fn check_ws_url(url: &str, allow_remote: bool) -> Result<(), String> {
    let host_port = url
        .strip_prefix("ws://")
        .ok_or_else(|| format!("{url:?} is not a ws:// URL"))?
        .split('/')
        .next()
        .unwrap_or("");
    let host = match host_port.rsplit_once(':') {
        Some((host, _)) => host,
        None => host_port,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if allow_remote || is_loopback_host(host) {
        Ok(())
    } else {
        Err(host_port.to_string())
    }
}

/// Whether a listening address is reachable beyond this machine.
pub fn is_exposed(addr: &SocketAddr) -> bool {
    !addr.ip().is_loopback()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_remote_host_in_inspect_flags() {
        let args = ["node", "--inspect-port=0.0.0.0:9229", "server.js"];
        assert_eq!(remote_inspect_host(args), Some("0.0.0.0".into()));
        assert_eq!(remote_inspect_host(["--inspect=[::]:0"]), Some("::".into()));
        assert_eq!(
            remote_inspect_host(["--inspect=127.0.0.1:0", "--inspect-port=9230"]),
            None
        );
        assert_eq!(remote_inspect_host(["--inspect=localhost:9229"]), None);
        assert_eq!(remote_inspect_host(["--inspectx=0.0.0.0:1"]), None);
    }

    #[test]
    fn websocket_urls_must_stay_on_loopback() {
        assert!(check_ws_url("ws://127.0.0.1:9229/abc", false).is_ok());
        assert!(check_ws_url("ws://[::1]:9229/abc", false).is_ok());
        assert_eq!(
            check_ws_url("ws://10.1.2.3:9229/abc", false),
            Err("10.1.2.3:9229".into())
        );
        assert!(check_ws_url("ws://10.1.2.3:9229/abc", true).is_ok());
    }
}
