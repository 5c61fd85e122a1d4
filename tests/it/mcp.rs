//! `leakcheck mcp` driven by a real MCP client: the official TypeScript SDK
//! from npm (tests/targets/mcp/client.mjs), whose client validates every
//! answer against the protocol. It lists the tools, checks the demo's
//! `/leak` and `/churn`, diffs a snapshot pair, meets the CLI's refusals as
//! tool errors, and cancels a check, which must leave no process behind
//! and keep the readings taken.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::util::*;

/// Runs the client on `scenario` against this build's binary; its steps.
fn agent(scenario: Value) -> Vec<Value> {
    let client = npm_project("mcp", &["client.mjs"]);
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), scenario.to_string()).unwrap();
    let mut command = Command::new(node());
    command
        .arg(client.join("client.mjs"))
        .arg(env!("CARGO_BIN_EXE_leakcheck"))
        .arg(file.path());
    let finished = run_within(command, std::time::Duration::from_secs(240));
    assert_eq!(finished.code, 0, "the client failed: {}", finished.stderr);
    finished
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn step<'a>(steps: &'a [Value], label: &str) -> &'a Value {
    steps
        .iter()
        .find(|s| s["label"] == label || s["step"] == label)
        .unwrap_or_else(|| panic!("no step {label}: {steps:#?}"))
}

fn route<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["route"] == name)
        .unwrap_or_else(|| panic!("no route {name}: {summary:#}"))
}

/// Two snapshots of a process whose Map grows (tests/targets/leaks).
fn snapshot_pair(dir: &Path) -> (PathBuf, PathBuf) {
    let mut command = Command::new(node());
    command
        .arg(repo_path("tests/targets/leaks/map-cache.mjs"))
        .arg(dir)
        .arg("3000");
    let finished = run_to_end(command);
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    (
        dir.join("before.heapsnapshot"),
        dir.join("after.heapsnapshot"),
    )
}

#[test]
fn an_agent_lists_the_tools_checks_the_demo_and_diffs_a_pair() {
    let results = tempfile::tempdir().unwrap();
    let (before, after) = snapshot_pair(results.path());
    let port = free_port();
    let command = demo_command(port);
    let soak_port = free_port();
    let watched = target_command("watch-server.mjs", free_port());
    let steps = agent(json!({
        "serverArgs": ["--results", results.path()],
        "calls": [
            {"label": "demo", "name": "check_server", "arguments": {
                "url": format!("http://127.0.0.1:{port}"),
                "routes": ["/leak", "/churn"],
                "command": command,
                "cycles": 3,
                "requests": 2000,
            }},
            {"label": "diff", "name": "diff_snapshots", "arguments": {
                "before": before, "after": after, "top": 3,
            }},
            {"label": "remote", "name": "check_server", "arguments": {
                "url": "http://192.0.2.1:80", "command": command, "allow_remote": true,
            }},
            {"label": "missing", "name": "inspect_snapshot", "arguments": {
                "snapshot": results.path().join("none.heapsnapshot"),
            }},
            {"label": "function", "name": "check_function", "arguments": {
                "function": format!("{}#cached", repo_path("tests/targets/functions/lru.mjs").display()),
            }},
            {"label": "soak", "name": "soak_server", "arguments": {
                "url": format!("http://127.0.0.1:{soak_port}"),
                "route": "/churn",
                "command": demo_command(soak_port),
                "duration": "6s",
                "every": "2s",
                "rate": 200,
            }},
            {"label": "watch", "name": "watch_process", "arguments": {
                "command": &watched,
                "duration": "5s",
                "force_gc_every": "1s",
            }},
            {"label": "compare", "name": "compare_results", "arguments": {
                "result": results.path().join("0001-check_server/result.json"),
                "baseline": results.path().join("0001-check_server/result.json"),
            }},
        ],
    }));

    let server = &step(&steps, "initialize")["server"];
    assert_eq!(server["name"], "leakcheck");
    let listed = step(&steps, "list")["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = listed.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for tool in [
        "check_server",
        "soak_server",
        "check_page",
        "check_function",
        "inspect_snapshot",
        "diff_snapshots",
        "compare_results",
        "watch_process",
    ] {
        assert!(names.contains(&tool), "{tool} not listed: {names:?}");
    }
    let check = listed.iter().find(|t| t["name"] == "check_server").unwrap();
    for input in ["url", "routes", "command", "cycles", "requests"] {
        assert!(
            check["properties"]
                .as_array()
                .unwrap()
                .contains(&json!(input)),
            "{check}"
        );
    }

    let demo = step(&steps, "demo");
    assert_eq!(demo["isError"], false, "{demo:#}");
    assert!(demo["progress"].as_u64().unwrap() > 3, "{demo:#}");
    let summary = &demo["structured"];
    assert_eq!(summary["leak"], true, "{summary:#}");
    let leak = route(summary, "/leak");
    assert_eq!(leak["leak"], true);
    assert_eq!(leak["unit"], "bytes per request");
    assert!(leak["figure"].as_f64().unwrap() > 100.0, "{leak:#}");
    assert!(leak["holder"].is_string(), "{leak:#}");
    assert!(
        leak["storing_line"]
            .as_str()
            .unwrap()
            .contains("demo-server.mjs:"),
        "{leak:#}"
    );
    assert_eq!(route(summary, "/churn")["leak"], false);
    assert!(Path::new(summary["report_html"].as_str().unwrap()).is_file());
    assert!(none_running(&command), "the demo outlived its check");

    let diff = &step(&steps, "diff")["structured"];
    assert_eq!(diff["holders"][0]["holder"], "cache", "{diff:#}");
    assert!(diff["holders"].as_array().unwrap().len() <= 3);

    // A watch of a command it started: readings of its own collections
    // (forced here, the server being idle), the checkpoint kept beside the
    // reports, the command stopped.
    let watch = step(&steps, "watch");
    assert_eq!(watch["isError"], false, "{watch:#}");
    let watched_route = &watch["structured"]["routes"][0];
    assert!(watched_route["verdict"].is_string(), "{watch:#}");
    let report = Path::new(watch["structured"]["report_json"].as_str().unwrap());
    let readings = std::fs::read_to_string(report.with_file_name("watch.ndjson")).unwrap();
    assert!(
        readings.matches("\"type\":\"reading\"").count() >= 3,
        "{readings}"
    );
    assert!(
        none_running(&watched),
        "the watched command outlived its call"
    );

    let remote = step(&steps, "remote");
    assert_eq!(remote["isError"], true, "{remote:#}");
    assert!(
        remote["text"].as_str().unwrap().contains("--allow-remote"),
        "{remote:#}"
    );
    let missing = step(&steps, "missing");
    assert_eq!(missing["isError"], true, "{missing:#}");
    assert!(
        missing["text"]
            .as_str()
            .unwrap()
            .contains("none.heapsnapshot"),
        "{missing:#}"
    );
}

#[test]
fn a_cancelled_check_stops_its_target_and_keeps_the_readings() {
    let results = tempfile::tempdir().unwrap();
    let port = free_port();
    let command = demo_command(port);
    let steps = agent(json!({
        "serverArgs": ["--results", results.path()],
        "calls": [
            {"label": "cancelled", "name": "check_server", "cancelAfter": "cycle 2", "arguments": {
                "url": format!("http://127.0.0.1:{port}"),
                "routes": ["/leak"],
                "command": command,
                "cycles": 40,
                "requests": 2000,
            }},
        ],
    }));
    let cancelled = step(&steps, "cancelled");
    assert!(
        cancelled["thrown"].is_string(),
        "the call was not cancelled: {cancelled:#}"
    );
    // The client is gone and so is its server; the check's child stopped
    // the demo by PID and wrote what it had measured.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !none_running(&command) {
        assert!(
            std::time::Instant::now() < deadline,
            "the demo outlived the cancelled check"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let written = results.path().join("0001-check_server/result.json");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !written.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "no result was written"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let result: RunResult =
        serde_json::from_str(&std::fs::read_to_string(&written).unwrap()).unwrap();
    assert_eq!(result.outcome.status, OutcomeStatus::Interrupted);
    let cycles = result.routes[0].cycles.len();
    assert!((1..40).contains(&cycles), "{cycles} cycles kept");
}
