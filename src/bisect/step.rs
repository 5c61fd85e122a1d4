//! One step: the check run by a child leakcheck in the step's tree, its
//! JSON result read into a reading, and the cache of readings that lets a
//! second bisect over the same candidates and settings skip the checks.
//!
//! A step needs only to tell "this leak, or clean", not to measure
//! everything: after the leaking end is measured, each step gets
//! `--resolution` at a quarter of that end's bytes per unit (a clean
//! route is decided as soon as its bound falls under it, a leak of the
//! same size stands four times over it) and `--no-diagnose`, unless the
//! check sets them itself. The first bad candidate is checked again with
//! the diagnosis (`Budget::full`).

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use super::workspace::Tree;
use crate::model::{Reading, RunResult};

/// The subcommands a step may run.
pub const CHECKS: [&str; 3] = ["run", "fn", "page"];
/// Lines of a failed check's stderr kept as the reason of its skip.
const REASON_LINES: usize = 2;
/// A step's resolution is the leaking end's bytes per unit over this.
pub const BUDGET_SHARE: f64 = 4.0;
/// No resolution finer than this (bytes per unit): the engine's own floor.
const FINEST_RESOLUTION: f64 = 16.0;

/// How much a step measures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Budget {
    /// `--resolution` in bytes per unit.
    pub resolution: Option<f64>,
    pub diagnose: bool,
}

impl Budget {
    /// The check as the user gave it, diagnosis included.
    pub fn full() -> Budget {
        Budget {
            resolution: None,
            diagnose: true,
        }
    }

    /// A step's budget from the leaking end's bytes per unit.
    pub fn from_leak(bytes_per_unit: Option<f64>) -> Budget {
        Budget {
            resolution: bytes_per_unit.map(|b| (b / BUDGET_SHARE).max(FINEST_RESOLUTION)),
            diagnose: false,
        }
    }
}

/// What one check read.
#[derive(Debug, Clone)]
pub struct Checked {
    pub reading: Reading,
    pub verdict: Option<String>,
    pub bytes_per_unit: Option<f64>,
    pub why: Option<String>,
    pub seconds: f64,
    /// The check's whole result, for the diagnosis.
    pub result: Option<RunResult>,
}

impl Checked {
    pub fn skipped(why: String, seconds: f64) -> Checked {
        Checked {
            reading: Reading::Skip,
            verdict: None,
            bytes_per_unit: None,
            why: Some(why),
            seconds,
            result: None,
        }
    }
}

/// The command line of a step: the check with `--json FILE -q` and the
/// budget's flags after its subcommand (before a target's `--`).
pub fn step_args(check: &[String], json: &Path, budget: &Budget) -> Vec<String> {
    let (sub, rest) = check.split_first().expect("a check has a subcommand");
    let own = |flag: &str| {
        rest.iter()
            .take_while(|a| *a != "--")
            .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
    };
    let mut args = vec![
        sub.clone(),
        "--json".into(),
        json.display().to_string(),
        "-q".into(),
    ];
    if let Some(resolution) = budget.resolution.filter(|_| !own("--resolution")) {
        args.push("--resolution".into());
        args.push(format!("{}B", resolution.round() as u64));
    }
    if !budget.diagnose && !own("--no-diagnose") {
        args.push("--no-diagnose".into());
    }
    args.extend(rest.iter().cloned());
    args
}

/// Runs the check in `tree` and reads its verdict.
pub fn check(check: &[String], tree: &Tree, budget: &Budget) -> Checked {
    let started = Instant::now();
    let folder = match tempfile::Builder::new().prefix("leakcheck-step").tempdir() {
        Ok(folder) => folder,
        Err(e) => return Checked::skipped(format!("no scratch folder: {e}"), 0.0),
    };
    let json = folder.path().join("result.json");
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("leakcheck"));
    let mut command = Command::new(exe);
    command
        .current_dir(&tree.dir)
        .args(step_args(check, &json, budget))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(first) = &tree.path_first {
        let path = std::env::var("PATH").unwrap_or_default();
        command.env("PATH", format!("{}:{path}", first.display()));
        command.env("LEAKCHECK_NODE", first.join("node"));
    }
    let out = match command.output() {
        Ok(out) => out,
        Err(e) => return Checked::skipped(format!("cannot run the check: {e}"), 0.0),
    };
    let seconds = started.elapsed().as_secs_f64();
    let result = std::fs::read_to_string(&json)
        .ok()
        .and_then(|text| serde_json::from_str::<RunResult>(&text).ok());
    let Some(result) = result else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(REASON_LINES)..].join(" | ");
        return Checked::skipped(
            format!(
                "the check failed ({}): {tail}",
                crate::process::describe_status(out.status)
            ),
            seconds,
        );
    };
    let mut checked = read_result(&result);
    checked.seconds = seconds;
    checked.result = Some(result);
    checked
}

/// A result's reading: a leak if any route leaks, skipped if any could
/// not be judged or none was checked, else clean.
pub fn read_result(result: &RunResult) -> Checked {
    let verdicts: Vec<_> = result
        .routes
        .iter()
        .filter_map(|r| Some((r, r.verdict.as_ref()?)))
        .collect();
    let leaking: Vec<_> = verdicts.iter().filter(|(_, v)| v.kind.is_leak()).collect();
    let worst = |routes: &[&(&crate::model::RouteResult, &crate::model::Verdict)]| {
        routes
            .iter()
            .filter_map(|(r, _)| r.retained_bytes_per_request.as_ref().map(|b| b.heap_used))
            .fold(None, |most: Option<f64>, b| {
                Some(most.map_or(b, |m| m.max(b)))
            })
    };
    let undecided = verdicts
        .iter()
        .find(|(_, v)| v.kind == crate::model::VerdictKind::Inconclusive);
    let (reading, verdict, why) = if let Some((_, v)) = leaking.first() {
        (Reading::Leak, Some(v.kind.name().to_string()), None)
    } else if let Some((route, v)) = undecided {
        let why = format!("{}: inconclusive: {}", route.route, v.summary);
        (Reading::Skip, Some(v.kind.name().to_string()), Some(why))
    } else if verdicts.is_empty() {
        let why = result
            .outcome
            .error
            .clone()
            .unwrap_or_else(|| "no route was judged".into());
        (Reading::Skip, None, Some(why))
    } else {
        (
            Reading::Clean,
            Some(verdicts[0].1.kind.name().to_string()),
            None,
        )
    };
    let all: Vec<_> = verdicts.iter().collect();
    Checked {
        reading,
        verdict,
        bytes_per_unit: worst(&leaking).or_else(|| worst(&all)),
        why,
        seconds: 0.0,
        result: None,
    }
}

/// The cache of step readings, one small JSON file per key in
/// `LEAKCHECK_CACHE_DIR`, `$XDG_CACHE_HOME/leakcheck` or
/// `~/.cache/leakcheck`, under `bisect/`.
pub struct Cache {
    dir: Option<PathBuf>,
}

/// What is cached of a step: enough to log it and to search.
#[derive(serde::Serialize, serde::Deserialize)]
struct Cached {
    reading: Reading,
    verdict: Option<String>,
    bytes_per_unit: Option<f64>,
    why: Option<String>,
}

impl Cache {
    pub fn open(enabled: bool) -> Cache {
        let base = std::env::var_os("LEAKCHECK_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("leakcheck"))
            })
            .or_else(|| {
                std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/leakcheck"))
            });
        Cache {
            dir: base.filter(|_| enabled).map(|b| b.join("bisect")),
        }
    }

    /// The key of a candidate under a check, an install and a budget: a
    /// change to any of them is another key.
    pub fn key(parts: &[&str], budget: &Budget) -> String {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        parts.hash(&mut hasher);
        budget.resolution.map(f64::to_bits).hash(&mut hasher);
        budget.diagnose.hash(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        format!("{:016x}", hasher.finish())
    }

    /// A reading cached under `key`; skipped steps are not cached (a
    /// flaky install may pass next time).
    pub fn get(&self, key: &str) -> Option<Checked> {
        let text = std::fs::read_to_string(self.dir.as_ref()?.join(format!("{key}.json"))).ok()?;
        let cached: Cached = serde_json::from_str(&text).ok()?;
        Some(Checked {
            reading: cached.reading,
            verdict: cached.verdict,
            bytes_per_unit: cached.bytes_per_unit,
            why: cached.why,
            seconds: 0.0,
            result: None,
        })
    }

    pub fn put(&self, key: &str, checked: &Checked) {
        let Some(dir) = &self.dir else { return };
        if checked.reading == Reading::Skip || std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let cached = Cached {
            reading: checked.reading,
            verdict: checked.verdict.clone(),
            bytes_per_unit: checked.bytes_per_unit,
            why: checked.why.clone(),
        };
        if let Ok(text) = serde_json::to_string(&cached) {
            let _ = std::fs::write(dir.join(format!("{key}.json")), text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_budget_goes_after_the_subcommand_unless_the_check_sets_it() {
        let check = words("run --url http://127.0.0.1:1 --route /a -- node s.js --resolution 1");
        let budget = Budget::from_leak(Some(400.0));
        let args = step_args(&check, Path::new("/r.json"), &budget);
        assert_eq!(
            args[..7],
            words("run --json /r.json -q --resolution 100B --no-diagnose")[..]
        );
        assert_eq!(args.last().unwrap(), "1");
        let own = words("fn m.js#f --resolution 50B");
        let args = step_args(&own, Path::new("/r.json"), &budget);
        assert_eq!(args.iter().filter(|a| *a == "--resolution").count(), 1);
        let full = step_args(&own, Path::new("/r.json"), &Budget::full());
        assert!(!full.contains(&"--no-diagnose".to_string()));
    }

    #[test]
    fn a_key_changes_with_the_budget_and_the_check() {
        let a = Cache::key(&["abc", "run --route /a"], &Budget::full());
        assert_eq!(a, Cache::key(&["abc", "run --route /a"], &Budget::full()));
        assert_ne!(a, Cache::key(&["abc", "run --route /b"], &Budget::full()));
        assert_ne!(
            a,
            Cache::key(&["abc", "run --route /a"], &Budget::from_leak(Some(1e3)))
        );
    }
}
