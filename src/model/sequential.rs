//! `--cycles auto`: small cycles repeated until the verdict is decided.
//! The settings say what decides (the cycle size, the resolution below
//! which a route counts as keeping nothing, the budget); each route says
//! how many requests decided it and why it stopped.

use serde::{Deserialize, Serialize};

/// `--cycles auto`'s flags, in the result's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequentialSettings {
    /// Units of work per small cycle (`--requests` with `--cycles auto`).
    pub cycle_requests: u64,
    /// `--resolution`: a route whose retention is bounded below this many
    /// bytes per unit keeps nothing the method can see.
    pub resolution_bytes_per_request: f64,
    /// `--max-requests`: the budget; when it runs out, the verdict is the
    /// fixed method's over the same readings.
    pub max_requests: u64,
}

/// Why a sequential route stopped loading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SequentialStop {
    /// The growth per cycle is clear of its noise by the method's rule.
    Retention,
    /// The fit bounds what a request keeps below the resolution.
    Bounded,
    /// The budget ran out: the fixed method's verdict over its readings.
    Budget,
    /// A cycle did no work: more load would prove nothing either.
    Failed,
    /// The run stopped (Ctrl-C, a target that died) before a decision.
    Undecided,
}

impl SequentialStop {
    pub fn name(self) -> &'static str {
        match self {
            SequentialStop::Retention => "retention",
            SequentialStop::Bounded => "bounded",
            SequentialStop::Budget => "budget",
            SequentialStop::Failed => "failed",
            SequentialStop::Undecided => "undecided",
        }
    }
}

/// How a sequential route was decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequentialResult {
    /// Units of work the target served before the decision (all cycles run).
    pub decided_after_requests: u64,
    /// Small cycles run.
    pub cycles: u32,
    /// The verdict's fit read the small cycles in groups of this many (1:
    /// each cycle on its own). A retention needs growth clear of noise per
    /// group, as the fixed method needs it per cycle.
    pub group_cycles: u32,
    pub stopped: SequentialStop,
    /// Why, in words: "growth clear of noise after 15000 requests", "at most
    /// 9.1 B per request (upper bound) after 25000 requests, below the 15.7
    /// B resolution".
    pub reason: String,
    /// The upper bound of the after-GC heapUsed slope at the last look
    /// (fit plus two standard errors); absent before three cycles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper_bound_bytes_per_request: Option<f64>,
}
