//! The target's memory against its limits: the limits in force (read once
//! at a route's baseline), the peak of each cycle's load (sampled during
//! the load, never a settled reading), and how a target that died of
//! memory died.

use serde::{Deserialize, Serialize};

/// The memory limits in force for the target. Bytes; absent where unknown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// V8's heap limit (`v8.getHeapStatistics().heap_size_limit`): the
    /// heap a Node process may reach before `JavaScript heap out of
    /// memory` (`--max-old-space-size`, `--heap-limit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_bytes: Option<u64>,
    /// The target's cgroup `memory.max` (v1: `memory.limit_in_bytes`) when
    /// one is set: the container's limit, where the kernel kills it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_bytes: Option<u64>,
    /// `--memory-limit`: the production container's limit as the user
    /// stated it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_bytes: Option<u64>,
}

impl Limits {
    /// The tightest limit on resident memory, and what it is.
    pub fn rss_limit(&self) -> Option<(u64, &'static str)> {
        let cgroup = self.cgroup_bytes.map(|b| (b, "the cgroup's memory.max"));
        let stated = self.stated_bytes.map(|b| (b, "--memory-limit"));
        [cgroup, stated]
            .into_iter()
            .flatten()
            .min_by_key(|(b, _)| *b)
    }

    pub fn is_empty(&self) -> bool {
        self.heap_bytes.is_none() && self.cgroup_bytes.is_none() && self.stated_bytes.is_none()
    }
}

/// The highest readings taken during one cycle's load, garbage included
/// (a few per second: heap through the inspector, rss from /proc).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    pub heap_used: u64,
    pub heap_total: u64,
    pub rss: u64,
    /// Readings taken during the load.
    pub samples: u32,
    /// The load was ended early: the target passed a brake point under a
    /// limit, or was about to at the pace its heap grew (`cycle::peak`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub braked: bool,
}

impl Peak {
    /// The higher of two peaks, field by field.
    pub fn max(self, other: Peak) -> Peak {
        Peak {
            heap_used: self.heap_used.max(other.heap_used),
            heap_total: self.heap_total.max(other.heap_total),
            rss: self.rss.max(other.rss),
            samples: self.samples + other.samples,
            braked: self.braked || other.braked,
        }
    }
}

/// What killed a target that died of memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExhaustionCause {
    /// V8's fatal `JavaScript heap out of memory` (SIGABRT).
    HeapLimit,
    /// An allocation outside the heap failed (`ERR_MEMORY_ALLOCATION_FAILED`,
    /// `Array buffer allocation failed`).
    AllocationFailed,
    /// SIGKILL while the cgroup's `memory.events` counted an OOM kill.
    OomKilled,
}

impl ExhaustionCause {
    pub fn describe(self) -> &'static str {
        match self {
            ExhaustionCause::HeapLimit => "ran out of heap",
            ExhaustionCause::AllocationFailed => "failed to allocate memory",
            ExhaustionCause::OomKilled => "was killed by the OOM killer",
        }
    }
}

/// A target that died of memory during the check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exhaustion {
    pub cause: ExhaustionCause,
    /// Units of work the target served before it died: every completed
    /// cycle's, and those the dying cycle had completed when it died.
    pub units_before_death: u64,
    /// Cycles with a settled reading before the death.
    pub cycles_completed: u32,
    /// How the process ended (`signal 6`).
    pub exit: String,
    /// The last lines the target printed (V8's fatal message among them).
    pub last_output: Vec<String>,
}
