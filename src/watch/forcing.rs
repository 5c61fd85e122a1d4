//! Forced collections in a watch: `--force-gc-every`, the sampling
//! profile's reads (each a full collection), and the rule that bounds
//! them: none once a full collection paused the target longer than
//! `--max-pause`, unless the process is projected to reach its limit
//! within the hour, when a pause now is cheaper than the crash.

use std::time::{Duration, Instant};

use super::Watch;
use crate::report::progress::Progress;
use crate::settings::WatchProps;

/// A process projected to reach its limit within this many hours is
/// urgent: collections are forced (`URGENT_FORCE_EVERY`) so that the
/// readings come in time to decide, over `--max-pause` if need be.
pub(super) const URGENT_HOURS: f64 = 1.0;
/// How often an urgent watch forces a collection: with `-d 60s` the
/// sampling profile's reads (each a collection) come every 10 s too, so
/// a minute gives the five readings the sequential rule's earliest look
/// needs (`verdict::watch::early_margin`) even when the process's own
/// major collections have become rare, as they do in a heap that grows.
const URGENT_FORCE_EVERY: Duration = Duration::from_secs(10);

impl Watch {
    /// One forced collection (`--force-gc-every`), unless the last full
    /// collection paused the target longer than `--max-pause`.
    pub(super) async fn force(
        &mut self,
        props: &WatchProps,
        progress: &Progress,
    ) -> anyhow::Result<()> {
        if !self.pause_allows(props, progress) {
            return Ok(());
        }
        let Some(observer) = self.observer.clone() else {
            return Ok(());
        };
        self.forced_window(async { observer.collect().await.map(drop) })
            .await
    }

    /// Reads the sampling profile, which is a forced full collection too
    /// (V8 collects before it reads, so that dead objects' samples go):
    /// under the same `--max-pause` rule, recorded as a forced reading. A
    /// failure costs only the evidence.
    pub(super) async fn profile(&mut self, props: &WatchProps, progress: &Progress) {
        if self.sampler.is_none() || !self.pause_allows(props, progress) {
            return;
        }
        let Some((started, _)) = self.started else {
            return;
        };
        // Out of `self` for the window, which borrows it; put back below.
        let Some(mut sampler) = self.sampler.take() else {
            return;
        };
        let at_s = started.elapsed().as_secs_f64();
        let limit = props.inspector_timeout;
        let read = self
            .forced_window(async {
                match tokio::time::timeout(limit, sampler.checkpoint(at_s)).await {
                    Ok(result) => result,
                    Err(_) => Err(crate::inspector::InspectorError::Timeout {
                        method: "HeapProfiler.getSamplingProfile".into(),
                        seconds: limit.as_secs(),
                    }),
                }
            })
            .await;
        if read.is_ok() {
            self.tally.profiles = sampler.profiles() as u32;
        }
        self.sampler = Some(sampler);
    }

    /// `--force-gc-every`, or the runtime's default pace (Deno, Bun).
    pub(super) fn asked_force(&self, props: &WatchProps) -> Option<Duration> {
        props.force_gc_every.or(self.force_by_default)
    }

    /// "Deno 2.9.6", for the watch's first line.
    pub(super) fn attached_label(&self) -> String {
        self.attached
            .as_ref()
            .map_or_else(String::new, |a| a.runtime.label())
    }

    /// How often collections are forced: `--force-gc-every`, or while
    /// the process is urgent `URGENT_FORCE_EVERY` (the sooner of the two).
    pub(super) fn force_every(&self, props: &WatchProps) -> Option<Duration> {
        let urgent = self.urgent.map(|_| URGENT_FORCE_EVERY);
        match (self.asked_force(props), urgent) {
            (Some(asked), Some(urgent)) => Some(asked.min(urgent)),
            (asked, urgent) => asked.or(urgent),
        }
    }

    /// "at the pace its heap grows it reaches its limit in about 13 min".
    pub(super) fn urgency_text(&self) -> String {
        let left = self.urgent.map_or(String::new(), |hours| {
            crate::units::human_duration(hours * 3600.0)
        });
        format!(
            "at the pace its heap grows the process reaches its limit in about {left}, so the \
             readings cannot wait for its own collections"
        )
    }

    /// Whether a collection may be forced: not once the last full one
    /// paused the target longer than `--max-pause` (said once), unless
    /// the process is projected to run out within `URGENT_HOURS`: then
    /// once per `URGENT_FORCE_EVERY`, said each time, since a pause now
    /// is cheaper than the crash.
    fn pause_allows(&mut self, props: &WatchProps, progress: &Progress) -> bool {
        let limit_ms = props.max_pause.as_secs_f64() * 1000.0;
        let Some(pause) = self.tally.last_full_pause_ms.filter(|p| *p > limit_ms) else {
            return true;
        };
        let rested = self
            .last_over_pause
            .is_none_or(|at| at.elapsed() >= URGENT_FORCE_EVERY);
        if self.urgent.is_some() && rested {
            progress.say(&format!(
                "forcing a collection although the last paused the target {pause:.0} ms, over \
                 --max-pause {limit_ms:.0} ms: {}; a pause now is cheaper than the crash",
                self.urgency_text()
            ));
            self.last_over_pause = Some(Instant::now());
            self.tally.forced_over_pause += 1;
            return true;
        }
        if self.tally.forced_skipped == 0 {
            progress.say(&format!(
                "not forcing collections (nor reading sampling profiles, which collect): the \
                 last full collection paused the target {pause:.0} ms, over --max-pause \
                 {limit_ms:.0} ms"
            ));
        }
        self.tally.forced_skipped += 1;
        false
    }

    /// Runs `collect` (a call that makes V8 collect in full) as a forced
    /// reading: the observer ignores the collections inside the window
    /// and records one reading with the pause leakcheck measured.
    async fn forced_window<E: Into<anyhow::Error>>(
        &mut self,
        collect: impl std::future::Future<Output = Result<(), E>>,
    ) -> anyhow::Result<()> {
        let Some(observer) = &self.observer else {
            return Ok(());
        };
        observer.force_from().await?;
        let started = Instant::now();
        let collected = collect.await;
        let pause = started.elapsed().as_secs_f64() * 1000.0;
        observer.forced(pause).await?;
        collected.map_err(Into::into)?;
        self.tally.last_full_pause_ms = Some(pause);
        let longest = self.tally.longest_forced_pause_ms.get_or_insert(pause);
        *longest = longest.max(pause);
        Ok(())
    }
}
