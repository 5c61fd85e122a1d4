//! Faults during `leakcheck run`: the target exits or drops the inspector
//! mid-run, stops answering, ignores SIGTERM, or leakcheck is interrupted.
//! Each test checks the exit code, the message, the partial JSON, that the
//! port is free and that no process it started is left.

use std::process::Stdio;
use std::time::{Duration, Instant};

use leakcheck::commands::signals::SECOND_SIGNAL_AFTER;

use crate::util::*;

/// Runs leakcheck on the fault server with `route` and `extra` flags (JSON
/// on stdout), and checks what every fault must leave: the port free and
/// no target process running.
fn run_fault(route: &str, extra: &[&str], env: &[(&str, &str)]) -> Finished {
    let port = free_port();
    let command = target_command("fault-server.mjs", port);
    let finished = RunArgs::new(port)
        .routes(&[route])
        .args(extra)
        .envs(env)
        .run(&command);
    assert!(port_is_free(port), "port {port} left busy");
    assert!(none_running(&command), "the target was left running");
    finished
}

#[test]
fn target_exiting_mid_run_keeps_the_readings_so_far() {
    let finished = run_fault("/exit-after?n=2500", &["-a", "1000"], &[]);
    assert_eq!(finished.code, 2);
    let result = finished.result();
    assert_eq!(result.outcome.status, OutcomeStatus::Failed);
    let error = result.outcome.error.as_deref().unwrap();
    assert!(error.contains("the target exited (exit code 7)"), "{error}");
    let output = result.outcome.target_output.join("\n");
    assert!(output.contains("exiting on request 2500"), "{output}");
    let route = &result.routes[0];
    assert_eq!(
        route.cycles.len(),
        2,
        "the two cycles before the exit are kept"
    );
    assert!(route.baseline.as_ref().unwrap().heap_used > 0);
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
    let result = finished.result();
    let error = result.outcome.error.as_deref().unwrap();
    assert!(error.contains("inspector connection closed"), "{error}");
    assert_eq!(result.routes[0].cycles.len(), 1);
    let verdict = verdict_of(&result.routes[0]);
    assert!(verdict.has_finding(FindingKind::Partial), "{verdict:#?}");
    assert!(
        matches!(result.outcome.target_stopped, Some(Stopped::Terminated(_))),
        "{:?}",
        result.outcome.target_stopped
    );
}

#[test]
fn server_that_stops_answering_ends_the_cycle_and_the_run_inconclusive() {
    let started = Instant::now();
    // -a 300 on 4 connections at a 1 s timeout used to wait 75 s per cycle.
    let finished = run_fault(
        "/stall",
        &["--cycles", "3", "-a", "300", "-c", "4", "--timeout", "1s"],
        &[],
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(finished.code, 2, "a route with no answer proves nothing");
    let result = finished.result();
    assert_eq!(result.outcome.status, OutcomeStatus::Failed);
    let error = result.outcome.error.as_deref().unwrap();
    assert!(error.contains("stopped answering"), "{error}");
    let route = &result.routes[0];
    assert_eq!(route.cycles.len(), 1, "the run stops at the stalled cycle");
    let cycle = &route.cycles[0];
    assert!(cycle.load.stalled);
    assert_eq!(cycle.load.timeouts, 4);
    assert_eq!(verdict_of(route).kind, VerdictKind::Inconclusive);
}

#[test]
fn target_ignoring_sigterm_is_killed_after_the_grace_period() {
    let finished = run_fault(
        "/ok",
        &["--cycles", "1", "-a", "200", "--grace", "500ms"],
        &[("IGNORE_SIGTERM", "1")],
    );
    let result = finished.result();
    assert_eq!(result.outcome.target_stopped, Some(Stopped::Killed));
    assert_eq!(result.outcome.port_freed, Some(true));
}

/// Starts a run of /ok that would take minutes and returns once its load
/// has started (progress prints a line per step when stderr is not a
/// terminal; the baseline is taken before the load).
fn start_long_run(port: u16, command: &[String], extra: &[&str], env: &[(&str, &str)]) -> Guard {
    let mut leakcheck_command = RunArgs::new(port)
        .table()
        .progress()
        .routes(&["/ok"])
        .requests("5000000")
        .args(extra)
        .envs(env)
        .command(command);
    leakcheck_command
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut guard = Guard::spawn(&mut leakcheck_command);
    wait_for_stderr(&mut guard, "sending load");
    guard
}

/// Starts a long run, signals leakcheck once the baseline is taken (twice
/// at once when `twice`, as `timeout` does: to leakcheck, then to its
/// process group), and checks the JSON it wrote.
fn interrupt_with(signal: i32, twice: bool) {
    let port = free_port();
    let command = target_command("fault-server.mjs", port);
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("partial.json");
    let json_text = json_path.display().to_string();
    let mut guard = start_long_run(port, &command, &["--json", &json_text], &[]);
    // SAFETY: signalling the leakcheck process this test started, by PID.
    unsafe { libc::kill(guard.pid() as i32, signal) };
    if twice {
        unsafe { libc::kill(guard.pid() as i32, signal) };
    }
    let status = guard.wait_within(Duration::from_secs(20));
    assert_eq!(status.code(), Some(2));
    let result: RunResult =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(
        result.outcome.status,
        OutcomeStatus::Interrupted,
        "{:#?}",
        result.outcome
    );
    let error = result.outcome.error.as_deref().unwrap();
    let name = if signal == libc::SIGTERM {
        "SIGTERM"
    } else {
        "SIGINT"
    };
    assert!(error.contains(name), "the signal is named: {error}");
    assert!(result.routes[0].baseline.as_ref().unwrap().heap_used > 0);
    assert_eq!(result.outcome.port_freed, Some(true));
    assert!(port_is_free(port));
    assert!(none_running(&command));
}

#[test]
fn ctrl_c_stops_the_target_and_writes_partial_results() {
    interrupt_with(libc::SIGINT, false);
}

#[test]
fn sigterm_stops_the_target_and_writes_partial_results() {
    interrupt_with(libc::SIGTERM, false);
}

#[test]
fn two_signals_at_once_still_write_the_partial_results() {
    interrupt_with(libc::SIGTERM, true);
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_the_target_still_dies() {
    let port = free_port();
    let command = target_command("fault-server.mjs", port);
    // A target that ignores SIGTERM and a long grace: the first Ctrl-C
    // would wait 60 s for it; the second must not.
    let ignore = [("IGNORE_SIGTERM", "1")];
    let mut guard = start_long_run(port, &command, &["--grace", "60s"], &ignore);
    let started = Instant::now();
    // SAFETY: signalling the leakcheck process this test started, by PID.
    unsafe { libc::kill(guard.pid() as i32, libc::SIGINT) };
    wait_for_stderr(&mut guard, "stopping the target");
    // A second signal right behind the first is the same keypress (or a
    // group-wide SIGTERM); only one after SECOND_SIGNAL_AFTER cuts short.
    std::thread::sleep(SECOND_SIGNAL_AFTER + Duration::from_millis(100));
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

#[test]
fn a_killed_leakcheck_leaves_no_grandchild_of_a_shell_target() {
    let port = free_port();
    let demo = repo_path("examples/demo-server.mjs").display().to_string();
    // The shell is the direct child; node is its child, out of reach of
    // the parent-death signal.
    let command = vec![
        "sh".to_string(),
        "-c".to_string(),
        format!("{} {demo} {port}; true", node()),
    ];
    let mut guard = start_long_run(port, &command, &[], &[]);
    let leakcheck_pid = guard.pid();
    let node_running = || {
        processes_matching(&demo).into_iter().any(|pid| {
            leakcheck::platform::procfs::command_line(pid).ends_with(&format!(" {port}"))
        })
    };
    assert!(node_running(), "the target runs under the shell");
    let _ = guard.0.kill();
    let _ = guard.0.wait();
    let deadline = Instant::now() + Duration::from_secs(5);
    while node_running() || !port_is_free(port) {
        assert!(
            Instant::now() < deadline,
            "node outlived a SIGKILLed leakcheck, or its port stayed busy"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The watchdog that did it is gone too.
    while leakcheck::platform::procfs::all_pids()
        .into_iter()
        .any(|pid| {
            is_watchdog(pid)
                && leakcheck::platform::procfs::command_line(pid)
                    .contains(&format!("{demo} {port}"))
        })
    {
        assert!(
            Instant::now() < deadline,
            "the watchdog of pid {leakcheck_pid} stayed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
