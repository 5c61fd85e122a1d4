//! Reaching targets leakcheck did not start, and targets that are not Node:
//! `--inspect` (HOST:PORT and ws:// URL), `--pid`, `--proc`, a launcher that
//! is not `node` itself (NODE_OPTIONS), a non-Node command (proc fallback),
//! `sample`, `snapshot`, and the loopback-only rule for inspectors.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// A demo server started by the test with its inspector on a random
/// loopback port; returns the guard, the app port and the ws URL.
fn inspected_demo() -> (Guard, u16, String) {
    let port = free_port();
    let mut command = Command::new(node());
    command
        .arg("--inspect=127.0.0.1:0")
        .arg(repo_path("examples/demo-server.mjs"))
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut guard = Guard::spawn(&mut command);
    let stderr = guard.0.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("node printed its inspector URL")
            .unwrap();
        if let Some(url) = line.strip_prefix("Debugger listening on ") {
            break url.trim().to_string();
        }
    };
    // Keep draining stderr so the target never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    wait_listening(port);
    (guard, port, url)
}

fn host_port(ws_url: &str) -> String {
    ws_url
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn run_attaches_to_a_running_inspector_and_leaves_the_target_running() {
    let (mut guard, port, ws) = inspected_demo();
    let url = format!("http://127.0.0.1:{port}");
    let inspect = host_port(&ws);
    let finished = run_leakcheck(&[
        "run",
        "--url",
        &url,
        "--route",
        "/leak",
        "-a",
        "3000",
        "--inspect",
        &inspect,
        "--json",
        "-",
        "-q",
    ]);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let json = finished.json();
    assert_eq!(json["target"]["probe"], "inspector");
    assert!(
        json["target"]["node_version"]
            .as_str()
            .unwrap()
            .starts_with('v')
    );
    assert_eq!(json["routes"][0]["verdict"]["kind"], "retention");
    assert!(
        guard.0.try_wait().unwrap().is_none(),
        "an attached target keeps running"
    );
}

#[test]
fn sample_through_a_ws_url_after_gc() {
    let (_guard, _port, ws) = inspected_demo();
    let finished = run_leakcheck(&["sample", "--inspect", &ws, "--gc", "--json", "-"]);
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let json = finished.json();
    assert!(json["heap_used"].as_u64().unwrap() > 1_000_000);
    assert!(json["rss"].as_u64().unwrap() > json["heap_used"].as_u64().unwrap());
    assert!(finished.stderr.contains("heapUsed"), "{}", finished.stderr);
}

#[test]
fn pid_activates_the_inspector_with_sigusr1() {
    let (guard, _port) = start_demo(&[]);
    let pid = guard.pid().to_string();
    let finished = run_leakcheck(&["sample", "--pid", &pid, "--json", "-"]);
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    assert!(finished.json()["heap_used"].as_u64().unwrap() > 0);
}

#[test]
fn snapshot_streams_to_a_private_file() {
    use std::os::unix::fs::PermissionsExt;
    let (_guard, _port, ws) = inspected_demo();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("heap.heapsnapshot");
    let out = path.display().to_string();
    let finished = run_leakcheck(&["snapshot", "--inspect", &host_port(&ws), "--gc", "-o", &out]);
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    assert!(
        finished.stderr.contains("paused"),
        "says the target is paused: {}",
        finished.stderr
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let text = std::fs::read_to_string(&path).unwrap();
    let snapshot: serde_json::Value = serde_json::from_str(&text).expect("a whole JSON snapshot");
    assert!(snapshot["snapshot"]["meta"]["node_fields"].is_array());
    assert!(snapshot["nodes"].as_array().unwrap().len() > 1000);
}

#[test]
fn a_remote_inspector_is_refused_without_the_flag() {
    let finished = run_leakcheck(&["sample", "--inspect", "192.0.2.1:9229"]);
    assert_eq!(finished.code, 2);
    assert!(
        finished.stderr.contains("--allow-remote-inspector"),
        "{}",
        finished.stderr
    );
}

/// A Python HTTP server: a target in another language.
fn python_server(port: u16) -> Vec<String> {
    [
        "python3",
        "-m",
        "http.server",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn proc_probe_reads_any_process() {
    let port = free_port();
    let command = python_server(port);
    let mut spawn = Command::new(&command[0]);
    spawn
        .args(&command[1..])
        .current_dir(repo_path("examples"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let guard = Guard::spawn(&mut spawn);
    wait_listening(port);
    let url = format!("http://127.0.0.1:{port}/demo-server.mjs");
    let pid = guard.pid().to_string();
    let finished = run_leakcheck(&[
        "run", "--url", &url, "--proc", &pid, "--cycles", "2", "-a", "200", "--json", "-", "-q",
    ]);
    let json = finished.json();
    assert_eq!(json["target"]["probe"], "proc");
    let verdict = &json["routes"][0]["verdict"];
    assert!(
        verdict["findings"].to_string().contains("no-forced-gc"),
        "{verdict:#}"
    );
    assert!(
        json["routes"][0]["cycles"][1]["after_gc"]["rss"]
            .as_u64()
            .unwrap()
            > 1_000_000
    );
    assert_eq!(json["routes"][0]["cycles"][0]["load"]["status"]["2xx"], 200);
}

#[test]
fn a_non_node_command_falls_back_to_proc() {
    let port = free_port();
    let command = python_server(port);
    let url = format!("http://127.0.0.1:{port}/");
    let started = Instant::now();
    let finished = run_leakcheck(&with_command(
        &[
            "run", "--url", &url, "--cycles", "2", "-a", "100", "--json", "-",
        ],
        &command,
    ));
    let json = finished.json();
    assert_eq!(json["target"]["probe"], "proc", "{}", finished.stderr);
    assert!(
        finished
            .stderr
            .contains("no Node inspector announced itself"),
        "{}",
        finished.stderr
    );
    assert_eq!(json["outcome"]["port_freed"], true);
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn a_launcher_script_gets_the_inspector_through_node_options() {
    let port = free_port();
    let demo = repo_path("examples/demo-server.mjs").display().to_string();
    // bash forks node as a child: the inspector belongs to the child.
    let script = format!("{} {demo} {port}; true", node());
    let command = vec!["bash".to_string(), "-c".to_string(), script];
    let url = format!("http://127.0.0.1:{port}");
    let finished = run_leakcheck(&with_command(
        &[
            "run", "--url", &url, "--route", "/leak", "-a", "3000", "--json", "-", "-q",
        ],
        &command,
    ));
    let json = finished.json();
    assert_eq!(json["target"]["probe"], "inspector", "{}", finished.stderr);
    assert_eq!(json["routes"][0]["verdict"]["kind"], "retention");
    assert!(port_is_free(port));
}
