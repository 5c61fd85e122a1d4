//! Finding a running inspector: from `HOST:PORT` through its `/json/list`,
//! from a `ws://` URL as is, or from a Node PID by sending SIGUSR1, which
//! makes Node open its inspector on 127.0.0.1:9229 (or the port its
//! `--inspect-port` names).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Inspector, bind};
use crate::net::http_get;
use crate::platform::procfs;

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
    #[error(
        "the inspector on {port_addr} names a WebSocket on {ws}, which is not a loopback address; \
         leakcheck follows it only with --allow-remote-inspector"
    )]
    RemoteWebSocket { port_addr: SocketAddr, ws: String },
    #[error(
        "process {pid} would open its inspector on {host} ({source_flag}), reachable beyond this \
         machine; leakcheck activates it only with --allow-remote-inspector"
    )]
    WouldExpose {
        pid: u32,
        host: String,
        source_flag: String,
    },
    #[error(
        "process {pid} opened its inspector on {addr}, reachable beyond this machine; leakcheck \
         closed it again{closed}. Start the process with --inspect-port=127.0.0.1:PORT, or pass \
         --allow-remote-inspector"
    )]
    Exposed {
        pid: u32,
        addr: SocketAddr,
        closed: &'static str,
    },
    #[error(
        "no inspector answers on {addr}: {reason}; is the process started with --inspect? (Bun's \
         inspector has no /json/list: give the ws:// URL Bun printed)"
    )]
    NotFound { addr: String, reason: String },
    #[error(
        "process {pid} is {runtime}, which opens no inspector on SIGUSR1 (the signal would end \
         it): start it with --inspect=127.0.0.1:9229 and attach with --inspect (the ws:// URL it \
         prints, for Bun), or read it with --proc {pid}"
    )]
    NoSignal { pid: u32, runtime: &'static str },
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
    first_target(addr, allow_remote).await
}

fn check_loopback(host_port: &str, allow_remote: bool) -> Result<SocketAddr, DiscoverError> {
    let addr = crate::net::resolve::resolve_host_port(host_port)
        .ok()
        .and_then(|a| a.into_iter().next())
        .ok_or_else(|| DiscoverError::BadAddress(host_port.to_string()))?;
    if !allow_remote && !addr.ip().is_loopback() {
        return Err(DiscoverError::NotLoopback(host_port.to_string()));
    }
    Ok(addr)
}

/// The WebSocket URL of the first target `/json/list` names, refused when
/// it leads off this machine (unless `allow_remote`).
async fn first_target(addr: SocketAddr, allow_remote: bool) -> Result<String, DiscoverError> {
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
        .and_then(|url| {
            bind::check_ws_url(&url, allow_remote).map_err(|ws| {
                DiscoverError::RemoteWebSocket {
                    port_addr: addr,
                    ws,
                }
            })?;
            Ok(url)
        })
}

/// What would make SIGUSR1 open `pid`'s inspector beyond loopback: an
/// inspector flag on its command line or in its NODE_OPTIONS.
fn exposing_flag(pid: u32) -> Option<(String, String)> {
    let cmdline = crate::platform::procfs::cmdline_bytes(pid);
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    if let Some(host) = bind::remote_inspect_host(args.iter().map(String::as_str)) {
        return Some((host, "its command line".into()));
    }
    let environ = crate::platform::procfs::environ_of(pid).unwrap_or_default();
    let options = environ
        .split(|b| *b == 0)
        .find_map(|entry| entry.strip_prefix(b"NODE_OPTIONS="))
        .map(|v| String::from_utf8_lossy(v).into_owned())?;
    bind::remote_inspect_host(options.split_whitespace())
        .map(|host| (host, "its NODE_OPTIONS".into()))
}

/// The runtime an executable is when SIGUSR1 would end it (its default
/// action): Deno and Bun open no inspector on it. (The names are
/// `crate::runtime`'s; that module uses this one, so they are not
/// imported from it.)
fn ends_on_sigusr1(program: &std::path::Path) -> Option<&'static str> {
    match program.file_name()?.to_str()? {
        // npm's packages install `bun.exe` on Linux too.
        "deno" | "deno.exe" => Some("Deno"),
        "bun" | "bun.exe" => Some("Bun"),
        _ => None,
    }
}

/// Opens the inspector of Node process `pid` with SIGUSR1 and returns its
/// WebSocket URL. The inspector's port is found among the ports the
/// process listens on, so a non-default `--inspect-port` works too.
pub async fn activate_by_pid(pid: u32, allow_remote: bool) -> Result<String, DiscoverError> {
    activate(pid, allow_remote).await.map(|a| a.url)
}

/// An inspector reached by SIGUSR1.
#[derive(Debug, Clone)]
pub struct Activated {
    pub url: String,
    /// The port was not listening before the signal: leakcheck opened it,
    /// and whoever leaves the process as it found it closes it again.
    pub opened: bool,
}

/// `activate_by_pid`, saying whether the inspector was already open.
pub async fn activate(pid: u32, allow_remote: bool) -> Result<Activated, DiscoverError> {
    if !allow_remote && let Some((host, source_flag)) = exposing_flag(pid) {
        return Err(DiscoverError::WouldExpose {
            pid,
            host,
            source_flag,
        });
    }
    // Deno and Bun end on SIGUSR1 (its default action): never sent them.
    if let Some(runtime) = procfs::exe_of(pid)
        .ok()
        .as_deref()
        .and_then(ends_on_sigusr1)
    {
        return Err(DiscoverError::NoSignal { pid, runtime });
    }
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
            if let Ok(url) = first_target(addr, allow_remote).await {
                // What the flags did not say (a launcher's own settings) the
                // socket does: an inspector on 0.0.0.0 is closed again.
                if !allow_remote
                    && let Some(exposed) = procfs::listening_addresses_of(pid)
                        .into_iter()
                        .find(|a| a.port() == candidate && bind::is_exposed(a))
                {
                    let closed = match close_inspector(&url).await {
                        Ok(()) => "",
                        Err(_) => " (or tried to: stop it if it still listens)",
                    };
                    return Err(DiscoverError::Exposed {
                        pid,
                        addr: exposed,
                        closed,
                    });
                }
                return Ok(Activated {
                    url,
                    opened: !before.contains(&candidate),
                });
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(DiscoverError::NotActivated {
        pid,
        seconds: ACTIVATION_WAIT.as_secs(),
    })
}

/// Closes an inspector through its own session (`inspector.close()` in the
/// target), for one that opened where it must not listen.
async fn close_inspector(url: &str) -> Result<(), super::InspectorError> {
    close_through(&Inspector::connect(url).await?).await;
    Ok(())
}

/// Closes the inspector a session is connected to (`inspector.close()` in
/// the target); the session ends with it.
pub async fn close_through(inspector: &Inspector) {
    // The session ends as the inspector closes, so the call's answer may
    // never come; the socket is checked by the caller's message only.
    let _ = tokio::time::timeout(
        Duration::from_secs(2),
        inspector.evaluate("process.getBuiltinModule('node:inspector').close()"),
    )
    .await;
}
