//! What `leakcheck bisect` answers: the first candidate (commit, package
//! version, Node release) whose check leaks, the log of every step, and
//! what the leak is at that candidate. JSON as written by `--json`; the
//! terminal and Markdown views render it (`report/bisect.rs`).

use serde::{Deserialize, Serialize};

/// What one step's check read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reading {
    Leak,
    Clean,
    /// Not judged: the install failed, the check errored or read
    /// `inconclusive`.
    Skip,
}

impl Reading {
    /// `leaks`, `clean`, `skipped`: as the log says it.
    pub fn word(self) -> &'static str {
        match self {
            Reading::Leak => "leaks",
            Reading::Clean => "clean",
            Reading::Skip => "skipped",
        }
    }
}

/// A commit's hash shortened as git shows it (10 digits); a version whole.
pub fn short_id(id: &str) -> &str {
    let is_hash = id.len() == 40 && id.chars().all(|c| c.is_ascii_hexdigit());
    if is_hash { &id[..10] } else { id }
}

/// What was bisected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BisectKind {
    Commits,
    Package,
    Node,
}

/// Which way the ends read: a leak brought in (clean, then leaking) or a
/// leak fixed (leaking, then clean; for versions only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    Introduced,
    Fixed,
}

/// How the bisect ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BisectStatus {
    /// The first candidate that changes the verdict is named.
    Found,
    /// Skipped candidates lie next to the change: it is one of a range.
    Range,
    /// The ends do not read one clean and one leaking: nothing to search.
    EndsDisagree,
    /// Stopped before an answer (Ctrl-C, an error).
    Stopped,
}

/// Why a step ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepRole {
    /// One of the two ends, checked first.
    End,
    Search,
    /// The answer checked again (with the diagnosis, for the first bad).
    Confirm,
}

/// One check of one candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectStep {
    /// A commit's full hash, or a version.
    pub candidate: String,
    /// A commit's subject line, or the version again.
    pub label: String,
    pub role: StepRole,
    pub reading: Reading,
    /// The verdict's kind (`retention`, `no-retention`, `inconclusive`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// Retained bytes per unit of work of the worst route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_unit: Option<f64>,
    /// Seconds the step took (install and check), 0 when cached.
    pub seconds: f64,
    /// Read from the cache of an earlier bisect.
    #[serde(default)]
    pub cached: bool,
    /// Why a skipped step could not be judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// The leak as the first bad candidate's check diagnosed it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BisectDiagnosis {
    pub route: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
    /// The retainer path from the roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `file:line: text` of the line that stores into the holder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_at: Option<String>,
    /// The verdict's advice.
    pub action: String,
}

/// What the first bad commit changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommitFacts {
    pub hash: String,
    pub subject: String,
    pub author: String,
    pub date: String,
    /// `git diff --stat` against its parent.
    pub diff_stat: String,
    /// The files it touched that the holder's path or the storing line
    /// names: where to look first.
    pub touched_in_diagnosis: Vec<String>,
}

/// Where a version's changes are described.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReleaseFacts {
    pub version: String,
    /// The registry's page of the version.
    pub registry_url: String,
    /// The repository's releases page, when the registry names a GitHub
    /// repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changelog_url: Option<String>,
}

/// The whole answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectReport {
    pub kind: BisectKind,
    /// The package (`--package`), `node` (`--node`), or the repository's
    /// folder name.
    pub subject: String,
    pub direction: Direction,
    pub status: BisectStatus,
    /// The check each step ran, as typed after `leakcheck`.
    pub check: Vec<String>,
    /// Candidates from the clean end to the leaking end, both included.
    pub candidates: usize,
    /// The first candidate whose verdict differs from the first end's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// The last candidate that reads like the first end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_before: Option<String>,
    /// With `range`: the skipped candidates that may be the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub could_be: Vec<String>,
    pub steps: Vec<BisectStep>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<BisectDiagnosis>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<CommitFacts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<ReleaseFacts>,
    /// Steps whose rerun read otherwise, and what the answer did with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub noise: Vec<String>,
    /// What the bisect could not do, in words (the ends' disagreement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub total_seconds: f64,
}

impl BisectReport {
    /// Steps that ran a check (not read from the cache).
    pub fn checks_run(&self) -> usize {
        self.steps.iter().filter(|s| !s.cached).count()
    }

    /// Search steps, the two ends and the confirmations aside.
    pub fn search_steps(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| s.role == StepRole::Search)
            .count()
    }
}
