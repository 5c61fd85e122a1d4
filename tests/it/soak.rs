//! `leakcheck soak`: a constant load with settled readings at an interval,
//! growth per hour and the projection to the heap limit; Ctrl-C keeps what
//! was measured.

use std::process::Stdio;
use std::time::Duration;

use crate::util::*;

fn soak(route: &str, port: u16) -> Finished {
    RunArgs::new(port)
        .soak()
        .routes(&[route])
        // 20 s at 1 000 requests a second rule out about 28 B per request.
        .args(&["-d", "20s", "--every", "5s", "-R", "1000", "--no-diagnose"])
        .args(&["--resolution", "64B"])
        .run(&demo_command(port))
}

#[test]
fn a_leaking_route_is_projected_to_the_heap_limit() {
    let port = free_port();
    let finished = soak("/leak", port);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    validate(&finished.stdout);
    let result = finished.result();
    let route = &result.routes[0];
    assert_eq!(verdict_of(route).kind, VerdictKind::Retention);
    // Four intervals of about five seconds, none a short remainder.
    assert_eq!(route.cycles.len(), 4, "{:#?}", route.cycles.len());
    assert!(route.cycles.iter().all(|c| c.duration_s > 3.0));
    let soak = route.soak.as_ref().expect("the soak's summary");
    assert!(soak.requests > 15_000, "{}", soak.requests);
    assert!(soak.heap_size_limit.unwrap() > 100 << 20);
    let hours = soak.hours_to_limit.expect("a projection");
    assert!(hours > 0.1 && hours < 1000.0, "{hours}");
    assert!(soak.growth_bytes_per_hour > 100.0 * 1024.0 * 1024.0);
    assert!(
        soak.projection
            .starts_with("at this rate heapUsed reaches the"),
        "{}",
        soak.projection
    );
    assert!(result.settings.soak.is_some());
}

#[test]
fn a_clean_route_says_no_growth() {
    let port = free_port();
    let finished = soak("/churn", port);
    // Never a leak. Node 22's heap crept 6.6 → 6.9 → 7.1 → 7.4 MB over
    // one CI run's 20 s (0.2 MB a step against ±0.1 MB): undecided, exit 2,
    // with "soak longer"; no growth otherwise.
    assert_ne!(finished.code, 1, "{}", finished.stderr);
    let result = finished.result();
    let soak = result.routes[0].soak.as_ref().unwrap();
    assert_eq!(soak.hours_to_limit, None);
    let expected = match finished.code {
        0 => "no growth",
        _ => "no projection: the readings cannot decide yet",
    };
    assert!(
        soak.projection.starts_with(expected),
        "exit {}: {}",
        finished.code,
        soak.projection
    );
}

#[test]
fn ctrl_c_ends_a_soak_and_still_reports_its_readings() {
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("soak.json").display().to_string();
    let command = demo_command(port);
    let mut leakcheck = RunArgs::new(port)
        .soak()
        .table()
        .progress()
        .routes(&["/leak"])
        .args(&["-d", "5m", "--every", "2s", "-R", "500", "--json", &json])
        .command(&command);
    leakcheck.stdout(Stdio::null()).stderr(Stdio::piped());
    let mut guard = Guard::spawn(&mut leakcheck);
    // The second settled reading has been taken.
    wait_for_stderr(&mut guard, "cycle 2 done");
    // SAFETY: signalling the leakcheck process this test started, by PID.
    unsafe { libc::kill(guard.pid() as i32, libc::SIGINT) };
    let status = guard.wait_within(Duration::from_secs(20));
    assert_eq!(status.code(), Some(2));
    let result: RunResult = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(result.outcome.status, OutcomeStatus::Interrupted);
    let route = &result.routes[0];
    assert!(route.cycles.len() >= 2, "{}", route.cycles.len());
    let soak = route.soak.as_ref().expect("the projection so far is kept");
    // The load's figures so far, not zeros (every interval's requests).
    let sent: u64 = route.cycles.iter().map(|c| c.requests).sum();
    assert!(soak.load.requests >= sent && sent > 0, "{:#?}", soak.load);
    assert!(none_running(&command));
    assert!(port_is_free(port));
}

#[test]
fn a_soak_refuses_an_interval_longer_than_its_duration() {
    let finished = run_leakcheck(&[
        "soak",
        "--url",
        "http://127.0.0.1:9",
        "-d",
        "5s",
        "--every",
        "10s",
        "--",
        "node",
        "x.js",
    ]);
    assert_eq!(finished.code, 2);
    assert!(finished.stderr.contains("--every"), "{}", finished.stderr);
}
