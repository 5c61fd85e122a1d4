//! `leakcheck bisect` over real git repositories made here (16 commits,
//! one of which keeps a record per request) and over a package's published
//! versions (debug, whose 3.0.0 began keeping every logger: the
//! catalogue's known leak). Each step is a real check of a real Node
//! server; every repository and cache lives in a temporary folder.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::*;

/// The server of every commit: from `LEAK_AT` on it keeps a record per
/// request in `seen`.
const SERVER: &str = "import { createServer } from 'node:http';
const port = Number(process.argv[2]);
const seen = [];
createServer((req, res) => {
  const id = new URL(req.url, 'http://x').searchParams.get('id');
  res.end('ok ' + id + '\\n');
}).listen(port, '127.0.0.1');
";
const LEAKING_LINE: &str = "  seen.push({ id, at: Date.now(), body: 'x'.repeat(300) });\n";
/// Commits after the first; commit `LEAK_AT` adds the leak.
const COMMITS: usize = 15;
const LEAK_AT: usize = 9;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository of 1 + `COMMITS` commits; `broken` names a commit that
/// also adds a `BROKEN` file (removed by the next), which the tests'
/// install command refuses. Returns it and each commit's hash, oldest first.
fn repository(broken: Option<usize>) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.email", "dev@example.com"]);
    git(root, &["config", "user.name", "Dev"]);
    std::fs::write(root.join("server.mjs"), SERVER).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "a server"]);
    let mut hashes = vec![git(root, &["rev-parse", "HEAD"])];
    for i in 1..=COMMITS {
        let mut notes = std::fs::read_to_string(root.join("NOTES.md")).unwrap_or_default();
        notes.push_str(&format!("note {i}\n"));
        std::fs::write(root.join("NOTES.md"), notes).unwrap();
        if i == LEAK_AT {
            let leaking = SERVER.replace("  res.end(", &format!("{LEAKING_LINE}  res.end("));
            std::fs::write(root.join("server.mjs"), leaking).unwrap();
        }
        let _ = std::fs::remove_file(root.join("BROKEN"));
        if broken == Some(i) {
            std::fs::write(root.join("BROKEN"), "the build fails here\n").unwrap();
        }
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", &format!("change {i}")]);
        hashes.push(git(root, &["rev-parse", "HEAD"]));
    }
    (dir, hashes)
}

/// `leakcheck bisect ARGS -- run …` in `dir`, with a cache of its own;
/// the check's port is part of its settings (and so of the cache's key).
fn bisect(dir: &Path, cache: &Path, args: &[&str], target: &[&str]) -> Finished {
    bisect_on(free_port(), dir, cache, args, target)
}

fn bisect_on(port: u16, dir: &Path, cache: &Path, args: &[&str], target: &[&str]) -> Finished {
    let port = port.to_string();
    let url = format!("http://127.0.0.1:{port}");
    let mut command = leakcheck();
    command
        .current_dir(dir)
        .env("LEAKCHECK_CACHE_DIR", cache)
        .arg("bisect")
        .args(args)
        .args([
            "--json",
            "-",
            "--",
            "run",
            "--url",
            &url,
            "--route",
            "/item?id={n}",
            "--",
        ])
        .args(target)
        .arg(&port);
    run_within(command, RUN_DEADLINE * 4)
}

fn steps<'a>(json: &'a Value, role: &str) -> Vec<&'a Value> {
    json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["role"] == role)
        .collect()
}

#[test]
fn sixteen_commits_name_the_one_that_keeps_a_record_per_request_in_five_steps_and_reuse_them() {
    let (repo, hashes) = repository(None);
    let cache = tempfile::tempdir().unwrap();
    let markdown = cache.path().join("bisect.md");
    let shown = markdown.display().to_string();
    let range = ["--good", &hashes[0], "--bad", "main"];
    let first_run = [&range[..], &["--markdown", &shown]].concat();
    let port = free_port();
    let done = bisect_on(
        port,
        repo.path(),
        cache.path(),
        &first_run,
        &["node", "server.mjs"],
    );
    assert_eq!(done.code, 0, "{}", done.stderr);
    let json = done.json();
    assert_eq!(json["status"], "found", "{json}");
    assert_eq!(json["first"], hashes[LEAK_AT].as_str());
    assert_eq!(json["last_before"], hashes[LEAK_AT - 1].as_str());
    assert_eq!(steps(&json, "end").len(), 2);
    let searched = steps(&json, "search").len();
    assert!(searched <= 5, "{searched} search steps");
    assert_eq!(json["diagnosis"]["holder"], "seen", "{}", json["diagnosis"]);
    let stored = json["diagnosis"]["stored_at"].as_str().unwrap();
    assert!(stored.starts_with("server.mjs:6:"), "{stored}");
    assert_eq!(json["commit"]["touched_in_diagnosis"][0], "server.mjs");
    assert!(
        json["commit"]["diff_stat"]
            .as_str()
            .unwrap()
            .contains("server.mjs")
    );
    let md = std::fs::read_to_string(&markdown).unwrap();
    assert!(
        md.contains(&format!(
            "**first bad commit: `{}`**",
            &hashes[LEAK_AT][..10]
        )),
        "{md}"
    );
    assert!(md.contains("| Search | `"), "{md}");
    assert!(
        md.contains("It changed `server.mjs`, which the diagnosis names."),
        "{md}"
    );
    // The user's tree is as it was: same HEAD, nothing changed, no worktree left.
    assert_eq!(git(repo.path(), &["rev-parse", "main"]), hashes[COMMITS]);
    assert_eq!(git(repo.path(), &["status", "--porcelain"]), "");
    assert_eq!(git(repo.path(), &["worktree", "list"]).lines().count(), 1);

    // Again: the ends and the search are read from the cache, the
    // confirmations run, and the answer is the same.
    let again = bisect_on(
        port,
        repo.path(),
        cache.path(),
        &range,
        &["node", "server.mjs"],
    );
    let json = again.json();
    assert_eq!(json["first"], hashes[LEAK_AT].as_str());
    let cached: Vec<bool> = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["role"] != "confirm")
        .map(|s| s["cached"].as_bool().unwrap())
        .collect();
    assert!(cached.iter().all(|c| *c), "{}", json["steps"]);
}

#[test]
fn a_commit_whose_build_fails_is_skipped_and_named_and_the_answer_stands() {
    // 16 candidates: the first step checks the middle one, index 7.
    let (repo, hashes) = repository(Some(7));
    let cache = tempfile::tempdir().unwrap();
    let args = [
        "--good",
        &hashes[0],
        "--bad",
        "main",
        "--install",
        "test ! -e BROKEN",
    ];
    let done = bisect(repo.path(), cache.path(), &args, &["node", "server.mjs"]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let json = done.json();
    assert_eq!(json["first"], hashes[LEAK_AT].as_str());
    let skipped: Vec<&Value> = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["reading"] == "skip")
        .collect();
    assert_eq!(skipped.len(), 1, "{}", json["steps"]);
    assert_eq!(skipped[0]["candidate"], hashes[7].as_str());
    let why = skipped[0]["why"].as_str().unwrap();
    assert!(
        why.contains("`test ! -e BROKEN` failed: exit code 1"),
        "{why}"
    );
    assert!(
        done.stderr.contains("skipped (`test ! -e BROKEN` failed"),
        "{}",
        done.stderr
    );
}

#[test]
fn ends_that_both_leak_are_said_with_what_to_change_and_exit_2() {
    let (repo, hashes) = repository(None);
    let cache = tempfile::tempdir().unwrap();
    let args = ["--good", &hashes[LEAK_AT + 1], "--bad", "main"];
    let done = bisect(repo.path(), cache.path(), &args, &["node", "server.mjs"]);
    assert_eq!(done.code, 2, "{}", done.stderr);
    let json = done.json();
    assert_eq!(json["status"], "ends-disagree");
    let message = json["message"].as_str().unwrap();
    assert!(message.contains("--good reads leaks"), "{message}");
    assert!(message.contains("give an earlier --good"), "{message}");
}

/// An app that depends on debug, with the known leak's server.
fn debug_app() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(
        app.join("package.json"),
        r#"{ "name": "bisect-debug-app", "private": true, "dependencies": { "debug": "3.2.7" } }"#,
    )
    .unwrap();
    std::fs::copy(
        repo_path("tests/targets/known/debug-instances.cjs"),
        app.join("server.cjs"),
    )
    .unwrap();
    (dir, app)
}

#[test]
fn debug_s_versions_are_bisected_to_3_0_0_the_first_that_keeps_every_logger() {
    let (_dir, app) = debug_app();
    let cache = tempfile::tempdir().unwrap();
    let args = ["--package", "debug", "--from", "2.6.9", "--to", "3.2.7"];
    let done = bisect(&app, cache.path(), &args, &["node", "server.cjs"]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let json = done.json();
    assert_eq!(json["kind"], "package");
    assert_eq!(json["direction"], "introduced");
    assert_eq!(json["first"], "3.0.0", "{}", json["steps"]);
    assert_eq!(json["last_before"], "2.6.9");
    assert_eq!(
        json["release"]["registry_url"],
        "https://www.npmjs.com/package/debug/v/3.0.0"
    );
    let action = json["diagnosis"]["action"].as_str().unwrap();
    assert!(action.contains("debug-js/debug#678"), "{action}");
    assert!(steps(&json, "search").len() <= 4);
    // The app's own folder was not installed into.
    assert!(!app.join("node_modules").exists());
}
