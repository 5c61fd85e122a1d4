//! Faults during `leakcheck run`: the target exits or drops the inspector
//! mid-run, stops answering, ignores SIGTERM, or leakcheck is interrupted.
//! Each test checks the exit code, the message, the partial JSON, that the
//! port is free and that no process it started is left.

mod common;

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;

fn url(port: u16) -> String {
    format!("http://127.0.0.1:{port}")
}

/// Runs leakcheck on the fault server with `route` and `extra` flags (JSON
/// on stdout), and checks what every fault must leave: the port free and
/// no target process running.
fn run_fault(route: &str, extra: &[&str], env: &[(&str, &str)]) -> Finished {
    let port = free_port();
    let command = target_command("fault-server.mjs", port);
    let u = url(port);
    let mut args = vec!["run", "--url", &u, "--route", route, "--json", "-", "-q"];
    args.extend_from_slice(extra);
    let mut leakcheck_command = leakcheck();
    leakcheck_command
        .args(with_command(&args, &command))
        .envs(env.iter().copied());
    let finished = run_to_end(leakcheck_command);
    assert!(port_is_free(port), "port {port} left busy");
    assert!(none_running(&command), "the target was left running");
    finished
}

#[test]
fn target_exiting_mid_run_keeps_the_readings_so_far() {
    let finished = run_fault("/exit-after?n=2500", &["-a", "1000"], &[]);
    assert_eq!(finished.code, 2);
    let json = finished.json();
    assert_eq!(json["outcome"]["status"], "failed");
    let error = json["outcome"]["error"].as_str().unwrap();
    assert!(error.contains("the target exited (exit code 7)"), "{error}");
    let output = json["outcome"]["target_output"].to_string();
    assert!(output.contains("exiting on request 2500"), "{output}");
    let cycles = json["routes"][0]["cycles"].as_array().unwrap();
    assert_eq!(cycles.len(), 2, "the two cycles before the exit are kept");
    assert!(json["routes"][0]["baseline"]["heap_used"].as_u64().unwrap() > 0);
    assert!(
        finished.stderr.contains("exit code 7"),
        "{}",
        finished.stderr
    );
}

#[test]
fn inspector_dropping_mid_run_fails_cleanly() {
    let finished = run_fault("/drop-inspector?n=1500", &["-a", "1000"], &[]);
    assert_eq!(finished.code, 2);
    let json = finished.json();
    assert!(
        json["outcome"]["error"]
            .as_str()
            .unwrap()
            .contains("inspector connection closed")
    );
    assert_eq!(json["routes"][0]["cycles"].as_array().unwrap().len(), 1);
    let findings = json["routes"][0]["verdict"]["findings"].to_string();
    assert!(findings.contains("partial"), "{findings}");
    assert!(
        json["outcome"]["target_stopped"]
            .as_str()
            .unwrap()
            .starts_with("Terminated")
    );
}

#[test]
fn server_that_stops_answering_ends_in_bounded_time() {
    let started = Instant::now();
    let finished = run_fault(
        "/stall",
        &["--cycles", "1", "-a", "20", "-c", "4", "--timeout", "300ms"],
        &[],
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(finished.code, 2, "a route with no success proves nothing");
    let json = finished.json();
    let cycle = &json["routes"][0]["cycles"][0];
    assert_eq!(cycle["errors"], 20);
    assert_eq!(cycle["load"]["timeouts"], 20);
    assert_eq!(json["routes"][0]["verdict"]["kind"], "inconclusive");
}

#[test]
fn target_ignoring_sigterm_is_killed_after_the_grace_period() {
    let finished = run_fault(
        "/ok",
        &["--cycles", "1", "-a", "200", "--grace", "500ms"],
        &[("IGNORE_SIGTERM", "1")],
    );
    let json = finished.json();
    assert_eq!(json["outcome"]["target_stopped"], "Killed");
    assert_eq!(json["outcome"]["port_freed"], true);
}

/// Starts a long run, signals leakcheck once the baseline is taken, and
/// returns the JSON it wrote.
fn interrupt_with(signal: i32) {
    let port = free_port();
    let command = target_command("fault-server.mjs", port);
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("partial.json");
    let json_text = json_path.display().to_string();
    let u = url(port);
    let args = [
        "run", "--url", &u, "--route", "/ok", "-a", "5000000", "--json", &json_text,
    ];
    let mut leakcheck_command = leakcheck();
    leakcheck_command
        .args(with_command(&args, &command))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut guard = Guard::spawn(&mut leakcheck_command);
    let mut err = guard.0.stderr.take().unwrap();
    // Non-interactive progress prints a line per step: wait for the load.
    let mut seen = String::new();
    let mut byte = [0u8; 1];
    while !seen.contains("sending load") {
        assert_eq!(
            err.read(&mut byte).unwrap(),
            1,
            "leakcheck ended early: {seen}"
        );
        seen.push(byte[0] as char);
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling the leakcheck process this test started, by PID.
    unsafe { libc::kill(guard.pid() as i32, signal) };
    let status = guard.wait_within(Duration::from_secs(20));
    assert_eq!(status.code(), Some(2));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(
        json["outcome"]["status"], "interrupted",
        "{:#}",
        json["outcome"]
    );
    assert!(json["routes"][0]["baseline"]["heap_used"].as_u64().unwrap() > 0);
    assert_eq!(json["outcome"]["port_freed"], true);
    assert!(port_is_free(port));
    assert!(none_running(&command));
}

#[test]
fn ctrl_c_stops_the_target_and_writes_partial_results() {
    interrupt_with(libc::SIGINT);
}

#[test]
fn sigterm_stops_the_target_and_writes_partial_results() {
    interrupt_with(libc::SIGTERM);
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_the_target_still_dies() {
    let port = free_port();
    let command = target_command("fault-server.mjs", port);
    let u = url(port);
    // A target that ignores SIGTERM and a long grace: the first Ctrl-C
    // would wait 60 s for it; the second must not.
    let args = [
        "run", "--url", &u, "--route", "/ok", "-a", "5000000", "--grace", "60s", "-q",
    ];
    let mut leakcheck_command = leakcheck();
    leakcheck_command
        .args(with_command(&args, &command))
        .env("IGNORE_SIGTERM", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut guard = Guard::spawn(&mut leakcheck_command);
    wait_listening(port);
    std::thread::sleep(Duration::from_millis(1000));
    let started = Instant::now();
    // SAFETY: signalling the leakcheck process this test started, by PID.
    unsafe { libc::kill(guard.pid() as i32, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(1000));
    unsafe { libc::kill(guard.pid() as i32, libc::SIGINT) };
    let status = guard.wait_within(Duration::from_secs(10));
    assert_eq!(status.code(), Some(2));
    assert!(started.elapsed() < Duration::from_secs(10));
    // The parent-death signal takes the target down with leakcheck. A dying
    // process loses its command line when its memory is unmapped, before its
    // sockets close, so wait for both rather than checking the port once.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !(none_running(&command) && port_is_free(port)) {
        assert!(
            Instant::now() < deadline,
            "the target outlived leakcheck or its port stayed busy"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
