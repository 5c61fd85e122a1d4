//! Free inspector ports for a cluster's workers.
//!
//! Node gives each worker `cluster.fork()` starts the primary's inspector
//! port plus one, plus two… (`process.debugPort + offset`). leakcheck starts
//! the primary on a port the kernel picks from the ephemeral range, where
//! the ports just above it are as likely as any other to be a client
//! socket's or another server's: a worker whose port is taken prints
//! "Starting inspector on 127.0.0.1:N failed: address already in use" and
//! runs unread, so its growth is never judged (seen in CI, where parallel
//! tests' load holds thousands of loopback ports). A worker given port 0
//! gets a free one from the kernel, like the primary; `cluster.settings`
//! has a field for exactly that, which this preload fills in when the
//! target has not set it (its own `setupPrimary({ inspectPort })` wins,
//! since `setupPrimary` merges the options over the current settings).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// `--import` of an ES module given inline (no file to write or clean up):
/// in the primary only, workers get `inspectPort: 0` unless the target
/// chose a port. Percent-encoded so that it survives in NODE_OPTIONS,
/// which splits on spaces.
pub const PRELOAD: [&str; 2] = [
    "--import",
    "data:text/javascript,import%20cluster%20from%22node:cluster%22;\
     if(cluster.isPrimary%26%26!(%22inspectPort%22in%20cluster.settings))\
     cluster.settings.inspectPort=0;",
];

/// The first Node versions with `--import`: 19.0, and 18.18 on the 18
/// line. An older node refuses to start with an option it does not know,
/// so the preload is only added for a node known to take it.
const IMPORT_SINCE: (u32, u32) = (19, 0);
const IMPORT_SINCE_ON_18: u32 = 18;

/// Whether `node` (a path, or a name looked up in PATH) accepts `--import`.
/// Asked once per program and run (`node --version` takes ~30 ms); a node
/// that cannot be asked gets no preload, as before.
pub fn node_takes_preload(node: &str) -> bool {
    static ANSWERS: OnceLock<Mutex<HashMap<String, bool>>> = OnceLock::new();
    let answers = ANSWERS.get_or_init(Mutex::default);
    if let Some(known) = answers.lock().expect("answers lock").get(node) {
        return *known;
    }
    let answer = std::process::Command::new(node)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .is_some_and(|version| takes_import(&version));
    answers
        .lock()
        .expect("answers lock")
        .insert(node.to_string(), answer);
    answer
}

/// `v20.11.1`, `v18.18.0` → true; `v18.17.0`, `v16.20.2` or anything unreadable → false.
fn takes_import(version: &str) -> bool {
    let mut parts = version.trim().trim_start_matches('v').split('.');
    let mut number = || parts.next().and_then(|p| p.parse::<u32>().ok());
    let (Some(major), Some(minor)) = (number(), number()) else {
        return false;
    };
    (major, minor) >= IMPORT_SINCE || (major == 18 && minor >= IMPORT_SINCE_ON_18)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_nodes_with_import_get_the_preload() {
        assert!(takes_import("v20.0.0\n"));
        assert!(takes_import("v22.23.5"));
        assert!(takes_import("v18.18.2"));
        assert!(!takes_import("v18.17.1"));
        assert!(takes_import("v19.9.0"));
        assert!(!takes_import("v16.20.2"));
        assert!(!takes_import("bun 1.1"));
        assert!(!takes_import(""));
    }

    #[test]
    fn the_preload_has_no_space_for_node_options_to_split_on() {
        assert!(!PRELOAD[1].contains(' '));
    }
}
