//! What one load run measured, as the result and `leakcheck load --json`
//! report it. Field names follow autocannon's JSON where one exists.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The result of one load run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    pub duration_s: f64,
    /// Stopped early (Ctrl-C): the figures cover what was sent until then.
    pub interrupted: bool,
    /// Stopped early because a whole `--timeout` window passed with no
    /// response, only timeouts: the server stopped answering.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stalled: bool,
    /// Ended at the cycle's time target (`--cycle-time`) before its
    /// planned units: the figures cover the units completed by then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub time_bound: bool,
    /// Requests that ended: as a response, an error, or hung up on purpose.
    pub requests: u64,
    pub responses: u64,
    /// Requests sent on a connection closed before the answer (`--abort`):
    /// neither responses nor errors.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub aborted: u64,
    /// With `--scenario`: iterations that ran every step, those that
    /// stopped at a step, and why (the first few distinct reasons).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_iterations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations_per_second: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_reasons: Vec<String>,
    /// A page's `alert`/`confirm`/`prompt` dialogs dismissed during the
    /// cycle (`leakcheck page`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dialogs: u64,
    /// A page's iterations that ended on another URL than the one the run
    /// started on, the first such URL (redacted), and how many of them
    /// (failed ones) leakcheck took back to the start URL.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ended_away: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_away_at: Option<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub returned_to_start: u64,
    pub requests_per_second: f64,
    pub status: StatusCounts,
    pub non_2xx: u64,
    pub errors: u64,
    /// Errors by kind: `connect_refused`, `connect`, `reset`, `timeout`,
    /// `malformed`, `closed`, `io`.
    pub errors_by_kind: BTreeMap<String, u64>,
    pub timeouts: u64,
    /// Connections opened again after the server closed one.
    pub reconnects: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub throughput_bytes_per_second: f64,
    /// Absent when no response arrived.
    pub latency_ms: Option<LatencySummary>,
}

/// For `skip_serializing_if`: a count of zero is left out of the JSON.
pub fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `is_zero` for the smaller counts.
pub fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

impl LoadReport {
    /// Responses with a 2xx status: the requests that did the route's work.
    pub fn successes(&self) -> u64 {
        self.status.s2xx
    }
}

/// Responses by status class. Field names follow autocannon's JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusCounts {
    #[serde(rename = "1xx")]
    pub s1xx: u64,
    #[serde(rename = "2xx")]
    pub s2xx: u64,
    #[serde(rename = "3xx")]
    pub s3xx: u64,
    #[serde(rename = "4xx")]
    pub s4xx: u64,
    #[serde(rename = "5xx")]
    pub s5xx: u64,
    pub other: u64,
}

/// Latency percentiles in milliseconds (autocannon's unit and names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub mean: f64,
    pub stddev: f64,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
}
