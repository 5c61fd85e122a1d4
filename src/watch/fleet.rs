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
//!   with its readings and verdict, and `memory-exhausted` when its last
//!   reading was at its heap limit;
//! - lists them all in one result, leaks first.
//!
//! Ctrl-C, `-d` or (with `--until-decided`) every process decided ends
//! it: each task then leaves its process as it found it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::Watch;
use super::discover;
use super::metrics::{self, Board};
use crate::model::{
    Finding, FindingKind, RouteResult, RunResult, Series, Verdict, VerdictKind, WatchExit,
};
use crate::report::progress::Progress;
use crate::settings::{Selection, WatchProps, WatchTarget};

/// How often processes are looked for and the status shown.
const LOOK_EVERY: Duration = Duration::from_secs(2);
/// How long the watches may take to end by themselves at `-d` (their
/// last profile and the naming of sites) before they are stopped.
const END_GRACE: Duration = Duration::from_secs(30);
/// How long one attach may take before the next process is tried.
const ATTACH_WAIT: Duration = Duration::from_secs(15);
/// A process that exits with its last after-GC heap above this share of
/// V8's heap limit ran out of memory: V8 gives up near the limit (its
/// last-resort collections free less and less), and a process that ends
/// by itself or by a deploy is nowhere near it.
const NEAR_LIMIT: f64 = 0.85;
/// Or it exits while its growth was projected to its limit within this:
/// the last readings before a death are often lost (drained every 2 s,
/// the process gone before the drain), so the last one seen can be far
/// below the limit while the pace says it was seconds away. Measured: a
/// 48 MB old space at ~2 MB/s died with its last reading at 26 % of the
/// limit, projected 36 s away.
const PROJECTED_WITHIN_S: f64 = 600.0;

/// One process being watched.
struct Member {
    task: JoinHandle<RunResult>,
}

#[derive(Default)]
pub struct Fleet {
    members: BTreeMap<u32, Member>,
    /// Watches that ended, by pid.
    ended: BTreeMap<u32, RunResult>,
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
                crate::procfs::command_line(pid)
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
        }
    }

    /// "watch 2 min: 3 processes: pid 41 retention, pid 42 no-retention…"
    fn status(&self, elapsed: Duration) -> String {
        let board: Vec<String> = self
            .members
            .keys()
            .map(|pid| {
                let verdict = self
                    .board
                    .entry(*pid)
                    .and_then(|e| e.route.verdict.map(|v| v.kind.name()))
                    .unwrap_or("waiting");
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
            exited(route, started);
        }
    }
    result
}

/// A watched process is gone: say so, and judge whether it ran out of
/// memory from its own last reading against its heap limit.
fn exited(route: &mut RouteResult, watched_for: Option<Duration>) {
    let after_s = watched_for.map_or(0.0, |d| d.as_secs_f64());
    let limit = route.limits.and_then(|l| l.heap_bytes);
    let last = route.cycles.last().map(|c| c.after_gc.heap_used);
    let near_limit = match (last, limit) {
        (Some(last), Some(limit)) if limit > 0 => Some(last as f64 / limit as f64),
        _ => None,
    };
    let reason = format!(
        "exited after {} watched",
        crate::units::human_duration(after_s)
    );
    if let Some(watch) = route.watch.as_mut() {
        watch.exited = Some(WatchExit {
            after_s,
            reason: reason.clone(),
            heap_share_of_limit: near_limit,
        });
    }
    // A projection exists only for a trend clear of its floor, decided or
    // not yet (a process that dies fast may die before the decision).
    let projected_s = route
        .watch
        .as_ref()
        .and_then(|w| w.reaches.as_ref())
        .map(|r| r.at_unix_s as f64 - metrics::unix_now());
    let by_pace = projected_s.is_some_and(|s| s < PROJECTED_WITHIN_S);
    let at_limit = near_limit.is_some_and(|s| s >= NEAR_LIMIT);
    if !at_limit && !by_pace {
        if let Some(verdict) = route.verdict.as_mut() {
            verdict.findings.push(Finding::new(
                FindingKind::TargetExited,
                format!("{reason}; the verdict is on the readings taken before"),
            ));
        }
        return;
    }
    let (last, limit) = (last.unwrap_or(0), limit.unwrap_or(0));
    let share = near_limit.unwrap_or(0.0);
    let mut verdict = route.verdict.take().unwrap_or_default();
    let evidence = match at_limit {
        true => "it ran out of memory".to_string(),
        false => format!(
            "its heap was projected to reach the limit {} later at the pace it grew: it most \
             likely ran out of memory",
            crate::units::human_duration(projected_s.unwrap_or(0.0).max(0.0))
        ),
    };
    verdict.kind = VerdictKind::MemoryExhausted;
    verdict.fails_gate = true;
    verdict.figure.metric = Series::HEAP_USED;
    verdict.summary = format!(
        "the process {reason} with its last after-GC heapUsed read at {:.1} MB, {:.0} % of its \
         {:.1} MB heap limit; {evidence} ({})",
        last as f64 / crate::units::MB,
        share * 100.0,
        limit as f64 / crate::units::MB,
        verdict.summary
    );
    verdict.action = format!(
        "A leak ended this process. {}",
        match route
            .diagnosis
            .as_ref()
            .and_then(|d| d.allocation_sites.first())
        {
            Some(site) => format!(
                "The site that grew while watched: `{}` at {}:{}; fix what it keeps.",
                site.function, site.url, site.line
            ),
            None => "Watch its replacement with `--snapshot`, or check the route with \
                     `leakcheck run`, to name what holds the memory."
                .into(),
        }
    );
    route.verdict = Some(verdict);
}
