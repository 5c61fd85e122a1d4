//! Headless Chromium for `leakcheck page`: found on the PATH (or given),
//! started with its DevTools endpoint on loopback only and a throwaway
//! profile, stopped by PID like any target, its profile removed.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::process::{LaunchSpec, Target};

/// The names Chromium goes by on the PATH, in the order tried.
const BROWSERS: [&str; 4] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];
/// Chromium's own traffic off: without these it looks up Google's hosts
/// (update checks, safe browsing, domain reliability, translation, the
/// media router, its own DNS client probing `google.com`) at start and
/// while it runs — DNS queries that leave the machine (`strace` of a page
/// run showed 32 to the resolver). The resolver rule answers every name
/// but `localhost` and `127.0.0.1` with "not found", and Chromium's own
/// DNS client is off, so nothing is looked up at all.
/// `tests/it/page.rs` checks under strace that every connection stays on
/// loopback.
pub const LOOPBACK_ONLY: [&str; 10] = [
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--safebrowsing-disable-auto-update",
    "--no-pings",
    "--disable-default-apps",
    "--metrics-recording-only",
    "--disable-breakpad",
    "--disable-features=MediaRouter,DialMediaRouteProvider,OptimizationHints,Translate,\
     CertificateTransparencyComponentUpdater,AutofillServerCommunication,\
     InterestFeedContentSuggestions,NetworkTimeServiceQuerying,AsyncDns,DnsOverHttps",
    "--dns-prefetch-disable",
];

/// How long Chromium may take to announce its DevTools endpoint.
const START_LIMIT: Duration = Duration::from_secs(30);
/// How long the DevTools endpoint may take to answer.
const ENDPOINT_LIMIT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(
        "no Chromium found on the PATH (tried {}); install Debian's `chromium` package or give \
         --chrome PATH",
        BROWSERS.join(", ")
    )]
    NotFound,
    #[error("cannot create the browser's throwaway profile")]
    Profile(#[source] std::io::Error),
    #[error("Chromium did not start: {0}")]
    Start(String),
    #[error("the DevTools endpoint {0} is not understood: {1}")]
    Endpoint(String, String),
    #[error(
        "nothing listens on {0} for --connect: start Chromium with \
         --remote-debugging-address=127.0.0.1 --remote-debugging-port={port}, or drop --connect to \
         let leakcheck start one",
        port = .0.port()
    )]
    NotListening(SocketAddr),
}

/// The browser executable: `--chrome`, or the first of `BROWSERS` on the PATH.
pub fn find(chrome: Option<&Path>) -> Result<PathBuf, BrowserError> {
    if let Some(path) = chrome {
        return Ok(path.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    BROWSERS
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file())
        .ok_or(BrowserError::NotFound)
}

/// A running Chromium and the profile it must not outlive.
pub struct Browser {
    pub target: Target,
    /// Removed when the browser is dropped, after it was stopped.
    pub profile: tempfile::TempDir,
    /// `ws://127.0.0.1:PORT/devtools/browser/…`.
    pub endpoint: String,
}

/// Starts Chromium headless on `about:blank`.
pub async fn launch(executable: &Path, grace: Duration) -> Result<Browser, BrowserError> {
    let profile = tempfile::Builder::new()
        .prefix("leakcheck-chromium-")
        .tempdir()
        .map_err(BrowserError::Profile)?;
    let mut command = vec![
        executable.display().to_string(),
        "--headless=new".into(),
        "--remote-debugging-address=127.0.0.1".into(),
        "--remote-debugging-port=0".into(),
        format!("--user-data-dir={}", profile.path().display()),
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        "--disable-extensions".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--mute-audio".into(),
        // Chromium throttles a tab that navigates more than 200 times in
        // 10 s (pushState and back included): a single-page app's link
        // clicked and gone back from every 90 ms hit it every 100
        // iterations, and the click then did nothing for 10 s.
        "--disable-ipc-flooding-protection".into(),
        // A page in a background tab or hidden window gets its timers
        // slowed; headless has no foreground, so keep them at full rate.
        "--disable-background-timer-throttling".into(),
        "--disable-renderer-backgrounding".into(),
    ];
    command.extend(LOOPBACK_ONLY.iter().map(|flag| flag.to_string()));
    // Chromium's sandbox refuses to start as root (CI containers run as
    // root); the page is the test's own, served on loopback.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        command.push("--no-sandbox".into());
    }
    command.push("about:blank".into());
    let mut target = Target::launch(&LaunchSpec {
        command,
        grace,
        faults: None,
        node: false,
        node_flags: Vec::new(),
        env: Vec::new(),
    })
    .map_err(|e| BrowserError::Start(format!("{e:#}")))?;
    let endpoint = match target.first_announced(START_LIMIT).await {
        Ok(endpoint) => endpoint,
        Err(_) => {
            let output = target.tail_text();
            let shown = if output.trim().is_empty() {
                String::new()
            } else {
                format!("; its last output:\n{output}")
            };
            return Err(BrowserError::Start(match target.exit_status() {
                Some(status) => format!(
                    "{} exited ({}) before it announced its DevTools endpoint: is it Chromium? \
                     (--chrome PATH){shown}",
                    executable.display(),
                    crate::process::describe_status(status)
                ),
                None => format!(
                    "no DevTools endpoint announced within {} s{shown}",
                    START_LIMIT.as_secs()
                ),
            }));
        }
    };
    Ok(Browser {
        target,
        profile,
        endpoint,
    })
}

/// The WebSocket URL of the first page target behind a browser endpoint
/// (`ws://HOST:PORT/devtools/browser/…`), from its `/json/list`.
pub async fn first_page(endpoint: &str) -> Result<String, BrowserError> {
    let bad = |why: &str| BrowserError::Endpoint(endpoint.to_string(), why.to_string());
    let host = endpoint
        .strip_prefix("ws://")
        .and_then(|rest| rest.split('/').next())
        .ok_or_else(|| bad("not a ws:// URL"))?;
    let addr: SocketAddr = host.parse().map_err(|_| bad("not HOST:PORT"))?;
    if !addr.ip().is_loopback() {
        return Err(bad(
            "not on loopback; leakcheck drives a browser on this machine only",
        ));
    }
    if !crate::net::accepts_connections(addr).await {
        return Err(BrowserError::NotListening(addr));
    }
    let (_, body) = crate::net::http_get(addr, "/json/list", ENDPOINT_LIMIT)
        .await
        .map_err(|e| bad(&e.to_string()))?;
    let targets: Value = serde_json::from_str(&body).map_err(|e| bad(&e.to_string()))?;
    targets
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t.get("type").and_then(Value::as_str) == Some("page"))
        .find_map(|t| t.get("webSocketDebuggerUrl").and_then(Value::as_str))
        .map(str::to_string)
        .ok_or_else(|| bad("it lists no page"))
}

/// Chromium's known noise on a machine without a desktop session: it
/// tries the system and session D-Bus, and its zygote reports sandbox
/// and namespace choices. None of it is the page's output, so none of it
/// is shown as "the last output of the target".
const NOISE: [&str; 4] = ["bus.cc(", "dbus", "d-bus", "zygote"];

/// Whether a line of Chromium's output is its known noise.
pub fn is_noise(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    NOISE.iter().any(|n| lower.contains(n))
}

#[cfg(test)]
mod noise_tests {
    use super::is_noise;

    #[test]
    fn d_bus_and_zygote_lines_are_noise_and_the_pages_are_not() {
        assert!(is_noise(
            "[1206/020301.123456:ERROR:bus.cc(407)] Failed to connect to the bus: Failed to \
             connect to socket /run/dbus/system_bus_socket: No such file or directory"
        ));
        assert!(is_noise(
            "[1206/020301:ERROR:zygote_host_impl_linux.cc(273)] Failed to adjust OOM score"
        ));
        assert!(!is_noise(
            "Uncaught TypeError: dialog.close is not a function"
        ));
    }
}
