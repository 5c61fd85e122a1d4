//! What `leakcheck watch` measured on a live process: its own major
//! collections as readings, the trend with time, the projection to the
//! tightest limit, the evidence it could afford, and how it left.

use serde::{Deserialize, Serialize};

use super::TimeFit;

/// `watch`'s schedule as it ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchSettings {
    /// `-d`; absent: until Ctrl-C or a decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// `--until-decided`.
    pub until_decided: bool,
    /// `--force-gc-every`; absent: natural collections only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_gc_every_s: Option<f64>,
    /// `--max-pause`: a forced collection is skipped once the last full
    /// collection paused the target longer.
    pub max_pause_ms: f64,
    /// `--sample-interval`: the sampling heap profiler's bytes per sample.
    pub sample_interval_bytes: u64,
}

impl WatchSettings {
    /// "a watch of live traffic for 120 s, read at the target's own major
    /// collections (forced every 30 s while pauses stay under 50 ms)".
    pub fn schedule(&self) -> String {
        let length = match (self.duration_s, self.until_decided) {
            (Some(d), true) => format!("for at most {d:.0} s, until decided"),
            (Some(d), false) => format!("for {d:.0} s"),
            (None, true) => "until decided".to_string(),
            (None, false) => "until stopped".to_string(),
        };
        let forced = match self.force_gc_every_s {
            Some(every) => format!(
                " (and forced every {every:.0} s while pauses stay under {:.0} ms)",
                self.max_pause_ms
            ),
            None => String::new(),
        };
        format!(
            "a watch of live traffic {length}, read at the target's own major collections{forced}"
        )
    }
}

/// The watch of one process.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchResult {
    /// Seconds watched.
    pub elapsed_s: f64,
    /// Readings after the target's own major collections.
    pub natural_readings: u32,
    /// Readings after collections leakcheck forced (`--force-gc-every`).
    pub forced_readings: u32,
    /// Forced collections skipped because the last full collection paused
    /// the target longer than `--max-pause`.
    pub forced_skipped: u32,
    /// Collections forced although the last full one paused the target
    /// longer than `--max-pause`: allowed once per `URGENT_FORCE_EVERY`
    /// while the projection to its limit is under an hour, since a pause
    /// now is cheaper than the crash.
    #[serde(default, skip_serializing_if = "super::is_zero_u32")]
    pub forced_over_pause: u32,
    /// The longest pause of a collection leakcheck forced, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_forced_pause_ms: Option<f64>,
    /// Readings the target's ring dropped before they were drained.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub dropped_readings: u64,
    /// HTTP requests the target began serving while watched; absent when
    /// it could not be counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<u64>,
    /// Each series fitted against time (after the first reading), against
    /// the larger of its settled floor and its readings' own spread.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub time_fits: Vec<TimeFit>,
    /// The growing series' growth per hour (0 when nothing grows).
    pub growth_bytes_per_hour: f64,
    /// The limit the growth reaches first, when one is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reaches: Option<LimitReach>,
    /// The projection in words.
    pub projection: String,
    /// Profiles of the sampling heap profiler read during the watch.
    pub profiles: u32,
    /// The heap snapshot `--snapshot` took, or why it was not taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<WatchSnapshot>,
    /// The NDJSON file every reading was appended to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// How leakcheck left the target.
    pub detached: Detached,
    /// The process exited while watched (a fleet watch goes on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exited: Option<WatchExit>,
}

/// A watched process that exited mid-watch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchExit {
    /// Seconds it was watched before it exited.
    pub after_s: f64,
    /// "exited after 3 min watched".
    pub reason: String,
    /// Its last after-GC heapUsed as a share of V8's heap limit (0.0–1.0),
    /// when both are known: near 1, it ran out of memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_share_of_limit: Option<f64>,
}

/// When the growth reaches a limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LimitReach {
    /// "V8's heap limit", "the cgroup's memory.max", "--memory-limit".
    pub limit: String,
    pub limit_bytes: u64,
    pub hours: f64,
    /// Seconds since the Unix epoch.
    pub at_unix_s: u64,
}

/// `--snapshot`'s outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchSnapshot {
    /// The file written (mode 0600); absent when not taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Why it was not taken (the headroom), or what failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_taken: Option<String>,
}

/// What leakcheck removed from the target as it left.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Detached {
    /// The observer and its request counter were removed.
    pub observer_removed: bool,
    /// The sampling heap profiler was stopped.
    pub sampler_stopped: bool,
    /// The inspector leakcheck opened with SIGUSR1 was closed again.
    pub inspector_closed: bool,
    /// What could not be undone, if anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<String>,
}
