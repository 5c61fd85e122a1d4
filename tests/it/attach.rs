//! Reaching targets leakcheck did not start, and targets that are not Node:
//! `--inspect` (HOST:PORT and ws:// URL), `--pid`, `--proc`, a launcher that
//! is not `node` itself (NODE_OPTIONS), a non-Node command (proc fallback),
//! `sample`, `snapshot`, and the loopback-only rule for inspectors.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use leakcheck::model::Sample;

use crate::util::*;

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
    let finished = RunArgs::new(port)
        .routes(&["/leak"])
        .requests("3000")
        .args(&["--inspect", &host_port(&ws)])
        .run(&[]);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let result = finished.result();
    assert_eq!(result.target.probe, Some(ProbeKind::Inspector));
    assert!(
        result
            .target
            .node_version
            .as_deref()
            .unwrap()
            .starts_with('v')
    );
    assert_eq!(verdict_of(&result.routes[0]).kind, VerdictKind::Retention);
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
    let sample: Sample = serde_json::from_str(&finished.stdout).unwrap();
    assert!(sample.heap_used > 1_000_000);
    assert!(sample.rss > sample.heap_used);
    assert!(finished.stderr.contains("heapUsed"), "{}", finished.stderr);
}

#[test]
fn pid_activates_the_inspector_with_sigusr1() {
    let (guard, _port) = start_demo(&[]);
    let pid = guard.pid().to_string();
    let finished = run_leakcheck(&["sample", "--pid", &pid, "--json", "-"]);
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let sample: Sample = serde_json::from_str(&finished.stdout).unwrap();
    assert!(sample.heap_used > 0);
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
    let finished = RunArgs::with_url(&url)
        .args(&["--proc", &pid])
        .cycles(2)
        .requests("200")
        .run(&[]);
    let result = finished.result();
    assert_eq!(result.target.probe, Some(ProbeKind::Proc));
    let route = &result.routes[0];
    let verdict = verdict_of(route);
    assert!(verdict.has_finding(FindingKind::NoForcedGc), "{verdict:#?}");
    // Without a heap, every figure is rss's.
    assert_eq!(verdict.figure.metric.name(), "rss", "{verdict:#?}");
    assert!(route.cycles[1].after_gc.rss > 1_000_000);
    assert_eq!(route.cycles[0].load.status.s2xx, 200);
}

#[test]
fn a_non_node_command_falls_back_to_proc() {
    let port = free_port();
    let command = python_server(port);
    let started = Instant::now();
    let finished = RunArgs::new(port)
        .progress()
        .cycles(2)
        .requests("100")
        .run(&command);
    let result = finished.result();
    assert_eq!(
        result.target.probe,
        Some(ProbeKind::Proc),
        "{}",
        finished.stderr
    );
    assert!(
        finished
            .stderr
            .contains("no Node inspector announced itself"),
        "{}",
        finished.stderr
    );
    assert_eq!(result.outcome.port_freed, Some(true));
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn a_launcher_script_gets_the_inspector_through_node_options() {
    let port = free_port();
    let demo = repo_path("examples/demo-server.mjs").display().to_string();
    // bash forks node as a child: the inspector belongs to the child.
    let script = format!("{} {demo} {port}; true", node());
    let command = vec!["bash".to_string(), "-c".to_string(), script];
    let finished = RunArgs::new(port)
        .routes(&["/leak"])
        .requests("3000")
        .run(&command);
    let result = finished.result();
    assert_eq!(
        result.target.probe,
        Some(ProbeKind::Inspector),
        "{}",
        finished.stderr
    );
    assert_eq!(verdict_of(&result.routes[0]).kind, VerdictKind::Retention);
    assert!(port_is_free(port));
}
