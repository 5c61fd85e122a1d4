//! Evidence within a budget: V8's sampling heap profiler runs at a coarse
//! interval for the whole watch (`--sample-interval`, 512 KB by default:
//! one allocation sampled per half megabyte, a few hundred samples live in
//! a 100 MB heap), and its profile of live sampled bytes per allocation
//! site is read at every checkpoint. At a decision, the sites whose live
//! bytes grew between the first and the last third of the watch (each
//! third's profiles averaged) are what the process kept while it was
//! watched, named with their frames; the attribution step adds source maps
//! and owners.
//!
//! Why thirds, not the first and last profile: a site's live sample count
//! is Poisson-noisy (a 512 KB interval counts 1 MB as 2 ± 1.4 samples),
//! and a clean site's count wanders as its objects are collected; the
//! average of a third of the profiles smooths both, while a leak's site
//! keeps rising from one third to the next.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::diagnosis::snapshots::profile::{SiteKey, frame_site};
use crate::inspector::{Inspector, InspectorError};
use crate::model::AllocationSite;

/// The least growth named, in samples: a site whose objects are alive only
/// for a while (a request's buffers, a cache with a TTL) is caught alive in
/// one profile and not the next, and its third's average moves by a
/// sample or so (measured: 0.1–0.6 MB at 512 KB on the test server, for
/// `write_` in node:_http_outgoing); a leak's site gains a sample per
/// interval of bytes kept, and keeps it.
const MIN_GROWTH_SAMPLES: u64 = 2;

/// Profiles kept: past it, every second one is dropped, so a watch of
/// days keeps its first and last thirds with a coarser step.
const MOST_PROFILES: usize = 240;

pub struct SiteSampler {
    inspector: Inspector,
    /// Bytes per sample.
    interval: u64,
    /// Each checkpoint: seconds since the watch began, live sampled bytes per site.
    profiles: Vec<(f64, HashMap<SiteKey, u64>)>,
    /// The sites as first seen (their script ids, for the source lines).
    seen: HashMap<SiteKey, AllocationSite>,
}

impl SiteSampler {
    /// Starts V8's sampling heap profiler at `interval` bytes.
    pub async fn start(
        inspector: &Inspector,
        interval: u64,
    ) -> Result<SiteSampler, InspectorError> {
        inspector
            .call(
                "HeapProfiler.startSampling",
                json!({ "samplingInterval": interval }),
            )
            .await?;
        Ok(SiteSampler {
            inspector: inspector.clone(),
            interval,
            profiles: Vec::new(),
            seen: HashMap::new(),
        })
    }

    /// Reads the live sampled bytes per site now.
    pub async fn checkpoint(&mut self, at_s: f64) -> Result<(), InspectorError> {
        let profile = self
            .inspector
            .call("HeapProfiler.getSamplingProfile", json!({}))
            .await?;
        let mut live = HashMap::new();
        if let Some(head) = profile.pointer("/profile/head") {
            live_by_site(head, None, &mut live, &mut self.seen);
        }
        crate::inspector::drop_deep(profile);
        self.profiles.push((at_s, live));
        if self.profiles.len() > MOST_PROFILES {
            let mut index = 0;
            self.profiles.retain(|_| {
                index += 1;
                index % 2 == 1
            });
        }
        Ok(())
    }

    pub fn interval(&self) -> u64 {
        self.interval
    }

    pub fn profiles(&self) -> usize {
        self.profiles.len()
    }

    /// The sites whose live sampled bytes grew from the first third of the
    /// watch to the last by at least `MIN_GROWTH_SAMPLES` samples, most
    /// first; `bytes` is the growth.
    pub fn grown(&self, top: usize) -> Vec<AllocationSite> {
        let least = MIN_GROWTH_SAMPLES * self.interval;
        let mut grown: Vec<AllocationSite> = grown_between_thirds(&self.profiles)
            .into_iter()
            .filter(|(_, bytes)| *bytes >= least)
            .filter_map(|(key, bytes)| {
                let site = self.seen.get(&key)?;
                Some(AllocationSite {
                    bytes,
                    ..site.clone()
                })
            })
            .collect();
        grown.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.line.cmp(&b.line)));
        grown.truncate(top);
        grown
    }

    /// Stops the profiler: nothing of it stays in the target.
    pub async fn stop(&self) -> Result<(), InspectorError> {
        self.inspector
            .call("HeapProfiler.stopSampling", json!({}))
            .await
            .map(drop)
    }
}

/// Adds each frame's live sampled bytes under its site. A frame without a
/// script (a builtin: `String.prototype.repeat`, `Map.prototype.set`
/// growing a map's table) is charged to the nearest caller that has one,
/// which is the code a reader can change.
fn live_by_site(
    node: &Value,
    caller: Option<&SiteKey>,
    live: &mut HashMap<SiteKey, u64>,
    seen: &mut HashMap<SiteKey, AllocationSite>,
) {
    let own = node
        .get("callFrame")
        .map(frame_site)
        .filter(|(key, _)| !key.1.is_empty())
        .map(|(key, script_id)| {
            seen.entry(key.clone()).or_insert_with(|| AllocationSite {
                function: key.0.clone(),
                url: key.1.clone(),
                line: key.2,
                column: key.3,
                script_id,
                ..AllocationSite::default()
            });
            key
        });
    let site = own.as_ref().or(caller);
    let bytes = node.get("selfSize").and_then(Value::as_u64).unwrap_or(0);
    if let (Some(site), true) = (site, bytes > 0) {
        *live.entry(site.clone()).or_default() += bytes;
    }
    if let Some(children) = node.get("children").and_then(Value::as_array) {
        for child in children {
            live_by_site(child, site, live, seen);
        }
    }
}

/// Per site, the average live bytes over the last third of the profiles'
/// span minus over the first third; only growth. Needs a profile in each
/// third.
fn grown_between_thirds(profiles: &[(f64, HashMap<SiteKey, u64>)]) -> Vec<(SiteKey, u64)> {
    let (Some(first), Some(last)) = (profiles.first(), profiles.last()) else {
        return Vec::new();
    };
    let span = last.0 - first.0;
    let early: Vec<_> = profiles
        .iter()
        .filter(|p| p.0 <= first.0 + span / 3.0)
        .collect();
    let late: Vec<_> = profiles
        .iter()
        .filter(|p| p.0 >= last.0 - span / 3.0)
        .collect();
    if span <= 0.0 || early.is_empty() || late.is_empty() {
        return Vec::new();
    }
    let average = |third: &[&(f64, HashMap<SiteKey, u64>)], key: &SiteKey| {
        let sum: u64 = third
            .iter()
            .map(|p| p.1.get(key).copied().unwrap_or(0))
            .sum();
        sum as f64 / third.len() as f64
    };
    let keys: std::collections::HashSet<&SiteKey> = late.iter().flat_map(|p| p.1.keys()).collect();
    keys.into_iter()
        .filter_map(|key| {
            let growth = average(&late, key) - average(&early, key);
            (growth > 0.0).then(|| (key.clone(), growth as u64))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(function: &str) -> SiteKey {
        (function.into(), "file:///srv/app.mjs".into(), 10, 3)
    }

    #[test]
    fn a_site_that_rises_through_the_thirds_is_named_and_a_wandering_one_is_not() {
        let profiles: Vec<(f64, HashMap<SiteKey, u64>)> = (0..9)
            .map(|i| {
                let mut live = HashMap::new();
                live.insert(key("recordAudit"), 524_288 * (i + 1));
                // A clean site's count wanders up and down.
                live.insert(
                    key("render"),
                    524_288 * [3, 1, 2, 2, 3, 1, 2, 1, 2][i as usize],
                );
                (10.0 * i as f64, live)
            })
            .collect();
        let grown = grown_between_thirds(&profiles);
        assert_eq!(grown.len(), 1, "{grown:?}");
        assert_eq!(grown[0].0, key("recordAudit"));
        // Thirds: profiles 0–2 (mean 2 samples) and 6–8 (mean 8).
        assert_eq!(grown[0].1, 6 * 524_288);
    }

    #[test]
    fn a_builtin_frame_is_charged_to_its_caller() {
        let profile = json!({"head": {
        "callFrame": {"functionName": "(root)", "url": "", "lineNumber": -1, "columnNumber": -1},
        "selfSize": 0,
        "children": [{
            "callFrame": {"functionName": "recordAudit", "url": "file:///app.mjs", "lineNumber": 21, "columnNumber": 1, "scriptId": "7"},
            "selfSize": 100,
            "children": [{"callFrame": {"functionName": "repeat", "url": "", "lineNumber": -1, "columnNumber": -1}, "selfSize": 524288, "children": []}]
        }]}});
        let (mut live, mut seen) = (HashMap::new(), HashMap::new());
        live_by_site(&profile["head"], None, &mut live, &mut seen);
        let key = (
            "recordAudit".to_string(),
            "file:///app.mjs".to_string(),
            22,
            2,
        );
        assert_eq!(live[&key], 524_388);
        assert_eq!(live.len(), 1);
        assert_eq!(seen[&key].script_id, "7");
    }

    #[test]
    fn one_profile_names_nothing() {
        let mut live = HashMap::new();
        live.insert(key("recordAudit"), 1 << 20);
        assert!(grown_between_thirds(&[(0.0, live)]).is_empty());
    }
}
