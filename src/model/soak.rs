//! A soak's schedule and what it projects: a constant load for a
//! duration, a settled reading at an interval (each interval is one of the
//! route's `cycles`, judged by the same rules), growth per hour and the
//! time until the heap reaches its limit at that rate.

use serde::{Deserialize, Serialize};

use super::{LoadReport, Series};

/// `leakcheck soak`'s flags, in the result's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakSettings {
    pub duration_s: f64,
    pub every_s: f64,
    /// Requests per second (`-R`); absent: as fast as the connections go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
}

/// What a soak of one route measured over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakResult {
    /// Seconds the load ran (less than asked when interrupted).
    pub elapsed_s: f64,
    /// Requests that ended during the soak.
    pub requests: u64,
    /// after-GC heapUsed growth per hour at the soak's pace: the fitted
    /// bytes per request times the requests per hour.
    pub growth_bytes_per_hour: f64,
    /// `v8.getHeapStatistics().heap_size_limit` of the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_size_limit: Option<u64>,
    /// Hours until heapUsed reaches the limit at this rate; absent when
    /// the heap does not grow (or the limit is unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hours_to_limit: Option<f64>,
    /// The projection in words: "at this rate heapUsed reaches the 4.0 GB
    /// limit in about 9.5 h", or "no growth: …".
    pub projection: String,
    /// The whole soak's load: status counts, latency, throughput.
    pub load: LoadReport,
    /// Each after-GC series fitted against time over the settled readings
    /// after the warm-up interval (`verdict/time_trend.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub time_fits: Vec<TimeFit>,
}

/// What a series' fit against time decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimeDecision {
    /// The interval's lower end is above the floor.
    Grows,
    /// Its upper end is below the floor.
    Flat,
    /// The interval straddles the floor: a longer soak would decide.
    Undecided,
}

/// An after-GC series against elapsed time: its growth per hour with a
/// 95 % interval, and the floor it is held to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeFit {
    pub series: Series,
    /// Units of the series (bytes, or a count) per hour: the median of the
    /// pairwise slopes (Theil–Sen).
    pub per_hour: f64,
    pub lower_per_hour: f64,
    pub upper_per_hour: f64,
    /// Growth under this is not counted: three of one reading's noise
    /// floors over the time fitted.
    pub floor_per_hour: f64,
    /// Settled readings fitted, and the seconds between the first and last.
    pub readings: u32,
    pub span_s: f64,
    pub decision: TimeDecision,
    /// For an undecided fit: about how many seconds of readings at the same
    /// pace would decide it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by_s: Option<f64>,
}
