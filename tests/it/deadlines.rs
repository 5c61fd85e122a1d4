//! Nothing waits forever: a target whose event loop blocks, a counter
//! expression that never returns, a --load-cmd that never ends and a page
//! script that spins each end within a bounded time, with the readings
//! taken so far in the JSON. The limits are short here (a few seconds);
//! the bounds asserted are generous against a busy machine.

use std::time::{Duration, Instant};

use crate::util::*;

/// Every case ends well within this (its limits add up to under 15 s).
const BOUNDED: Duration = Duration::from_secs(60);

/// Three cycles of 300 requests to a target that blocks its event loop
/// for good on request `n`, with short limits.
fn blocking_run(port: u16, n: u32) -> Finished {
    RunArgs::new(port)
        .routes(&[&format!("/block-after?n={n}")])
        .requests("300")
        .cycles(3)
        .args(&[
            "--timeout",
            "1s",
            "--inspector-timeout",
            "3s",
            "--no-diagnose",
        ])
        .run(&target_command("fault-server.mjs", port))
}

#[test]
fn a_target_whose_event_loop_blocks_ends_the_run_with_the_readings_so_far() {
    let port = free_port();
    let started = Instant::now();
    let finished = blocking_run(port, 400);
    assert!(started.elapsed() < BOUNDED, "{:?}", started.elapsed());
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let result = finished.result();
    let route = &result.routes[0];
    assert!(route.baseline.is_some());
    assert!(!route.cycles.is_empty(), "cycle 1 ran before the block");
    let error = result.outcome.error.as_deref().unwrap();
    assert!(
        error.contains("stopped answering") || error.contains("did not answer its inspector"),
        "{error}"
    );
    assert!(port_is_free(port));
}

#[test]
fn a_counter_that_never_returns_ends_the_run_and_is_named() {
    let port = free_port();
    let started = Instant::now();
    let finished = RunArgs::new(port)
        .routes(&["/ok"])
        .requests("100")
        .cycles(3)
        .args(&["--counter", "spin=(()=>{while(1){}})()"])
        .args(&["--inspector-timeout", "3s", "--no-diagnose"])
        .run(&target_command("fault-server.mjs", port));
    assert!(started.elapsed() < BOUNDED, "{:?}", started.elapsed());
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let error = finished.result().outcome.error.unwrap();
    assert!(
        error.contains("did not answer its inspector within 3 s"),
        "{error}"
    );
    assert!(error.contains("--counter"), "{error}");
    // The baseline itself never came: the route still says why.
    let result = finished.result();
    let verdict = verdict_of(&result.routes[0]);
    assert_eq!(verdict.kind, VerdictKind::Inconclusive, "{verdict:#?}");
    assert!(
        verdict.summary.contains("before its baseline"),
        "{verdict:#?}"
    );
    assert!(verdict.action.contains("--counter"), "{verdict:#?}");
}

#[test]
fn a_route_ended_before_its_first_cycle_is_inconclusive_with_the_reason() {
    // The target blocks on the 50th request of 300: the first cycle's
    // reading never comes, so the route has a baseline and no cycle.
    let port = free_port();
    let finished = blocking_run(port, 50);
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let result = finished.result();
    let route = &result.routes[0];
    assert!(
        route.baseline.is_some() && route.cycles.is_empty(),
        "{route:#?}"
    );
    let verdict = verdict_of(route);
    assert_eq!(verdict.kind, VerdictKind::Inconclusive, "{verdict:#?}");
    assert!(!verdict.fails_gate);
    assert!(
        verdict.summary.contains("before its first cycle"),
        "{verdict:#?}"
    );
    assert!(
        verdict
            .action
            .contains("did not answer its inspector within 3 s"),
        "{verdict:#?}"
    );
    // Every report says it, the terminal's too.
    assert!(
        finished.stdout.contains("not judged"),
        "{}",
        finished.stdout
    );
    assert!(port_is_free(port));
}

#[test]
fn a_load_cmd_that_never_ends_is_stopped_once_the_target_serves_nothing() {
    let port = free_port();
    let started = Instant::now();
    let finished = RunArgs::new(port)
        .routes(&["/ok"])
        .requests("100")
        .args(&[
            "--load-cmd",
            "sleep 1000",
            "--timeout",
            "2s",
            "--no-diagnose",
        ])
        .run(&target_command("fault-server.mjs", port));
    assert!(started.elapsed() < BOUNDED, "{:?}", started.elapsed());
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let result = finished.result();
    let cycle = &result.routes[0].cycles[0];
    assert!(cycle.load.stalled, "{cycle:#?}");
    assert!(cycle.duration_s < 10.0, "{cycle:#?}");
    assert!(
        processes_matching("sleep 1000").is_empty(),
        "the driver was left running"
    );
    let error = result.outcome.error.unwrap();
    assert!(error.contains("stopped answering"), "{error}");
}

#[test]
fn a_setsid_child_of_the_load_cmd_is_stopped_when_the_command_ends() {
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("escaped.pid");
    // The helper leaves the driver's process group and outlives the
    // command; it writes its PID so the test can stop it if leakcheck
    // did not.
    let command = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 987' & sleep 0.5",
        pid_file.display()
    );
    let finished = RunArgs::new(port)
        .routes(&["/ok"])
        .requests("50")
        .cycles(1)
        .args(&["--load-cmd", &command, "--timeout", "2s", "--no-diagnose"])
        .run(&target_command("fault-server.mjs", port));
    let escaped: Option<u32> = std::fs::read_to_string(&pid_file)
        .ok()
        .and_then(|p| p.trim().parse().ok());
    let left = processes_matching("sleep 987");
    for pid in &left {
        // SAFETY: kill(2) on the helper this test's command started.
        unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
    }
    assert!(escaped.is_some(), "the helper started: {}", finished.stderr);
    assert!(left.is_empty(), "the setsid helper outlived the run");
    let result = finished.result();
    let driver = result.routes[0].cycles[0].driver.as_ref().unwrap();
    assert_eq!(driver.outlived, 1, "{driver:#?}");
    validate(&finished.stdout);
    assert!(
        finished.stdout.contains("left 1 processes running") || finished.stderr.contains("left 1"),
        "{}",
        finished.stdout
    );
}
