//! What `leakcheck bisect` was asked: the candidates' kind and range, the
//! check each step runs, and how the answer is written.

/// What is bisected.
#[derive(Debug, Clone, PartialEq)]
pub enum BisectRange {
    /// Commits from `good` (clean) to `bad` (leaks).
    Commits { good: String, bad: String },
    /// A package's published versions.
    Package {
        name: String,
        from: Option<String>,
        to: Option<String>,
    },
    /// Node releases.
    Node { from: String, to: String },
}

/// The install each step gets.
#[derive(Debug, Clone, PartialEq)]
pub enum Install {
    /// From the lockfile the step's tree has.
    Lockfile,
    /// This command, by `sh -c`.
    Command(String),
    None,
}

#[derive(Debug, Clone)]
pub struct BisectProps {
    pub range: BisectRange,
    pub install: Install,
    /// The leakcheck subcommand and its arguments.
    pub check: Vec<String>,
    pub use_cache: bool,
    pub json: Option<String>,
    pub markdown: Option<String>,
    pub quiet: bool,
}
