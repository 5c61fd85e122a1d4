//! `leakcheck report --merge`: the JSON results of a run's shards (`run
//! --shard I/N` on N CI runners) put back together as the one result the
//! whole run would have written, so that one report, one baseline
//! comparison and one exit code cover every route.
//!
//! A folder stands for the `*.json` in it and in its folders (a CI's
//! downloaded artifacts, one folder per shard).
//!
//! Refused rather than mixed: results of different leakcheck versions,
//! different settings (the schedule, the resolution, the method: each
//! shard must have judged its routes by the same rule), shards of
//! different splits, a shard given twice or missing, and a route checked
//! by two shards. Each refusal names what differs and in which file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::model::{OutcomeStatus, RouteResult, RunResult, Settings};

/// Reads every result named (a folder stands for the `*.json` in it) and
/// merges them.
pub fn merge_files(paths: &[String]) -> anyhow::Result<RunResult> {
    let mut files = Vec::new();
    for path in paths {
        let path = Path::new(path);
        if path.is_dir() {
            let mut inside = json_files_in(path, 1)?;
            inside.sort();
            if inside.is_empty() {
                anyhow::bail!("{} holds no .json result to merge", path.display());
            }
            files.extend(inside);
        } else {
            files.push(path.to_path_buf());
        }
    }
    let mut results = Vec::new();
    for file in files {
        let name = file.display().to_string();
        let result = super::baseline::load_result(&name)?;
        results.push((name, result));
    }
    merge(results)
}

/// The `*.json` files in `dir` and, `depth` folders down, in its folders:
/// CI's artifact download puts each shard's files in a folder of its own.
fn json_files_in(dir: &Path, depth: u32) -> anyhow::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)?.flatten() {
        let path = entry.path();
        if path.is_dir() && depth > 0 {
            found.extend(json_files_in(&path, depth - 1)?);
        } else if path.extension().is_some_and(|e| e == "json") {
            found.push(path);
        }
    }
    Ok(found)
}

/// The results, merged; `(file, result)` pairs so each refusal can name
/// its file.
pub fn merge(results: Vec<(String, RunResult)>) -> anyhow::Result<RunResult> {
    let Some((first_name, first)) = results.first() else {
        anyhow::bail!("give the results to merge: --merge A.json B.json … (or a folder)");
    };
    for (name, result) in &results[1..] {
        if result.leakcheck_version != first.leakcheck_version {
            anyhow::bail!(
                "{name} was written by leakcheck {} and {first_name} by {}: rerun the shards \
                 with one version",
                result.leakcheck_version,
                first.leakcheck_version
            );
        }
        if let Some(field) = differing_setting(&first.settings, &result.settings) {
            anyhow::bail!(
                "{name} and {first_name} were run with different settings ({field}): a merged \
                 result must judge every route by one rule; rerun the shards with the same \
                 command"
            );
        }
    }
    check_shards(&results)?;
    let mut merged = first.clone();
    merged.routes.clear();
    merged.comparison = None;
    merged.settings.shard = None;
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for (name, result) in &results {
        for route in &result.routes {
            if let Some(other) = seen.insert(route.route.clone(), name.clone()) {
                anyhow::bail!(
                    "route {} is in both {other} and {name}: the shards disagree on the split \
                     (their routes or their paces differ); rerun them",
                    route.route
                );
            }
            merged.routes.push(route.clone());
        }
        merged.started_at_unix_s = merged.started_at_unix_s.min(result.started_at_unix_s);
        merge_outcome(&mut merged, result, name);
    }
    let order = run_order(&results);
    merged.routes.sort_by_key(|r: &RouteResult| {
        order
            .iter()
            .position(|name| *name == r.route)
            .unwrap_or(usize::MAX)
    });
    merged.settings.routes = merged.routes.iter().map(|r| r.route.clone()).collect();
    if let Some(missing) = results
        .iter()
        .find_map(|(_, r)| r.settings.shard.as_ref())
        .map(|s| {
            s.all_routes
                .iter()
                .filter(|route| !seen.contains_key(*route))
                .cloned()
                .collect::<Vec<_>>()
        })
        .filter(|m| !m.is_empty())
    {
        anyhow::bail!(
            "no shard checked {}: the shards disagree on the split (their routes or their \
             paces differ); rerun them",
            missing.join(", ")
        );
    }
    Ok(merged)
}

/// The first setting that differs, by its JSON name; what each shard may
/// have of its own (its part of the routes, its paces, its command line)
/// left out.
fn differing_setting(a: &Settings, b: &Settings) -> Option<String> {
    let comparable = |s: &Settings| {
        let mut s = s.clone();
        s.routes.clear();
        s.shard = None;
        s.invocation = None;
        if let Some(discovery) = s.discovery.as_mut() {
            for route in &mut discovery.checked {
                route.pace_s = None;
            }
            discovery.estimate_s = None;
        }
        serde_json::to_value(s).unwrap_or_default()
    };
    let (a, b) = (comparable(a), comparable(b));
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return None;
    };
    a.keys()
        .chain(b.keys())
        .find(|key| a.get(*key) != b.get(*key))
        .cloned()
}

/// Shards of one split: the same count, each index once, all there.
fn check_shards(results: &[(String, RunResult)]) -> anyhow::Result<()> {
    let shards: Vec<(&String, &crate::model::ShardInfo)> = results
        .iter()
        .filter_map(|(name, r)| r.settings.shard.as_ref().map(|s| (name, s)))
        .collect();
    let Some((first_name, first)) = shards.first() else {
        return Ok(());
    };
    if shards.len() != results.len() {
        anyhow::bail!("some results are shards (--shard) and some are not: merge one run's shards");
    }
    let mut by_index: BTreeMap<u32, &String> = BTreeMap::new();
    for (name, shard) in &shards {
        if shard.count != first.count || shard.all_routes != first.all_routes {
            anyhow::bail!(
                "{name} is shard {}/{} of {} routes and {first_name} shard {}/{} of {}: they \
                 are not shards of one run",
                shard.index,
                shard.count,
                shard.all_routes.len(),
                first.index,
                first.count,
                first.all_routes.len()
            );
        }
        if let Some(other) = by_index.insert(shard.index, name) {
            anyhow::bail!("{name} and {other} are both shard {}", shard.index);
        }
    }
    let missing: Vec<String> = (1..=first.count)
        .filter(|i| !by_index.contains_key(i))
        .map(|i| format!("{i}/{}", first.count))
        .collect();
    if !missing.is_empty() {
        anyhow::bail!(
            "shard {} missing: give every shard's result",
            missing.join(", ")
        );
    }
    Ok(())
}

/// The routes in the order the whole run would have checked them.
fn run_order(results: &[(String, RunResult)]) -> Vec<String> {
    match results.iter().find_map(|(_, r)| r.settings.shard.as_ref()) {
        Some(shard) => shard.all_routes.clone(),
        None => results
            .iter()
            .flat_map(|(_, r)| r.routes.iter().map(|route| route.route.clone()))
            .collect(),
    }
}

/// The worst outcome wins: a shard that failed or was interrupted makes
/// the merged run so, with its file named.
fn merge_outcome(merged: &mut RunResult, result: &RunResult, name: &str) {
    if result.outcome.status != OutcomeStatus::Complete
        && merged.outcome.status == OutcomeStatus::Complete
    {
        merged.outcome.status = result.outcome.status;
    }
    if let Some(error) = &result.outcome.error {
        let error = format!("{name}: {error}");
        merged.outcome.error = Some(match merged.outcome.error.take() {
            Some(before) if !before.contains(&error) => format!("{before}; {error}"),
            Some(before) => before,
            None => error,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ShardInfo;

    fn shard(index: u32, routes: &[&str]) -> RunResult {
        let mut result = RunResult::default();
        result.settings.shard = Some(ShardInfo {
            index,
            count: 2,
            all_routes: vec!["/a".into(), "/b".into(), "/c".into()],
        });
        for route in routes {
            result.routes.push(RouteResult {
                route: route.to_string(),
                ..RouteResult::default()
            });
        }
        result
    }

    #[test]
    fn shards_merge_into_the_whole_runs_order() {
        let merged = merge(vec![
            ("2.json".into(), shard(2, &["/c", "/a"])),
            ("1.json".into(), shard(1, &["/b"])),
        ])
        .unwrap();
        let routes: Vec<&str> = merged.routes.iter().map(|r| r.route.as_str()).collect();
        assert_eq!(routes, ["/a", "/b", "/c"]);
        assert!(merged.settings.shard.is_none());
    }

    #[test]
    fn a_missing_shard_a_repeated_route_and_other_settings_are_refused() {
        let error = merge(vec![("1.json".into(), shard(1, &["/b"]))]).unwrap_err();
        assert!(error.to_string().contains("shard 2/2 missing"), "{error}");
        let error = merge(vec![
            ("1.json".into(), shard(1, &["/a", "/b"])),
            ("2.json".into(), shard(2, &["/b", "/c"])),
        ])
        .unwrap_err();
        assert!(error.to_string().contains("route /b is in both"), "{error}");
        let mut other = shard(2, &["/c"]);
        other.settings.requests_per_cycle = 999;
        let error = merge(vec![
            ("1.json".into(), shard(1, &["/a", "/b"])),
            ("2.json".into(), other),
        ])
        .unwrap_err();
        assert!(error.to_string().contains("requests_per_cycle"), "{error}");
        let error = merge(vec![
            ("1.json".into(), shard(1, &["/a"])),
            ("2.json".into(), shard(2, &["/c"])),
        ])
        .unwrap_err();
        assert!(error.to_string().contains("no shard checked /b"), "{error}");
    }
}
