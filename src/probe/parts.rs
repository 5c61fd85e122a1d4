//! The target's other isolates, read beside the main one: its worker
//! threads and the Node processes it forked.
//!
//! Workers are reached inside the main inspector session through the
//! `NodeWorker` domain: once enabled, the inspector announces every
//! running and future worker (`NodeWorker.attachedToWorker`), and each gets
//! a session with the same API as the main one (`Inspector::worker_session`).
//! Child processes inherit the inspector flag (on their command line from a
//! cluster primary, or in NODE_OPTIONS) and announce their own inspector on
//! the stderr leakcheck reads; an announced inspector whose port is held by
//! a descendant of the serving process is one of its children.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::watch;

use crate::inspector::{Inspector, InspectorError};
use crate::model::{IsolateKind, IsolateSample};

/// One isolate besides the main one, and the session that reads it.
#[derive(Clone)]
pub struct Part {
    /// `worker 1` or `pid 4242`: stable for the isolate's life.
    pub id: String,
    pub kind: IsolateKind,
    pub pid: u32,
    pub script: String,
    pub inspector: Inspector,
    /// The inspector's session id for a worker (to forget it on detach).
    session: Option<String>,
}

/// Where child processes' inspectors are announced (a launched target).
pub struct ChildInspectors {
    pub announced: watch::Receiver<Vec<String>>,
    /// The process that serves the URL: children descend from it.
    pub serving_pid: u32,
    /// The main inspector's URL, which is not a child.
    pub main_url: String,
}

impl ChildInspectors {
    /// Inspectors announced by processes other than the main one.
    fn children_announced(&self) -> usize {
        let urls = self.announced.borrow();
        urls.iter().filter(|u| **u != self.main_url).count()
    }
}

/// The isolates found so far. Workers are added by a task that listens to
/// the main session; children when `refresh` sees a new announcement.
pub struct Parts {
    workers: Arc<Mutex<Vec<Part>>>,
    children: Vec<Part>,
    child_source: Option<ChildInspectors>,
    seen_urls: HashSet<String>,
}

impl Parts {
    /// Starts listening for workers on `main`. A target whose inspector
    /// lacks the domain (not Node, or too old) has no workers to read.
    pub async fn watch(main: &Inspector, children: Option<ChildInspectors>) -> Parts {
        let pid = main
            .evaluate("process.pid")
            .await
            .ok()
            .and_then(|v| v.as_u64())
            .unwrap_or(0) as u32;
        let workers: Arc<Mutex<Vec<Part>>> = Arc::default();
        // Subscribed before enabling, so the announcements of the workers
        // already running are not missed.
        let mut events = main.subscribe_to("NodeWorker.");
        let enabled = main
            .call(
                "NodeWorker.enable",
                json!({ "waitForDebuggerOnStart": false }),
            )
            .await;
        if enabled.is_ok() {
            let list = workers.clone();
            // Weak: this task must not keep the target's session open.
            let main = main.downgrade();
            tokio::spawn(async move {
                while let Some(event) = events.recv().await {
                    let Some(main) = main.upgrade() else { break };
                    track_worker(&main, pid, &list, &event.method, &event.params);
                }
            });
        }
        let mut parts = Parts {
            workers,
            children: Vec::new(),
            child_source: children,
            seen_urls: HashSet::new(),
        };
        parts.settle_children().await;
        parts
    }

    /// Waits until every child that starts with the server is in the
    /// baseline: a cluster's port is ready when its first worker listens,
    /// and the others announce their inspectors a moment later (seen here:
    /// a worker missing from the baseline, so never judged). It waits
    /// until announcements stop for `CHILDREN_QUIET` and, under load,
    /// until each child process started with `--inspect` has announced
    /// (two workers of a cluster started more than 300 ms apart on a busy
    /// CI machine). Costs `CHILDREN_QUIET` on a server without children.
    async fn settle_children(&mut self) {
        const CHILDREN_QUIET: Duration = Duration::from_millis(300);
        const CHILDREN_LIMIT: Duration = Duration::from_secs(5);
        const POLL: Duration = Duration::from_millis(50);
        let Some(source) = &self.child_source else {
            return;
        };
        let serving_pid = source.serving_pid;
        let started = Instant::now();
        let mut quiet_since = Instant::now();
        let mut seen = source.children_announced();
        while started.elapsed() < CHILDREN_LIMIT {
            let settled =
                quiet_since.elapsed() >= CHILDREN_QUIET && seen >= inspected_children(serving_pid);
            // Connected to each one announced, or known not to be ours (a
            // child whose port /proc did not show yet is tried again).
            if settled && self.refresh().await {
                return;
            }
            tokio::time::sleep(POLL).await;
            let now = self
                .child_source
                .as_ref()
                .map_or(0, ChildInspectors::children_announced);
            if now != seen {
                seen = now;
                quiet_since = Instant::now();
            }
        }
        self.refresh().await;
    }

    /// Connects to children announced since the last call. True when
    /// every announced inspector is now settled: connected, or known not
    /// to be a child of the server. One whose port /proc does not show yet,
    /// or that refused the connection, is tried again next time.
    pub async fn refresh(&mut self) -> bool {
        let Some(source) = &self.child_source else {
            return true;
        };
        let urls = source.announced.borrow().clone();
        let mut settled = true;
        for url in urls {
            if url == source.main_url || self.seen_urls.contains(&url) {
                continue;
            }
            let pid = match child_pid(&url, source.serving_pid) {
                Holder::Child(pid) => pid,
                Holder::NotAChild => {
                    self.seen_urls.insert(url);
                    continue;
                }
                Holder::NotYetShown => {
                    settled = false;
                    continue;
                }
            };
            let Ok(inspector) = Inspector::connect(&url).await else {
                settled = false;
                continue;
            };
            self.seen_urls.insert(url);
            let script = inspector
                .evaluate("process.argv[1] || ''")
                .await
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            self.children.push(Part {
                id: format!("pid {pid}"),
                kind: IsolateKind::Process,
                pid,
                script,
                inspector,
                session: None,
            });
        }
        settled
    }

    /// Every isolate known now: workers first, then child processes.
    pub fn all(&self) -> Vec<Part> {
        let mut parts = self.workers.lock().expect("workers lock").clone();
        parts.extend(self.children.iter().cloned());
        parts
    }

    /// The session of the isolate named `id`.
    pub fn inspector_of(&self, id: &str) -> Option<Inspector> {
        self.all()
            .into_iter()
            .find(|p| p.id == id)
            .map(|p| p.inspector)
    }
}

/// Processes below the serving one started with an inspector flag on
/// their command line (a cluster's workers, forked children): each will
/// announce its inspector.
fn inspected_children(serving_pid: u32) -> usize {
    crate::platform::procfs::all_pids()
        .into_iter()
        .filter(|pid| {
            *pid != serving_pid && crate::platform::procfs::descends_from(*pid, serving_pid)
        })
        .filter(|pid| crate::platform::procfs::command_line(*pid).contains("--inspect"))
        .count()
}

/// Who holds an announced inspector's port.
enum Holder {
    /// A process descending from the serving one.
    Child(u32),
    /// Someone else (a launcher such as npm, under NODE_OPTIONS).
    NotAChild,
    /// Nobody /proc shows yet.
    NotYetShown,
}

/// The process that holds an announced inspector's port.
fn child_pid(url: &str, serving_pid: u32) -> Holder {
    let Some(port) = crate::process::inspector_port(url) else {
        return Holder::NotAChild;
    };
    let holders = crate::platform::procfs::holders_of(port);
    if holders.is_empty() {
        return Holder::NotYetShown;
    }
    holders
        .into_iter()
        .map(|h| h.pid)
        .find(|pid| crate::platform::procfs::descends_from(*pid, serving_pid))
        .map_or(Holder::NotAChild, Holder::Child)
}

fn track_worker(main: &Inspector, pid: u32, list: &Mutex<Vec<Part>>, method: &str, params: &Value) {
    let session = params.get("sessionId").and_then(Value::as_str);
    match (method, session) {
        ("NodeWorker.attachedToWorker", Some(session)) => {
            let info = params.get("workerInfo").unwrap_or(&Value::Null);
            let text = |k: &str| {
                info.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            let id = format!("worker {}", text("workerId"));
            let part = Part {
                inspector: main.worker_session(session, &id),
                id,
                kind: IsolateKind::Worker,
                pid,
                script: text("url"),
                session: Some(session.to_string()),
            };
            list.lock().expect("workers lock").push(part);
        }
        ("NodeWorker.detachedFromWorker", Some(session)) => {
            list.lock()
                .expect("workers lock")
                .retain(|p| p.session.as_deref() != Some(session));
        }
        _ => {}
    }
}

/// Forces a full collection in `part`.
pub async fn collect(part: &Part) -> Result<(), InspectorError> {
    part.inspector.collect_garbage().await
}

/// Reads `part`'s memory, and the HTTP requests it began serving (a
/// cluster worker serves what its primary accepts). A worker's rss is its
/// process's, already read for the main isolate, so it is left at 0.
pub async fn read(part: &Part) -> Result<(IsolateSample, Option<u64>), InspectorError> {
    let expression = format!(
        "(() => {{ const m = process.memoryUsage(); \
           return [m.rss, m.heapTotal, m.heapUsed, m.external, m.arrayBuffers, {}]; }})()",
        super::served::SERVED_COUNTER
    );
    let value = part.inspector.evaluate(&expression).await?;
    let figure = |i: usize| value.get(i).and_then(Value::as_f64).unwrap_or(0.0) as u64;
    let sample = IsolateSample {
        id: part.id.clone(),
        kind: part.kind,
        pid: part.pid,
        script: part.script.clone(),
        heap_used: figure(2),
        heap_total: figure(1),
        external: figure(3),
        array_buffers: figure(4),
        rss: match part.kind {
            IsolateKind::Worker => 0,
            IsolateKind::Process => figure(0),
        },
    };
    Ok((sample, value.get(5).and_then(Value::as_u64)))
}
