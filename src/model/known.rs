//! A diagnosis recognised as a leak someone has already reported
//! (`crate::known`): which one, where it is discussed, the version the
//! target runs and the versions that fix it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KnownLeak {
    /// The catalogue entry's id (`known-leaks/<id>.yaml`).
    pub id: String,
    /// What goes wrong, in one line.
    pub title: String,
    /// Where it is discussed: `nodejs/node#53335`, or a document's name.
    pub upstream: String,
    pub url: String,
    /// `bug` (a version fixes it) or `misuse` (the package works as
    /// documented; the fix is in how it is used).
    pub kind: String,
    /// `node` for Node itself, or the npm package.
    pub package: String,
    /// The version the target runs, when it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The releases that fix it, one per maintained line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed_in: Vec<String>,
    /// What to do, in one sentence.
    pub fix: String,
}
