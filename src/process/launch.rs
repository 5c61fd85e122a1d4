//! Starting the target with its inspector on loopback, waiting until it
//! serves, and stopping it by its PID (SIGTERM, then SIGKILL after a grace
//! period) whatever happened in between.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};
use tokio::sync::watch;

use super::cluster_ports;
use super::launched_as::{LaunchAsError, LaunchedAs};
use super::watch::{FaultReporter, collect_output, watch_exit};
use super::watchdog::{Lifeline, fork_watchdog};
use crate::model::{self, Stopped};

/// The inspector flag leakcheck adds: loopback only, a port the kernel picks.
/// The inspector runs arbitrary code for whoever connects, so never 0.0.0.0.
pub const INSPECT_FLAG: &str = "--inspect=127.0.0.1:0";
/// How often readiness is polled: short, since the whole check's overhead
/// budget is half a second.
const READY_POLL: Duration = Duration::from_millis(10);

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("cannot start `{command}`: check the program exists and is executable")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the target `{command}` exited with {status} before listening on {addr}{tail}")]
    ExitedEarly {
        command: String,
        status: String,
        addr: SocketAddr,
        tail: String,
    },
    #[error(
        "the target did not accept connections on {addr} within {seconds} s; check the URL's port \
         matches the one the server listens on, or raise --ready-timeout{tail}"
    )]
    NotReady {
        addr: SocketAddr,
        seconds: u64,
        tail: String,
    },
    #[error(
        "the target's inspector did not announce itself within {seconds} s; is it a Node.js, \
         Deno or Bun process? (for another runtime use --proc){tail}"
    )]
    NoInspector { seconds: u64, tail: String },
    #[error(transparent)]
    Runtime(#[from] LaunchAsError),
}

/// How to start and stop the target.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    pub command: Vec<String>,
    /// How long SIGTERM has before SIGKILL.
    pub grace: Duration,
    /// Told, once, when the target exits or starts exiting on its own, so a
    /// run can stop waiting on a process that will not answer again.
    pub faults: Option<watch::Sender<Option<String>>>,
    /// Give it Node's inspector flags (and the cluster preload). False for
    /// a browser, which opens DevTools by flags of its own and would only
    /// cost a `node --version` for the preload.
    pub node: bool,
    /// More Node flags, beside the inspector's (the native recorder's
    /// `--perf-basic-prof`).
    pub node_flags: Vec<String>,
    /// Environment variables set for the target (`LD_PRELOAD` of a
    /// recorder or an allocator).
    pub env: Vec<(String, String)>,
}

pub struct Target {
    child: Child,
    /// Kept until the target is stopped: dropping it lets the watchdog go.
    lifeline: Option<Lifeline>,
    pub pid: u32,
    pub command: Vec<String>,
    tail: Arc<Mutex<VecDeque<String>>>,
    inspector_urls: watch::Receiver<Vec<String>>,
    grace: Duration,
    stopped: bool,
    /// Set when the target announced it is exiting (see `NODE_WAITING_FOR_DEBUGGER`).
    exiting: Arc<AtomicBool>,
    muted: Arc<AtomicBool>,
    /// The tasks reading its stdout and stderr, awaited once it has gone so
    /// that its last lines (the error that ended it) are in the tail.
    readers: Vec<tokio::task::JoinHandle<()>>,
    /// The runtime its command starts, as far as the command says.
    pub runtime: crate::runtime::Runtime,
    /// How a script's command was understood (`deno task dev` runs …).
    pub launch_note: Option<String>,
    /// The folder of a Deno or Bun target's preload, removed with it.
    _scratch: Option<tempfile::TempDir>,
}

/// How long a stopped target's output may take to reach the tail: its
/// pipes close when its group is gone, unless something it started
/// holds them.
const OUTPUT_DRAIN: Duration = Duration::from_secs(1);

/// True when the command starts Node directly, so the flag can go on its
/// command line; other launchers (npm, npx, a shell script) get NODE_OPTIONS.
pub fn runs_node_directly(program: &str) -> bool {
    let name = std::path::Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    name == "node" || name == "nodejs" || name.starts_with("node-") || name.starts_with("node2")
}

/// The inspector flag and, for a node that takes it, the cluster preload:
/// on the command line of `node …`; in NODE_OPTIONS for a launcher (npm, a
/// shell script), which runs the node in PATH.
/// `existing` is the NODE_OPTIONS the target gets otherwise.
fn add_node_flags(command: &mut Command, program: &str, more: &[String], existing: &str) {
    let direct = runs_node_directly(program);
    let node = if direct { program } else { "node" };
    let mut flags = vec![INSPECT_FLAG];
    if cluster_ports::node_takes_preload(node) {
        flags.extend(cluster_ports::PRELOAD);
    }
    flags.extend(more.iter().map(String::as_str));
    if direct {
        command.args(&flags);
    } else {
        command.env(
            "NODE_OPTIONS",
            format!("{existing} {}", flags.join(" ")).trim(),
        );
    }
}

/// The spec's own NODE_OPTIONS (`--heap-limit`), or the inherited ones.
pub(super) fn node_options(spec: &LaunchSpec) -> String {
    spec.env
        .iter()
        .rev()
        .find(|(name, _)| name == "NODE_OPTIONS")
        .map(|(_, value)| value.clone())
        .unwrap_or_else(|| std::env::var("NODE_OPTIONS").unwrap_or_default())
}

impl Target {
    pub fn launch(spec: &LaunchSpec) -> Result<Target, TargetError> {
        let shown = spec.command.join(" ");
        let spawn_error = |source: std::io::Error| TargetError::Spawn {
            command: shown.clone(),
            source,
        };
        let (program, args) = spec
            .command
            .split_first()
            .ok_or_else(|| spawn_error(std::io::Error::other("the command is empty")))?;
        let mut launch = LaunchedAs::given(program, args);
        if spec.node {
            launch = LaunchedAs::runtime_of(&spec.command, &spec.node_flags, &node_options(spec))?;
        }
        let mut command = Command::new(&launch.program);
        command.envs(spec.env.iter().map(|(k, v)| (k, v)));
        if let Some(path) = &launch.path {
            command.env("PATH", path);
        }
        if spec.node && launch.runtime == crate::runtime::Runtime::Node {
            // The spec's own NODE_OPTIONS (`--heap-limit`) or the inherited ones.
            let existing = node_options(spec);
            add_node_flags(&mut command, program, &spec.node_flags, &existing);
        }
        let args = &launch.args;
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group, so that stopping it also stops what it
        // started (npm start → sh → node).
        command.process_group(0);
        // If leakcheck itself is killed, the kernel kills the target too
        // (the parent-death signal), and the watchdog its whole group (what
        // a shell or npm started below it), so nothing outlives a crashed
        // or SIGKILLed run.
        let lifeline = Lifeline::new().map_err(spawn_error)?;
        let (read, write) = lifeline.fds();
        // SAFETY: the parent-death request and the watchdog's fork are async-signal-safe and
        // touch only the child (see watchdog.rs).
        unsafe {
            command.pre_exec(move || {
                crate::platform::kill_with_parent(libc::SIGKILL);
                fork_watchdog(read, write)
            });
        }
        let mut child = command.spawn().map_err(spawn_error)?;
        let pid = child
            .id()
            .ok_or_else(|| spawn_error(std::io::Error::other("it exited at once")))?;
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let (url_sink, inspector_urls) = watch::channel(Vec::new());
        let exiting = Arc::new(AtomicBool::new(false));
        let muted = Arc::new(AtomicBool::new(false));
        let reporter = FaultReporter {
            exiting: exiting.clone(),
            muted: muted.clone(),
            faults: spec.faults.clone(),
        };
        let mut readers = Vec::new();
        if let Some(stderr) = child.stderr.take() {
            readers.push(tokio::spawn(collect_output(
                stderr,
                tail.clone(),
                Some(url_sink),
                Some(reporter.clone()),
            )));
        }
        if let Some(stdout) = child.stdout.take() {
            readers.push(tokio::spawn(collect_output(
                stdout,
                tail.clone(),
                None,
                None,
            )));
        }
        tokio::spawn(watch_exit(pid, reporter));
        Ok(Target {
            child,
            lifeline: Some(lifeline),
            pid,
            command: spec.command.clone(),
            tail,
            inspector_urls,
            grace: spec.grace,
            stopped: false,
            exiting,
            muted,
            readers,
            runtime: launch.runtime,
            launch_note: launch.note,
            _scratch: launch.scratch,
        })
    }

    /// The last lines the target printed, formatted for an error message.
    pub fn tail_text(&self) -> String {
        let tail = self.tail.lock().expect("tail lock");
        if tail.is_empty() {
            return String::new();
        }
        let lines: Vec<String> = tail
            .iter()
            .rev()
            .take(10)
            .rev()
            .map(|l| format!("  | {l}"))
            .collect();
        format!("\nlast output of the target:\n{}", lines.join("\n"))
    }

    pub fn tail_lines(&self) -> Vec<String> {
        self.tail
            .lock()
            .expect("tail lock")
            .iter()
            .cloned()
            .collect()
    }

    /// The exit status if the target has exited.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits until `addr` accepts connections, failing early if the target exits.
    pub async fn wait_ready(
        &mut self,
        addr: SocketAddr,
        limit: Duration,
    ) -> Result<(), TargetError> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.exit_status() {
                // Give the output readers a moment to drain the last lines.
                tokio::time::sleep(Duration::from_millis(50)).await;
                return Err(TargetError::ExitedEarly {
                    command: self.command.join(" "),
                    status: describe_status(status),
                    addr,
                    tail: self.tail_text(),
                });
            }
            if tokio::net::TcpStream::connect(addr).await.is_ok() {
                return Ok(());
            }
            if started.elapsed() > limit {
                return Err(TargetError::NotReady {
                    addr,
                    seconds: limit.as_secs(),
                    tail: self.tail_text(),
                });
            }
            tokio::time::sleep(READY_POLL).await;
        }
    }

    /// The WebSocket URL of the inspector of the process that serves `addr`.
    /// With NODE_OPTIONS several Node processes announce one (npm itself is
    /// Node), so the one listening on the app's port is chosen.
    pub async fn inspector_url(
        &mut self,
        addr: SocketAddr,
        limit: Duration,
    ) -> Result<String, TargetError> {
        self.wait_announced(limit, |urls| pick_inspector(urls, addr.port()))
            .await
    }

    /// The first DevTools URL the target announces (a browser's), waiting
    /// up to `limit`.
    pub async fn first_announced(&mut self, limit: Duration) -> Result<String, TargetError> {
        self.wait_announced(limit, |urls| urls.first().cloned())
            .await
    }

    /// The inspector of the app a command starts, for a command known by no
    /// port (`watch -- npm start`): the first announced by a process that
    /// is not a launcher's own (npm, yarn, pnpm, tsx, nodemon…), waiting up
    /// to `limit`.
    pub async fn app_announced(&mut self, limit: Duration) -> Result<String, TargetError> {
        self.wait_announced(limit, |urls| {
            urls.iter()
                .find(|url| {
                    !inspector_port(url).is_some_and(super::launcher::listens_for_a_launcher)
                })
                .cloned()
        })
        .await
    }

    /// Waits until `pick` chooses one of the announced URLs, the target
    /// exits, or `limit` passes.
    async fn wait_announced(
        &mut self,
        limit: Duration,
        pick: impl Fn(&[String]) -> Option<String>,
    ) -> Result<String, TargetError> {
        let started = Instant::now();
        loop {
            let urls = self.inspector_urls.borrow().clone();
            if let Some(url) = pick(&urls) {
                return Ok(url);
            }
            if started.elapsed() > limit || self.exit_status().is_some() {
                return Err(TargetError::NoInspector {
                    seconds: limit.as_secs(),
                    tail: self.tail_text(),
                });
            }
            let _ = tokio::time::timeout(READY_POLL * 5, self.inspector_urls.changed()).await;
        }
    }

    /// Every inspector URL the target's processes announced so far, and
    /// later ones as they come (a cluster forks its workers after start).
    pub fn announced_inspectors(&self) -> watch::Receiver<Vec<String>> {
        self.inspector_urls.clone()
    }

    /// Stops the target's process group: SIGTERM, then SIGKILL after the
    /// grace period. Safe to call twice.
    pub async fn stop(&mut self) -> Stopped {
        self.muted.store(true, Ordering::Relaxed);
        if self.exiting.load(Ordering::Relaxed) {
            // It is on its way out (Node waits for our inspector session to
            // close, which the caller has dropped): let it finish.
            let _ = tokio::time::timeout(self.grace, self.child.wait()).await;
        }
        if let Some(status) = self.exit_status() {
            self.stopped = true;
            // Whatever it started may still run.
            signal_group(self.pid, libc::SIGKILL);
            self.lifeline = None;
            self.drain_output().await;
            return Stopped::AlreadyExited(exit_status_of(status));
        }
        signal_group(self.pid, libc::SIGTERM);
        let outcome = match tokio::time::timeout(self.grace, self.child.wait()).await {
            Ok(Ok(status)) => Stopped::Terminated(exit_status_of(status)),
            _ => {
                signal_group(self.pid, libc::SIGKILL);
                let _ = self.child.wait().await;
                Stopped::Killed
            }
        };
        // Children that outlived their parent in the group.
        signal_group(self.pid, libc::SIGKILL);
        self.stopped = true;
        self.lifeline = None;
        self.drain_output().await;
        outcome
    }

    /// Lets the output readers take in the last lines of a target that
    /// has gone, for at most `OUTPUT_DRAIN`.
    async fn drain_output(&mut self) {
        let readers = std::mem::take(&mut self.readers);
        let _ = tokio::time::timeout(OUTPUT_DRAIN, futures_util::future::join_all(readers)).await;
    }
}

impl Drop for Target {
    /// Last resort when a run unwinds without calling `stop`.
    fn drop(&mut self) {
        if !self.stopped {
            signal_group(self.pid, libc::SIGKILL);
        }
    }
}

fn signal_group(pid: u32, signal: libc::c_int) {
    // SAFETY: kill(2) with a negative pid signals the group we created.
    unsafe {
        libc::kill(-(pid as libc::pid_t), signal);
    }
}

/// The model's view of a process's end: its exit code or its signal.
pub fn exit_status_of(status: ExitStatus) -> model::ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    model::ExitStatus {
        exit_code: status.code(),
        signal: status.signal(),
    }
}

/// "exit code 1", "signal 9": for messages.
pub fn describe_status(status: ExitStatus) -> String {
    exit_status_of(status).to_string()
}

fn pick_inspector(urls: &[String], app_port: u16) -> Option<String> {
    match urls {
        [] => None,
        [only] => Some(only.clone()),
        many => {
            let serving: Vec<u32> = crate::platform::procfs::holders_of(app_port)
                .iter()
                .map(|h| h.pid)
                .collect();
            many.iter()
                .find(|url| {
                    inspector_port(url).is_some_and(|p| {
                        crate::platform::procfs::holders_of(p)
                            .iter()
                            .any(|h| serving.contains(&h.pid))
                    })
                })
                .cloned()
        }
    }
}

pub fn inspector_port(url: &str) -> Option<u16> {
    url.strip_prefix("ws://")?
        .split('/')
        .next()?
        .rsplit(':')
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_node_launchers() {
        assert!(runs_node_directly("node"));
        assert!(runs_node_directly("/usr/local/bin/node"));
        assert!(!runs_node_directly("npm"));
        assert!(!runs_node_directly("./start.sh"));
    }

    #[test]
    fn reads_inspector_ports() {
        assert_eq!(inspector_port("ws://127.0.0.1:34567/0f2c-11"), Some(34567));
        assert_eq!(inspector_port("http://x"), None);
    }
}
