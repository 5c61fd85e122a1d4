//! How a run found its routes when none was given (`crate::routes`): the
//! source, what it declared, what was checked and what was left out, and
//! why.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RouteDiscovery {
    /// `openapi`, `app` or `next`.
    pub source: String,
    /// What declared them: `express 4`, `openapi 3.1.0`, `next build`.
    pub origin: String,
    /// Routes the source declared, before methods and skips.
    pub declared: u64,
    /// The routes checked, in order, with the request each sends.
    pub checked: Vec<FoundRoute>,
    pub skipped: Vec<SkippedRoute>,
    /// The run's expected length in seconds, from the first requests' pace
    /// (divided among `-j`'s workers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate_s: Option<f64>,
}

impl RouteDiscovery {
    /// The first requests' pace of the checked route `name`, when timed.
    pub fn pace_of(&self, name: &str) -> Option<f64> {
        self.checked.iter().find(|r| r.name == name)?.pace_s
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FoundRoute {
    /// The route's name in `routes[].route`.
    pub name: String,
    pub method: String,
    /// As declared: `/users/:id`.
    pub pattern: String,
    /// The request template sent: `/users/{n}`.
    pub path: String,
    /// "redirects (302) to /login", when its first requests did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Its first requests' pace, seconds per request: what `--shard`
    /// weighs it by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace_s: Option<f64>,
}

/// `--shard I/N`: this runner's part of the run's routes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// 1-based, as CI matrices count.
    pub index: u32,
    pub count: u32,
    /// Every route the split was made from, in the run's order: what the
    /// merge checks the shards against.
    pub all_routes: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SkippedRoute {
    pub method: String,
    pub pattern: String,
    pub reason: String,
}
