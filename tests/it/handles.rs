//! Handles and listeners as series, and the event loop and collections
//! per cycle: a timer per request never cleared, sockets to an upstream
//! never closed, a cleared twin, and a large heap whose collections stall
//! the loop without any leak.

use leakcheck::model::{MetricFit, Series, Trend};

use crate::util::*;

fn handles_run(route: &str, requests: &str) -> (Finished, RunResult) {
    let port = free_port();
    let command = target_command("handles-server.mjs", port);
    let finished = RunArgs::new(port)
        .routes(&[route])
        .requests(requests)
        .args(&["--no-diagnose"])
        .run(&command);
    assert!(none_running(&command));
    validate(&finished.stdout);
    let result = finished.result();
    (finished, result)
}

fn fit<'a>(route: &'a RouteResult, name: &str) -> Option<&'a MetricFit> {
    verdict_of(route)
        .fits
        .iter()
        .find(|f| f.metric == Series::Resource(leakcheck::model::Resource::parse(name).unwrap()))
}

#[test]
fn a_timer_per_request_never_cleared_is_handle_growth() {
    let (finished, result) = handles_run("/interval", "1000");
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let route = &result.routes[0];
    let timers = fit(route, "active_resources.Timeout").expect("Timeout is a series");
    assert_eq!(timers.trend, Trend::Growing);
    assert!(
        (timers.slope_bytes_per_request - 1.0).abs() < 0.05,
        "{timers:#?}"
    );
    let verdict = verdict_of(route);
    assert!(verdict.fails_gate, "{verdict:#?}");
    let finding = verdict
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::HandleGrowth)
        .unwrap_or_else(|| panic!("{verdict:#?}"));
    assert!(
        finding
            .message
            .contains("`Timeout` per request is never cleared")
    );
}

#[test]
fn sockets_left_open_to_an_upstream_are_handle_growth() {
    let (finished, result) = handles_run("/upstream", "500");
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let route = &result.routes[0];
    let sockets = fit(route, "active_resources.TCPSocketWrap").expect("sockets are a series");
    // Each request leaves two open, the client's and the upstream's end;
    // the upstream accepts on its own schedule, so at a reading some
    // clients' ends are not yet matched (1.5 to 2.1 per request measured,
    // lower on a busy machine). One per request is the client's alone.
    assert!(sockets.slope_bytes_per_request > 1.0, "{sockets:#?}");
    assert!(verdict_of(route).has_finding(FindingKind::HandleGrowth));
}

#[test]
fn a_timer_cleared_when_the_response_ends_is_not_a_leak() {
    let (finished, result) = handles_run("/cleared", "1000");
    let route = &result.routes[0];
    let verdict = verdict_of(route);
    assert!(
        !verdict.has_finding(FindingKind::HandleGrowth),
        "{verdict:#?}"
    );
    assert!(!verdict.fails_gate, "{verdict:#?}");
    // The heap alone may read inconclusive at 1000 requests a cycle (exit
    // 2); what matters here is that no handle makes it a leak.
    assert_ne!(finished.code, 1, "{}", finished.stderr);
    // The listener counts are read too: the server's request listener.
    let baseline = route.baseline.as_ref().unwrap();
    assert_eq!(
        baseline.resources.get("listeners.server.request"),
        Some(&1.0)
    );
}

#[test]
fn collections_of_a_large_heap_stall_the_loop_without_a_leak() {
    let port = free_port();
    let command = target_command("gc-server.mjs", port);
    let finished = RunArgs::new(port)
        .routes(&["/garbage"])
        .requests("5000")
        .run(&command);
    assert!(none_running(&command));
    validate(&finished.stdout);
    let result = finished.result();
    let route = &result.routes[0];
    let verdict = verdict_of(route);
    assert!(!verdict.fails_gate, "{verdict:#?}");
    let worst_gc = route
        .cycles
        .iter()
        .filter_map(|c| c.gc.as_ref())
        .map(|g| g.max_ms)
        .fold(0.0, f64::max);
    let worst_lag = route
        .cycles
        .iter()
        .filter_map(|c| c.event_loop.as_ref())
        .map(|l| l.delay_max_ms)
        .fold(0.0, f64::max);
    assert!(worst_gc > 30.0, "longest pause {worst_gc} ms");
    assert!(worst_lag > 30.0, "longest delay {worst_lag} ms");
    assert!(
        route
            .cycles
            .iter()
            .filter_map(|c| c.gc.as_ref())
            .all(|g| g.count >= g.by_kind.mark_compact && g.by_kind.scavenge > 0)
    );
    let finding = verdict
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::GcPauses)
        .unwrap_or_else(|| panic!("{verdict:#?}"));
    assert!(
        finding.message.contains("p99 latency"),
        "{}",
        finding.message
    );
}

#[test]
fn no_loop_stats_leaves_the_target_unobserved() {
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/cleared"])
        .requests("300")
        .args(&["--no-loop-stats", "--no-diagnose"])
        .run(&target_command("handles-server.mjs", port));
    let result = finished.result();
    assert!(
        result.routes[0]
            .cycles
            .iter()
            .all(|c| c.event_loop.is_none() && c.gc.is_none())
    );
}

/// A target starved of CPU (a busy loop pinned to its core) has GC pauses
/// that are long by the clock; their CPU time is read beside the wall time
/// (V8's `tdur`), and the verdict judges pauses on it, so a busy machine
/// is not blamed on the collector.
#[test]
fn a_starved_target_reports_gc_cpu_time_below_wall_time_and_no_gc_blame() {
    if std::process::Command::new("taskset")
        .arg("-V")
        .output()
        .is_err()
    {
        assert!(!in_ci(), "CI=true and taskset is not installed");
        return;
    }
    let mut burner = Guard::spawn(std::process::Command::new("taskset").args([
        "-c",
        "0",
        &node(),
        "-e",
        "for(;;);",
    ]));
    let port = free_port();
    let mut command = vec!["taskset".to_string(), "-c".into(), "0".into()];
    command.extend(demo_command(port));
    let finished = RunArgs::new(port)
        .routes(&["/churn"])
        .requests("3000")
        .cycles(3)
        .args(&["--resolution", "1KB", "--no-diagnose"])
        .run(&command);
    let _ = burner.0.kill();
    let result = finished.result();
    let route = &result.routes[0];
    let mut wall = 0.0;
    let mut cpu = 0.0;
    for cycle in &route.cycles {
        let gc = cycle.gc.as_ref().expect("GC figures");
        wall += gc.total_ms;
        cpu += gc.cpu_total_ms.expect("the pauses' CPU time");
    }
    assert!(cpu > 0.0 && cpu < wall, "cpu {cpu} ms, wall {wall} ms");
    assert!(!verdict_of(route).has_finding(FindingKind::GcPauses));
}
