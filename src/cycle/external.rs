//! `--load-cmd`: a cycle's work done by the team's own load tool (k6,
//! autocannon, Artillery, a script) instead of the built-in generator. The
//! command runs through `sh -c` once per cycle, in its own process group
//! (stopped with it if leakcheck is interrupted), with what it needs in its
//! environment; its output goes to a log file the report names, and a
//! non-zero exit fails the cycle. The fit then divides by what the target
//! itself counted as served, since leakcheck did not send the requests.
//! While the command runs, the target's served count is watched: once it
//! has not moved for the stall timeout, the command's process group is
//! stopped and the cycle ends stalled, as the built-in load's does. When
//! the command ends, what it left running (a `setsid` helper that escaped
//! the group) is found by its mark and stopped (`process/sweep.rs`).

use std::process::Stdio;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::CycleObserver;
use super::driver_log::DriverLog;
use super::workload::{CycleSpec, DriverError, Units, Work, WorkError, Workload};
use crate::model::{DriverRun, LoadReport};
use crate::process::sweep::{MARK_VARIABLE, Mark};

/// What `--load-cmd` needs besides the cycle.
#[derive(Debug, Clone)]
pub struct LoadCommand {
    pub command: String,
    /// `http://host:port`, as `LEAKCHECK_URL`.
    pub base_url: String,
    /// Where each cycle's log goes.
    pub log_dir: super::driver_log::LogDir,
}

/// The driver's cycles for one route, as the command's environment
/// names them.
pub struct ExternalDriver {
    pub command: LoadCommand,
    pub route: String,
    /// Requests a measured cycle asks for (`LEAKCHECK_REQUESTS`).
    pub requests: u64,
    pub connections: usize,
    /// The target's inspector, to see that it still serves; `None` for a
    /// target that is not Node (the command then runs to its own end).
    pub watch: Option<crate::inspector::Inspector>,
    /// How long the target may serve nothing while the command runs.
    pub stall_timeout: Duration,
}

/// How long the output of a finished command may take to be read to its end.
const OUTPUT_DRAIN: Duration = Duration::from_secs(2);

/// How often the target's served count is read while the command runs.
const WATCH_EVERY: Duration = Duration::from_millis(250);

#[async_trait]
impl Workload for ExternalDriver {
    fn planned_units(&self) -> Option<u64> {
        Some(self.requests)
    }

    async fn drive(
        &mut self,
        cycle: CycleSpec,
        _observer: &dyn CycleObserver,
    ) -> Result<Work, WorkError> {
        let asked = cycle.units_of(self.requests);
        let this = DriverCycle {
            route: &self.route,
            cycle: cycle.number,
            requests: asked,
            connections: self.connections,
        };
        let stall = self.watch.as_ref().map(|w| (w, self.stall_timeout));
        let (report, run) = drive(&self.command, &this, stall).await?;
        Ok(Work {
            report,
            driver: Some(run),
            units: Units::Served { asked },
        })
    }
}

/// The cycle being driven, as the command's environment names it.
struct DriverCycle<'a> {
    route: &'a str,
    cycle: u32,
    requests: u64,
    connections: usize,
}

/// Runs the command for one cycle and waits for it.
async fn drive(
    command: &LoadCommand,
    cycle: &DriverCycle<'_>,
    stall: Option<(&crate::inspector::Inspector, Duration)>,
) -> Result<(LoadReport, DriverRun), DriverError> {
    let log = command.log_dir.path().join(format!(
        "load-cmd-{}-cycle{}.log",
        crate::private_file::file_label(cycle.route),
        cycle.cycle
    ));
    let log_error = |source| DriverError::Log {
        path: log.clone(),
        source,
    };
    let writer = DriverLog::create(&log).map_err(log_error)?;
    let mark = Mark::new();
    let started = Instant::now();
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(&command.command)
        .env("LEAKCHECK_URL", &command.base_url)
        .env("LEAKCHECK_ROUTE", cycle.route)
        .env("LEAKCHECK_REQUESTS", cycle.requests.to_string())
        .env("LEAKCHECK_CONNECTIONS", cycle.connections.to_string())
        .env("LEAKCHECK_CYCLE", cycle.cycle.to_string())
        .env(MARK_VARIABLE, mark.value())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(DriverError::Spawn)?;
    let copies = [
        child
            .stdout
            .take()
            .map(|s| tokio::spawn(writer.clone().copy(s))),
        child
            .stderr
            .take()
            .map(|s| tokio::spawn(writer.clone().copy(s))),
    ];
    // Interrupted (the future dropped): the whole group goes, not just sh,
    // and so does whatever left the group with `setsid`.
    let mut stop_group = Some(GroupGuard {
        group: child.id(),
        mark: mark.clone(),
    });
    let mut stalled = false;
    let status = match stall {
        None => child.wait().await.map_err(DriverError::Spawn)?,
        Some((target, limit)) => {
            let mut watch = ServedWatch::new(target, limit);
            let mut tick = tokio::time::interval(WATCH_EVERY);
            loop {
                tokio::select! {
                    status = child.wait() => break status.map_err(DriverError::Spawn)?,
                    _ = tick.tick() => if watch.stalled().await {
                        stalled = true;
                        stop_group.take();
                        break child.wait().await.map_err(DriverError::Spawn)?;
                    },
                }
            }
        }
    };
    let duration_s = started.elapsed().as_secs_f64();
    // What outlived the command (a background job, a `setsid` helper still
    // sending) would load the next reading: counted, then stopped by the
    // guard (the group, then everything carrying the mark).
    let outlived = mark.holders().len() as u64;
    drop(stop_group);
    // The output ends with the group; a grandchild that kept a pipe open
    // is gone with it (the guard or the stall stopped the group).
    for copy in copies.into_iter().flatten() {
        let _ = tokio::time::timeout(OUTPUT_DRAIN, copy).await;
    }
    let run = DriverRun {
        command: crate::redact::command(&command.command),
        requests_asked: Some(cycle.requests),
        output_tail: writer.finish(),
        log_kept: command.log_dir.is_kept(),
        log: log.display().to_string(),
        exit: crate::process::exit_status_of(status),
        duration_s,
        outlived,
    };
    // The built-in generator's figures stay empty: the driver's own are in
    // its log, and what the target served is in the cycle.
    let report = LoadReport {
        duration_s,
        stalled,
        ..LoadReport::default()
    };
    Ok((report, run))
}

/// The target's count of requests begun, read while a driver runs.
struct ServedWatch<'a> {
    target: &'a crate::inspector::Inspector,
    limit: Duration,
    last: Option<u64>,
    moved: Instant,
}

impl<'a> ServedWatch<'a> {
    fn new(target: &'a crate::inspector::Inspector, limit: Duration) -> ServedWatch<'a> {
        ServedWatch {
            target,
            limit,
            last: None,
            moved: Instant::now(),
        }
    }

    /// Whether the count has not moved for the limit. A target that does
    /// not answer within a tick has not moved either.
    async fn stalled(&mut self) -> bool {
        let read = self.target.evaluate(crate::probe::SERVED_COUNTER);
        let count = match tokio::time::timeout(WATCH_EVERY * 4, read).await {
            Ok(Ok(value)) => value.as_u64(),
            _ => None,
        };
        if count.is_some() && count != self.last {
            self.last = count;
            self.moved = Instant::now();
        }
        self.moved.elapsed() >= self.limit
    }
}

/// Kills the driver's process group, and every process that carries its
/// mark, when dropped (normal end: the group is gone already and the
/// signal finds nothing; a stalled or interrupted driver: at once).
struct GroupGuard {
    group: Option<u32>,
    mark: Mark,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.group {
            // SAFETY: kill(2) on the process group this module created.
            unsafe {
                libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
            }
        }
        self.mark.stop_holders();
    }
}
