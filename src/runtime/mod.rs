//! Which JavaScript runtime runs the target: Node, Deno or Bun. The loop,
//! the verdict and the snapshot engine do not know which answered; three
//! things differ, and each lives here or behind `Dialect`:
//!
//! - how the target is started with its inspector (`launch`: Deno takes
//!   `--inspect` after `run`, Bun before its file; scripts of `deno task`,
//!   `bun run` and npm are read and started directly);
//! - how a reading is taken (`served.js`, the served counter Deno and Bun
//!   do not publish; every other figure comes from the same
//!   `process.memoryUsage()` their Node compatibility layers provide);
//! - which protocol the inspector speaks (`crate::inspector::Dialect`:
//!   Bun's is WebKit's), learned by `identify` once a session is open.
//!
//! What a runtime does not report is said in the report (`gaps`), never
//! read as a zero.

pub mod launch;

use crate::inspector::{Dialect, Inspector};

/// The preload that counts the requests a Deno or Bun server begins.
pub const SERVED_PRELOAD: &str = include_str!("served.js");
/// The preload's file name, in a private folder of each launch.
pub const SERVED_PRELOAD_FILE: &str = "leakcheck-served.js";

/// The preload's count, read at every reading: `null` until it knows it
/// counts every request the server begins.
pub const PRELOADED_SERVED: &str = "(() => { const s = globalThis[Symbol.for('leakcheck.served')]; \
    return s && s.counting && !s.uncountable ? s.n : null; })()";

/// A JavaScript runtime leakcheck can check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Runtime {
    #[default]
    Node,
    Deno,
    Bun,
}

impl Runtime {
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Node => "Node",
            Runtime::Deno => "Deno",
            Runtime::Bun => "Bun",
        }
    }

    /// The protocol its inspector speaks.
    pub fn dialect(self) -> Dialect {
        match self {
            Runtime::Bun => Dialect::WebKit,
            Runtime::Node | Runtime::Deno => Dialect::V8,
        }
    }

    /// The runtime a program name starts (`deno`, `/usr/bin/bun`); Node
    /// for anything else, which keeps Node's launch path.
    pub fn of_program(program: &str) -> Runtime {
        let name = std::path::Path::new(program)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("");
        match name {
            "deno" | "deno.exe" => Runtime::Deno,
            "bun" | "bun.exe" | "bunx" => Runtime::Bun,
            _ => Runtime::Node,
        }
    }

    /// What this runtime does not give, for the report: each figure or
    /// part of the check that is missing and what stands in for it.
    pub fn gaps(self) -> Vec<String> {
        let mut gaps = Vec::new();
        if self == Runtime::Node {
            return gaps;
        }
        let name = self.name();
        gaps.push(format!(
            "handles: {name}'s process.getActiveResourcesInfo() is empty, so open handles and \
             timers are not counted; listeners on `process` are"
        ));
        gaps.push(format!(
            "event-loop delay and collector pauses: {name}'s monitorEventLoopDelay records \
             nothing and it has no collector trace for leakcheck to read"
        ));
        gaps.push(format!(
            "worker threads and child processes are read on Node only, not on {name}"
        ));
        gaps.push(format!(
            "native memory (heaptrack) and the allocator trial run on Node only, not on {name}"
        ));
        if self == Runtime::Bun {
            gaps.push(
                "allocation sites: JavaScriptCore has no sampling heap profiler; the holder comes \
                 from the heap snapshots and the line that stores from the app's source, searched \
                 for the holder's name"
                    .into(),
            );
        }
        gaps
    }
}

/// A runtime as identified in a running target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identified {
    pub runtime: Runtime,
    /// Its own version: `2.9.6` for Deno, `1.4.5` for Bun, `v24.22.3` for Node.
    pub version: String,
}

impl Identified {
    /// `Deno 2.9.6`, `Node v24.22.3`.
    pub fn label(&self) -> String {
        format!("{} {}", self.runtime.name(), self.version)
    }

    /// Node's version, where Node runs it: Deno and Bun answer
    /// `process.version` with the Node release they imitate, which must not
    /// match Node's known leaks.
    pub fn node_version(&self) -> Option<String> {
        (self.runtime == Runtime::Node).then(|| self.version.clone())
    }
}

/// One expression every runtime answers in either protocol: Deno and Bun
/// are told apart by their globals, since both claim a Node version.
const IDENTIFY: &str = "typeof Deno !== 'undefined' && Deno.version ? 'Deno ' + Deno.version.deno \
    : typeof Bun !== 'undefined' ? 'Bun ' + Bun.version : 'Node ' + process.version";

/// How long identification keeps asking a target that cannot answer yet
/// (a Deno process whose main module has not started answered nothing
/// once, in CI), and how often.
const IDENTIFY_PATIENCE: std::time::Duration = std::time::Duration::from_secs(3);
const IDENTIFY_RETRY: std::time::Duration = std::time::Duration::from_millis(50);

/// Identifies the runtime behind an open session and returns the session
/// speaking its protocol. `expected` is what the command said (Node for a
/// target leakcheck did not start); it stands when the target never
/// answers, with an unknown version.
pub async fn identify(inspector: Inspector, expected: Runtime) -> (Inspector, Identified) {
    let started = std::time::Instant::now();
    let answer = loop {
        let answer = inspector.evaluate(IDENTIFY).await.ok();
        let text = answer.as_ref().and_then(|v| v.as_str()).map(str::to_string);
        // A Deno or Bun command answering "Node" has not set up its own
        // globals yet: asked again.
        let too_early =
            expected != Runtime::Node && text.as_deref().is_some_and(|t| t.starts_with("Node "));
        match text {
            Some(text) if !too_early => break Some(text),
            _ if started.elapsed() < IDENTIFY_PATIENCE => {
                tokio::time::sleep(IDENTIFY_RETRY).await;
            }
            _ => break None,
        }
    };
    let identified = match answer.as_deref().and_then(|t| t.split_once(' ')) {
        Some((name, version)) => Identified {
            runtime: match name {
                "Deno" => Runtime::Deno,
                "Bun" => Runtime::Bun,
                _ => Runtime::Node,
            },
            version: version.to_string(),
        },
        None => Identified {
            runtime: expected,
            version: "?".into(),
        },
    };
    // What the command said wins over a target that never told.
    let identified = match (identified.runtime, expected) {
        (Runtime::Node, Runtime::Deno | Runtime::Bun) => Identified {
            runtime: expected,
            version: "?".into(),
        },
        _ => identified,
    };
    (inspector.speaking(identified.runtime.dialect()), identified)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_name_their_runtime() {
        assert_eq!(Runtime::of_program("deno"), Runtime::Deno);
        assert_eq!(Runtime::of_program("/opt/bun/bin/bun"), Runtime::Bun);
        assert_eq!(Runtime::of_program("node"), Runtime::Node);
        assert_eq!(Runtime::of_program("denoise"), Runtime::Node);
    }

    #[test]
    fn only_node_claims_a_node_version() {
        let deno = Identified {
            runtime: Runtime::Deno,
            version: "2.9.6".into(),
        };
        assert_eq!(deno.node_version(), None);
        assert_eq!(deno.label(), "Deno 2.9.6");
        assert!(Runtime::Bun.gaps().iter().any(|g| g.contains("sampling")));
        assert!(Runtime::Node.gaps().is_empty());
    }
}
