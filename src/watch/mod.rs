//! `leakcheck watch`: the method's judgement on a live process under its
//! own traffic. A schedule without work: leakcheck sends no request and,
//! by default, forces no collection; readings arrive when the target's own
//! major collections happen (`observer.rs`), the soak's time trend judges
//! them (`verdict::watch`), and V8's sampling heap profiler, at a coarse
//! interval, names the allocation sites that grew (`sites.rs`). A heap
//! snapshot is taken only when asked and when the memory left allows it
//! (`evidence.rs`).
//!
//! The story of one watch: attach (`connect.rs`), install the observer and
//! the profiler, then every `DRAIN_EVERY` drain the readings into the
//! route (`record.rs`), append them to the NDJSON checkpoint
//! (`checkpoint.rs`), force a collection when `--force-gc-every` is due
//! and the last pause allows, read a profile every `PROFILE_EVERY`, judge,
//! and show one status line; until `-d`, a decision (`--until-decided`) or
//! Ctrl-C. `finish` then runs whatever ended it: a last drain, the
//! evidence, and leaving the target as it was.
//!
//! What the watch holds in the target lives in `Watch`, outside the future
//! the frame may cancel, so an interrupted watch still reports and leaves
//! cleanly.

pub mod checkpoint;
pub mod connect;
pub mod discover;
pub mod endpoint;
mod evidence;
mod exited;
mod finish;
pub mod fleet;
mod forcing;
pub mod metrics;
pub mod observer;
mod record;
pub mod sites;
mod status;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use serde_json::json;

use crate::model::{RouteResult, RunResult, VerdictKind};
use crate::process::Target;
use crate::report::progress::Progress;
use crate::settings::WatchProps;
use checkpoint::Checkpoint;
use connect::Attached;
use forcing::URGENT_HOURS;
use observer::{Drained, Observer};
use record::Tally;
use sites::SiteSampler;

/// How often the ring is drained and the verdict judged again: often
/// enough for a live line, rare enough to cost nothing (one small
/// `Runtime.evaluate`).
const DRAIN_EVERY: Duration = Duration::from_secs(2);
/// Sampling profiles read over a watch of known length: each read is a
/// forced full collection, so few; each catches the short-lived objects
/// alive at that moment, so a third's average needs three or four.
const PROFILES_PER_WATCH: u32 = 12;
/// Profiles are read at most this often...
const PROFILE_EVERY_AT_LEAST: Duration = Duration::from_secs(10);
/// ...and this often in a watch without `-d`.
const PROFILE_EVERY_UNBOUNDED: Duration = Duration::from_secs(60);

/// How often the sampling profile is read.
fn profile_every(duration: Option<Duration>) -> Duration {
    match duration {
        Some(d) => (d / PROFILES_PER_WATCH).max(PROFILE_EVERY_AT_LEAST),
        None => PROFILE_EVERY_UNBOUNDED,
    }
}
/// How long each step after the watch may take (the last drain, naming
/// the sites): a Ctrl-C is answered within seconds, whatever the target.
const FINISH_STEP: Duration = Duration::from_secs(10);
/// `--until-decided` calls a heap flat only over at least this long: the
/// floor a flat trend is held to shrinks with the span, and a slow leak
/// reads flat against the floor of a short one.
const SHORTEST_FLAT_WATCH: Duration = Duration::from_secs(60);
/// How often a watch of Deno or Bun forces the collection each reading
/// follows, when `--force-gc-every` is not given: neither runtime tells
/// a listener about its own collections. The urgent pace
/// (`forcing::URGENT_FORCE_EVERY`), so a minute gives the five readings
/// the earliest decision needs.
const RUNTIME_FORCE_EVERY: Duration = Duration::from_secs(10);

/// What one watch holds in the target.
#[derive(Default)]
pub struct Watch {
    attached: Option<Attached>,
    observer: Option<Observer>,
    sampler: Option<SiteSampler>,
    checkpoint: Option<Checkpoint>,
    /// When the watch began, as an instant and as Unix seconds.
    started: Option<(Instant, f64)>,
    /// The hours left to the limit at the pace so far, when under
    /// `URGENT_HOURS` (`record::hours_left`), judged after each drain.
    urgent: Option<f64>,
    /// When a collection was last forced over `--max-pause`.
    last_over_pause: Option<Instant>,
    /// `--until-decided` stopped on a decision: it is not judged again.
    decided: bool,
    tally: Tally,
    /// Where each judgement is published for `--metrics`.
    pub board: Option<metrics::Board>,
    /// Told once the attach is over, whether it worked or not: a fleet
    /// signals its next process only then.
    pub attached_signal: Option<tokio::sync::oneshot::Sender<()>>,
    /// The sampler's profile count when the board's site was last named.
    published_profiles: usize,
    /// The forced collections' interval when none was asked and the
    /// runtime publishes no collections of its own (Deno, Bun).
    force_by_default: Option<Duration>,
}

impl Watch {
    /// Attaches, installs the observer and the profiler, and watches until
    /// the schedule ends. Writes into `result` as it goes.
    pub async fn run(
        &mut self,
        props: &WatchProps,
        launched: &mut Option<Target>,
        faults: tokio::sync::watch::Sender<Option<String>>,
        result: &mut RunResult,
        progress: &Progress,
    ) -> anyhow::Result<()> {
        let attached = connect::attach(
            &props.target,
            props.allow_remote_inspector,
            launched,
            faults,
        )
        .await;
        if let Some(signal) = self.attached_signal.take() {
            let _ = signal.send(());
        }
        let attached = attached?;
        result.target.pid = attached.pid;
        result.target.node_version = attached.node_version.clone();
        let runtime = attached.runtime.runtime;
        if runtime != crate::runtime::Runtime::Node {
            result.target.runtime = Some(attached.runtime.label());
            result.target.runtime_gaps = runtime.gaps();
            if props.force_gc_every.is_none() {
                self.force_by_default = Some(RUNTIME_FORCE_EVERY);
            }
        }
        result.target.cwd = attached.cwd.clone();
        result.target.probe = Some(crate::model::ProbeKind::Inspector);
        let inspector = attached.inspector.clone();
        let settings = result.settings.watch.clone();
        let route = route_of(result);
        route.pid = attached.pid;
        route.route = match attached.pid {
            Some(pid) => format!("pid {pid}"),
            None => "the watched process".into(),
        };
        route.limits = Some(
            crate::probe::limits::limits_through(&inspector, attached.pid, props.memory_limit)
                .await,
        );
        let path = props.checkpoint_path(attached.pid);
        let mut checkpoint = Checkpoint::open(&path)?;
        // A watch restarted on the same process continues its series: the
        // readings its checkpoint holds within the window come first.
        let resumed = match attached.pid {
            Some(pid) => checkpoint::earlier_readings(&path, pid, props.window, unix_now()),
            None => Vec::new(),
        };
        checkpoint.append(
            "start",
            &json!({ "pid": attached.pid, "node_version": attached.node_version,
                     "limits": route.limits, "settings": settings }),
        )?;
        route.watch = Some(crate::model::WatchResult {
            checkpoint: Some(path.display().to_string()),
            ..Default::default()
        });
        self.checkpoint = Some(checkpoint);
        self.attached = Some(attached);
        self.observer = Some(Observer::install(&inspector).await?);
        if props.sites && inspector.dialect.has_heap_profiler() {
            self.sampler = Some(SiteSampler::start(&inspector, props.sample_interval).await?);
        }
        let now_unix = unix_now();
        let started_unix = resumed
            .first()
            .map_or(now_unix, |r| (r.at_ms / 1000.0).min(now_unix));
        self.started = Some((Instant::now(), started_unix));
        for reading in &resumed {
            record::add_reading(route_of(result), reading, started_unix);
        }
        if !resumed.is_empty() {
            progress.say(&format!(
                "continuing the series of {}: {} readings from its checkpoint",
                route_of(result).route,
                resumed.len()
            ));
        }
        let version = result.target.node_version.clone();
        let when = match self.force_by_default {
            Some(every) => format!(
                "{} publishes no collections of its own: a collection is forced every {} s for \
                 each reading (--force-gc-every sets another pace)",
                runtime.name(),
                every.as_secs()
            ),
            None => "readings at its own major collections".into(),
        };
        let what = match runtime {
            crate::runtime::Runtime::Node => {
                format!(
                    "Node {}",
                    version.as_deref().unwrap_or("of unknown version")
                )
            }
            _ => self.attached_label(),
        };
        progress.say(&format!(
            "watching {} ({what}): {when}, appended to {}; Ctrl-C stops and reports",
            route_of(result).route,
            path.display()
        ));
        self.watch_loop(props, result, progress).await
    }

    async fn watch_loop(
        &mut self,
        props: &WatchProps,
        result: &mut RunResult,
        progress: &Progress,
    ) -> anyhow::Result<()> {
        let (started, _) = self.started.expect("set before the loop");
        let deadline = props.duration.map(|d| started + d);
        let mut next_force = self.asked_force(props).map(|every| started + every);
        let every_profile = profile_every(props.duration);
        let mut next_profile = started + every_profile;
        // A log gets a status line per new reading, a terminal a live one.
        let mut shown = usize::MAX;
        loop {
            let mut wake = Instant::now() + DRAIN_EVERY;
            for moment in [deadline, next_force].into_iter().flatten() {
                wake = wake.min(moment);
            }
            tokio::time::sleep_until(wake.into()).await;
            if let Some(due) = next_force.filter(|due| Instant::now() >= *due) {
                self.force(props, progress).await?;
                next_force = self
                    .force_every(props)
                    .map(|every| due.max(Instant::now()) + every);
            }
            self.drain_into(props, result).await?;
            let was_urgent = self.urgent.is_some();
            self.urgent = record::hours_left(route_of(result)).filter(|h| *h < URGENT_HOURS);
            if let Some(every) = self.force_every(props) {
                let soonest = Instant::now() + every;
                if self.urgent.is_some() && !was_urgent {
                    progress.say(&format!(
                        "forcing a collection every {}: {}",
                        crate::units::human_duration(every.as_secs_f64()),
                        self.urgency_text()
                    ));
                }
                if next_force.is_none_or(|at| at > soonest) {
                    next_force = Some(soonest);
                }
            }
            // A process that just turned urgent may be decided within
            // seconds, before the first profile is due: one read now is
            // the early third the sites that grew are named against.
            let newly_urgent = self.urgent.is_some() && !was_urgent;
            if Instant::now() >= next_profile || (newly_urgent && self.tally.profiles == 0) {
                self.profile(props, progress).await;
                next_profile = Instant::now() + every_profile;
            }
            let route = route_of(result);
            if route.cycles.len() != shown || progress.is_interactive() {
                shown = route.cycles.len();
                progress.live(&status::line(route, started.elapsed()));
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(());
            }
            if props.until_decided && decided(route, started.elapsed()) {
                self.decided = true;
                progress.say(&format!(
                    "decided after {}: {}",
                    crate::units::human_duration(started.elapsed().as_secs_f64()),
                    route.verdict.as_ref().map_or("", |v| v.kind.name())
                ));
                return Ok(());
            }
        }
    }

    /// Drains the readings taken since the last drain into the route and
    /// the checkpoint, and judges again.
    async fn drain_into(
        &mut self,
        props: &WatchProps,
        result: &mut RunResult,
    ) -> anyhow::Result<()> {
        let (Some(observer), Some((started, started_unix))) =
            (self.observer.as_mut(), self.started)
        else {
            return Ok(());
        };
        let drained: Drained = tokio::time::timeout(props.inspector_timeout, observer.drain())
            .await
            .map_err(|_| {
                anyhow::anyhow!(
                    "the watched process did not answer its inspector within {} s (a blocked \
                     event loop); the readings so far are kept (--inspector-timeout sets the limit)",
                    props.inspector_timeout.as_secs()
                )
            })?
            .context("the watched process stopped answering its inspector")?;
        self.tally.dropped = drained.dropped;
        let route = route_of(result);
        for reading in &drained.readings {
            if reading.forced {
                self.tally.forced += 1;
            } else {
                self.tally.natural += 1;
                if self.tally.forced == 0 {
                    self.tally.last_full_pause_ms = Some(reading.pause_ms);
                }
            }
            record::add_reading(route, reading, started_unix);
            if let Some(checkpoint) = self.checkpoint.as_mut() {
                checkpoint.append("reading", reading)?;
            }
        }
        if let Some(window) = props.window {
            record::keep_window(route, window);
        }
        let elapsed_s = started.elapsed().as_secs_f64();
        // The fits are pairwise (quadratic in the readings): judged again
        // only when a reading came, the counts kept current every drain.
        // Once `--until-decided` has stopped on a decision, the decision
        // stands: the readings after it (the last drain, the final
        // profile's forced collection, lower than the natural ones by
        // their floating garbage) are kept and shown but not judged, as a
        // sequential test's stop is not undone by the data that overran
        // it (a steep leak decided at 12 s read `inconclusive` once its
        // last forced reading widened the spread).
        match (drained.readings.is_empty() || self.decided) && route.verdict.is_some() {
            true => record::count(route, &self.tally, elapsed_s),
            false => record::judge_route(
                route,
                &self.tally,
                self.asked_force(props),
                elapsed_s,
                unix_now(),
            ),
        }
        self.publish(route, drained.readings.last().map(|r| r.at_ms / 1000.0));
        if !drained.readings.is_empty()
            && let (Some(checkpoint), Some(verdict)) = (self.checkpoint.as_mut(), &route.verdict)
        {
            checkpoint.append(
                "status",
                &json!({ "elapsed_s": started.elapsed().as_secs_f64(), "readings": route.cycles.len(),
                         "verdict": verdict.kind, "summary": verdict.summary,
                         "projection": route.watch.as_ref().map(|w| &w.projection) }),
            )?;
        }
        Ok(())
    }

    /// How long it has watched, once it began.
    pub fn started_at(&self) -> Option<Duration> {
        self.started.map(|(at, _)| at.elapsed())
    }

    /// Puts the route as judged now on the `--metrics` board.
    fn publish(&mut self, route: &RouteResult, last_reading_unix_s: Option<f64>) {
        let (Some(board), Some(pid)) = (&self.board, self.attached.as_ref().and_then(|a| a.pid))
        else {
            return;
        };
        // The sites that grew change only with a new profile (one a
        // minute), the command line never: neither is read every drain.
        let site = match &self.sampler {
            Some(sampler) if sampler.profiles() != self.published_profiles => {
                self.published_profiles = sampler.profiles();
                Some(sampler.grown(1).into_iter().next())
            }
            _ => None,
        };
        board.update(pid, |entry| {
            entry.route = route.clone();
            entry.up = true;
            if entry.command.is_empty() {
                entry.command = crate::platform::procfs::command_line(pid);
            }
            if last_reading_unix_s.is_some() {
                entry.last_reading_unix_s = last_reading_unix_s;
            }
            if let Some(Some(site)) = site {
                entry.site = Some(site);
            }
        });
    }
}

/// Whether `--until-decided` may stop: a leak, or a flat heap over a
/// watch long enough that its floor means something.
fn decided(route: &RouteResult, elapsed: Duration) -> bool {
    match route.verdict.as_ref().map(|v| v.kind) {
        Some(VerdictKind::Inconclusive) | None => false,
        Some(VerdictKind::NoRetention) => elapsed >= SHORTEST_FLAT_WATCH,
        Some(_) => true,
    }
}

/// The watch's one route.
fn route_of(result: &mut RunResult) -> &mut RouteResult {
    if result.routes.is_empty() {
        result.routes.push(RouteResult::default());
    }
    &mut result.routes[0]
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
