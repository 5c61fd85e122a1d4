//! Many processes, one watch: `--pid P --pid Q`, a primary with its Node
//! workers, or `--all`. Each process is watched exactly as `watch --pid`
//! watches one (`Watch`, in a task of its own, with its own checkpoint),
//! and the fleet around them:
//!
//! - looks for processes every `LOOK_EVERY` (`discover.rs`), so a worker
//!   a cluster forks later, or a service restarted under systemd, is
//!   picked up;
//! - attaches one at a time (SIGUSR1 opens each inspector on the
//!   process's debug port; two signals at once on a shared 9229 race),
//!   and names a process whose port another holds instead of failing;
//! - reports a process whose watch ended because it exited as `exited`,
//!   with its readings and verdict, and `memory-exhausted` when its own
//!   readings say it ran out of memory (`exited.rs`);
//! - lists them all in one result, leaks first, and keeps memory bounded
//!   in an indefinite watch (the last `MOST_ENDED` ended processes; the
//!   `--metrics` board drops a process a quarter hour after it ended).
//!
//! Ctrl-C, `-d` or (with `--until-decided`) every process decided ends
//! it: each task then leaves its process as it found it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::Watch;
use super::discover;
use super::metrics::Board;
use crate::model::{RouteResult, RunResult, Verdict, VerdictKind};
use crate::report::progress::Progress;
use crate::settings::{Selection, WatchProps, WatchTarget};

/// How often processes are looked for and the status shown.
const LOOK_EVERY: Duration = Duration::from_secs(2);
/// How long the watches may take to end by themselves at `-d` (their
/// last profile and the naming of sites) before they are stopped.
const END_GRACE: Duration = Duration::from_secs(30);
/// Ended watches kept for the report: an indefinite `--all` over
/// short-lived processes must not keep every one's readings for ever.
const MOST_ENDED: usize = 256;
/// How long one attach may take before the next process is tried.
const ATTACH_WAIT: Duration = Duration::from_secs(15);
/// One process being watched.
struct Member {
    task: JoinHandle<RunResult>,
}

#[derive(Default)]
pub struct Fleet {
    members: BTreeMap<u32, Member>,
    /// Watches that ended, by pid, and in the order they ended.
    ended: BTreeMap<u32, RunResult>,
    ended_order: std::collections::VecDeque<u32>,
    /// Ended watches dropped past `MOST_ENDED`.
    forgotten: usize,
    /// Processes that could not be attached, and why (tried again while
    /// the watch runs: a port may free).
    skipped: BTreeMap<u32, String>,
    stop: CancellationToken,
    board: Board,
    server: Option<JoinHandle<()>>,
}

impl Fleet {
    /// Serves `--metrics`, then looks for processes and watches them until
    /// the schedule ends.
    pub async fn run(
        &mut self,
        props: &WatchProps,
        selection: &Selection,
        result: &mut RunResult,
        progress: &Progress,
    ) -> anyhow::Result<()> {
        if let Some(metrics) = &props.metrics {
            self.server = Some(super::endpoint::start(metrics, &self.board, progress).await?);
        }
        let started = Instant::now();
        let deadline = props.duration.map(|d| started + d);
        loop {
            // A process picked up later is watched for what is left of -d.
            let mut member_props = props.clone();
            member_props.duration = deadline.map(|d| {
                d.saturating_duration_since(Instant::now())
                    .max(Duration::from_secs(1))
            });
            self.take_new(&member_props, selection, result, progress)
                .await;
            self.collect_ended(progress).await;
            progress.live(&self.status(started.elapsed()));
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(());
            }
            // Without --all, the watch is of the processes named: done when
            // every one has ended (each by its own -d, decision or exit).
            let nothing_left = self.members.is_empty() && !selection.all;
            if nothing_left && (props.until_decided || !self.ended.is_empty()) {
                return Ok(());
            }
            if nothing_left && self.skipped.is_empty() && self.ended.is_empty() {
                anyhow::bail!("no Node process to watch: check the --pid values");
            }
            tokio::time::sleep(LOOK_EVERY).await;
        }
    }

    /// Starts a watch of every selected process not yet watched, one
    /// attach at a time.
    async fn take_new(
        &mut self,
        props: &WatchProps,
        selection: &Selection,
        template: &RunResult,
        progress: &Progress,
    ) {
        for pid in discover::select(selection) {
            if self.members.contains_key(&pid) || self.ended.contains_key(&pid) {
                continue;
            }
            if let Some(why) = discover::port_conflict(pid) {
                if self.skipped.insert(pid, why.clone()).is_none() {
                    progress.say(&format!("pid {pid}: not attached: {why}"));
                }
                continue;
            }
            self.skipped.remove(&pid);
            progress.say(&format!(
                "watching pid {pid} ({})",
                crate::platform::procfs::command_line(pid)
            ));
            let (attached, told) = tokio::sync::oneshot::channel();
            let task = tokio::spawn(watch_one(
                pid,
                props.clone(),
                template.clone(),
                self.board.clone(),
                attached,
                self.stop.clone(),
            ));
            self.members.insert(pid, Member { task });
            // Attached, failed, or slow: the next signal waits for this one.
            let _ = tokio::time::timeout(ATTACH_WAIT, told).await;
        }
    }

    /// Moves the watches that ended into `ended`, saying how.
    async fn collect_ended(&mut self, progress: &Progress) {
        let done: Vec<u32> = self
            .members
            .iter()
            .filter(|(_, m)| m.task.is_finished())
            .map(|(pid, _)| *pid)
            .collect();
        for pid in done {
            let member = self.members.remove(&pid).expect("listed above");
            let result = member.task.await.unwrap_or_default();
            self.board.down(pid);
            if let Some(route) = result.routes.first() {
                let exited = route.watch.as_ref().and_then(|w| w.exited.as_ref());
                let verdict = route
                    .verdict
                    .as_ref()
                    .map_or("no verdict", |v| v.kind.name());
                match exited {
                    Some(exit) => progress.say(&format!("pid {pid}: {}: {verdict}", exit.reason)),
                    None => progress.say(&format!("pid {pid}: watch ended: {verdict}")),
                }
            }
            self.ended.insert(pid, result);
            self.ended_order.push_back(pid);
            while self.ended_order.len() > MOST_ENDED {
                if let Some(oldest) = self.ended_order.pop_front() {
                    self.ended.remove(&oldest);
                    self.forgotten += 1;
                }
            }
        }
    }

    /// "watch 2 min: 3 processes: pid 41 retention, pid 42 no-retention…"
    fn status(&self, elapsed: Duration) -> String {
        let board: Vec<String> = self
            .members
            .keys()
            .map(|pid| {
                let verdict = self.board.verdict(*pid).unwrap_or("waiting");
                format!("pid {pid} {verdict}")
            })
            .collect();
        format!(
            "watch {}: {} watched{}{}",
            crate::units::human_duration(elapsed.as_secs_f64()),
            self.members.len(),
            if board.is_empty() {
                String::new()
            } else {
                format!(": {}", board.join(", "))
            },
            match self.ended.len() {
                0 => String::new(),
                n => format!("; {n} ended"),
            }
        )
    }

    /// Stops every watch still running (each leaves its process as it
    /// found it), and puts one route per process in `result`, leaks first.
    pub async fn finish(&mut self, result: &mut RunResult, progress: &Progress, interrupted: bool) {
        // At -d each watch ends by itself (its last profile, its sites);
        // after Ctrl-C, or past the grace, they are stopped.
        let running = std::mem::take(&mut self.members);
        let grace_ends = Instant::now()
            + if interrupted {
                Duration::ZERO
            } else {
                END_GRACE
            };
        let mut stopping = Vec::new();
        for (pid, mut member) in running {
            let left = grace_ends.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, &mut member.task).await {
                Ok(ended) => {
                    self.ended.insert(pid, ended.unwrap_or_default());
                }
                Err(_) => stopping.push((pid, member)),
            }
        }
        self.stop.cancel();
        for (pid, member) in stopping {
            let ended = member.task.await.unwrap_or_default();
            self.ended.insert(pid, ended);
        }
        if let Some(server) = self.server.take() {
            server.abort();
        }
        let mut routes: Vec<RouteResult> = Vec::new();
        for (pid, ended) in std::mem::take(&mut self.ended) {
            let mut route = ended.routes.into_iter().next().unwrap_or_default();
            route.pid = route.pid.or(Some(pid));
            route.route = format!("pid {pid}");
            if let Some(error) = ended.outcome.error.filter(|_| route.cycles.is_empty()) {
                route.verdict = Some(not_watched(format!("the watch failed: {error}")));
            }
            routes.push(route);
        }
        for (pid, why) in std::mem::take(&mut self.skipped) {
            routes.push(RouteResult {
                route: format!("pid {pid}"),
                pid: Some(pid),
                verdict: Some(not_watched(format!("not attached: {why}"))),
                ..RouteResult::default()
            });
        }
        routes.sort_by_key(|r| (rank(r), r.pid));
        if routes.is_empty() {
            progress.say("no Node process was found to watch");
        }
        if self.forgotten > 0 {
            progress.say(&format!(
                "{} processes that ended earlier are not in the report (the last {MOST_ENDED} \
                 are; every one's readings are in its checkpoint)",
                self.forgotten
            ));
        }
        result.routes = routes;
    }
}

/// Leaks first, then the undecided, then the clean.
fn rank(route: &RouteResult) -> u8 {
    match route.verdict.as_ref().map(|v| v.kind) {
        Some(kind) if kind.is_leak() => 0,
        Some(VerdictKind::Inconclusive) | None => 1,
        Some(_) => 2,
    }
}

fn not_watched(summary: String) -> Verdict {
    Verdict {
        kind: VerdictKind::Inconclusive,
        action: "Watch it on its own (`leakcheck watch --pid PID`) once the reason is gone.".into(),
        summary,
        ..Verdict::default()
    }
}

/// One process's watch, as `watch --pid` runs it, until it ends by itself
/// or the fleet stops it.
async fn watch_one(
    pid: u32,
    mut props: WatchProps,
    mut result: RunResult,
    board: Board,
    attached: tokio::sync::oneshot::Sender<()>,
    stop: CancellationToken,
) -> RunResult {
    props.target = WatchTarget::Pid(pid);
    let progress = Progress::new(true);
    let mut watch = Watch {
        board: Some(board),
        attached_signal: Some(attached),
        ..Watch::default()
    };
    let mut launched = None;
    let (faults, _) = tokio::sync::watch::channel(None::<String>);
    let watched = tokio::select! {
        ended = watch.run(&props, &mut launched, faults, &mut result, &progress) => Some(ended),
        () = stop.cancelled() => None,
    };
    watch
        .finish(&props, &mut result, &progress, watched.is_none())
        .await;
    let started = watch.started_at();
    if let Some(Err(error)) = watched {
        if discover::is_alive(pid) {
            result.outcome.error = Some(format!("{error:#}"));
        } else if let Some(route) = result.routes.first_mut() {
            super::exited::exited(route, started);
        }
    }
    result
}
