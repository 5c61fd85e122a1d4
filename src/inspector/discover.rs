//! Finding a running inspector: from `HOST:PORT` through its `/json/list`,
//! from a `ws://` URL as is, or from a Node PID by sending SIGUSR1, which
//! makes Node open its inspector on 127.0.0.1:9229 (or the port its
//! `--inspect-port` names).

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::net::http_get;
use crate::procfs;

const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a process may take to open its inspector after SIGUSR1.
const ACTIVATION_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error(
        "{0} is not a loopback address; the inspector runs any code its client sends, so leakcheck \
         attaches beyond this machine only with --allow-remote-inspector"
    )]
    NotLoopback(String),
    #[error("{0:?} is neither HOST:PORT nor a ws:// URL")]
    BadAddress(String),
    #[error("no inspector answers on {addr}: {reason}; is the process started with --inspect?")]
    NotFound { addr: String, reason: String },
    #[error("process {0} does not exist or is not ours to signal")]
    NoProcess(u32),
    #[error(
        "process {pid} opened no inspector within {seconds} s of SIGUSR1; is it a Node.js \
         process? (for another runtime use --proc {pid})"
    )]
    NotActivated { pid: u32, seconds: u64 },
}

/// Turns `HOST:PORT` or a `ws://` URL into the WebSocket URL to connect to.
pub async fn resolve_inspector(spec: &str, allow_remote: bool) -> Result<String, DiscoverError> {
    if let Some(rest) = spec.strip_prefix("ws://") {
        let host_port = rest.split('/').next().unwrap_or("");
        check_loopback(host_port, allow_remote)?;
        return Ok(spec.to_string());
    }
    let addr = check_loopback(spec, allow_remote)?;
    first_target(addr).await
}

fn check_loopback(host_port: &str, allow_remote: bool) -> Result<SocketAddr, DiscoverError> {
    let addr = host_port
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| DiscoverError::BadAddress(host_port.to_string()))?;
    if !allow_remote && !addr.ip().is_loopback() {
        return Err(DiscoverError::NotLoopback(host_port.to_string()));
    }
    Ok(addr)
}

/// The WebSocket URL of the first target `/json/list` names.
async fn first_target(addr: SocketAddr) -> Result<String, DiscoverError> {
    let not_found = |reason: String| DiscoverError::NotFound {
        addr: addr.to_string(),
        reason,
    };
    let (status, body) = http_get(addr, "/json/list", DISCOVERY_TIMEOUT)
        .await
        .map_err(|e| not_found(e.to_string()))?;
    if status != 200 {
        return Err(not_found(format!("/json/list answered {status}")));
    }
    let list: Value =
        serde_json::from_str(&body).map_err(|_| not_found("/json/list is not JSON".into()))?;
    list.as_array()
        .and_then(|targets| {
            targets
                .iter()
                .find_map(|t| t.get("webSocketDebuggerUrl")?.as_str())
        })
        .map(str::to_string)
        .ok_or_else(|| not_found("/json/list names no target".into()))
}

/// Opens the inspector of Node process `pid` with SIGUSR1 and returns its
/// WebSocket URL. The inspector's port is found among the ports the
/// process listens on, so a non-default `--inspect-port` works too.
pub async fn activate_by_pid(pid: u32) -> Result<String, DiscoverError> {
    let before = procfs::listening_ports_of(pid);
    // SAFETY: kill(2) on a PID the user named.
    if unsafe { libc::kill(pid as libc::pid_t, libc::SIGUSR1) } != 0 {
        return Err(DiscoverError::NoProcess(pid));
    }
    let started = Instant::now();
    while started.elapsed() < ACTIVATION_WAIT {
        let mut ports = procfs::listening_ports_of(pid);
        // Ports that appeared after the signal first, then the usual 9229.
        ports.sort_by_key(|p| (before.contains(p), *p != 9229));
        for candidate in ports {
            let addr = SocketAddr::from(([127, 0, 0, 1], candidate));
            if let Ok(url) = first_target(addr).await {
                return Ok(url);
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(DiscoverError::NotActivated {
        pid,
        seconds: ACTIVATION_WAIT.as_secs(),
    })
}
