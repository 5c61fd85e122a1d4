//! Realistic traffic: templated requests, scenarios with captures and
//! cookies, clients that hang up, and an external load driver, each against
//! a leak that a fixed request cannot show (tests/targets/traffic-server.mjs).

use crate::util::*;

fn traffic(port: u16) -> Vec<String> {
    target_command("traffic-server.mjs", port)
}

#[test]
fn a_url_keyed_cache_shows_only_under_templated_requests() {
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/item?id=1", "/item?id={n}", "/item?id={n%1}"])
        .requests("3000")
        // 3 × 3 000 requests rule out about 94 B per request.
        .args(&["--no-diagnose", "--resolution", "128B"])
        .run(&traffic(port));
    let result = finished.result();
    let fixed = verdict_of(&result.routes[0]);
    assert_eq!(fixed.kind, VerdictKind::NoRetention, "{fixed:#?}");
    assert!(fixed.has_finding(FindingKind::FixedRequest), "{fixed:#?}");
    let varied = verdict_of(&result.routes[1]);
    assert_eq!(varied.kind, VerdictKind::Retention, "{varied:#?}");
    let per_request = heap_per_request(&result.routes[1]);
    assert!(per_request > 200.0, "an entry per id: {per_request}");
    assert!(!varied.has_finding(FindingKind::FixedRequest));
    // `{n%1}` is always 0: nothing grows, but the route is templated, so
    // the verdict must not claim every request was identical.
    let one_value = verdict_of(&result.routes[2]);
    assert!(!one_value.fails_gate, "{one_value:#?}");
    assert!(
        !one_value.has_finding(FindingKind::FixedRequest),
        "{one_value:#?}"
    );
    // The target counted exactly what was sent.
    for cycle in &result.routes[1].cycles {
        assert_eq!(cycle.served, Some(3000), "{cycle:#?}");
    }
    assert_eq!(finished.code, 1, "{}", finished.stderr);
}

const LOGIN: &str = r#"{ "steps": [
    { "name": "log in", "method": "POST", "path": "/login",
      "headers": { "content-type": "application/json" },
      "body": { "user": "u{n}" },
      "capture": { "token": "json:access.token" } },
    { "path": "/profile", "repeat": 5, "headers": { "x-session": "{token}" } }
] }"#;

#[test]
fn a_session_per_login_is_found_through_a_scenario_with_cookies() {
    let (_dir, scenario) = script("login.json", LOGIN);
    let scenario = scenario.display().to_string();
    let port = free_port();
    let finished = RunArgs::new(port)
        .requests("1000")
        .args(&["--scenario", &scenario, "--no-diagnose"])
        .run(&traffic(port));
    let result = finished.result();
    assert_eq!(result.settings.unit, leakcheck::model::Unit::Iteration);
    let route = &result.routes[0];
    let verdict = verdict_of(route);
    assert_eq!(verdict.kind, VerdictKind::Retention, "{verdict:#?}");
    assert!(
        verdict.summary.contains("per iteration"),
        "{}",
        verdict.summary
    );
    for cycle in &route.cycles {
        assert_eq!(cycle.units, 1000);
        assert_eq!(cycle.load.iterations, Some(1000));
        assert_eq!(
            cycle.load.failed_iterations,
            Some(0),
            "{:?}",
            cycle.load.failure_reasons
        );
        // Every /profile carried the session cookie: 6 answers an iteration, all 2xx.
        assert_eq!(cycle.load.status.s2xx, 6000);
    }
    let per_login = heap_per_request(route);
    assert!(per_login > 200.0, "a session per login: {per_login}");
}

#[test]
fn a_capture_that_finds_nothing_fails_the_iteration_with_its_reason() {
    let (_dir, scenario) = script(
        "broken.json",
        &LOGIN.replace("json:access.token", "json:access.missing"),
    );
    let port = free_port();
    let mut server = std::process::Command::new(node());
    server
        .args(&traffic(port)[1..])
        .stdout(std::process::Stdio::null());
    let _server = Guard::spawn(&mut server);
    wait_listening(port);
    let url = format!("http://127.0.0.1:{port}");
    let finished = run_leakcheck(&[
        "load",
        &url,
        "--scenario",
        &scenario.display().to_string(),
        "-a",
        "20",
        "-c",
        "2",
        "--json",
        "-",
        "-q",
    ]);
    let json = finished.json();
    assert_eq!(json["iterations"], 0, "{json:#}");
    assert_eq!(json["failed_iterations"], 20);
    assert_eq!(json["2xx"], 20, "only the logins went out");
    let reasons = json["failure_reasons"].to_string();
    assert!(reasons.contains("step 1 (log in)"), "{reasons}");
    assert!(
        reasons.contains("capture token (json:access.missing) found nothing"),
        "{reasons}"
    );
}

#[test]
fn a_listener_leak_appears_only_when_clients_hang_up() {
    let port = free_port();
    let base = RunArgs::new(port)
        .routes(&["/listen"])
        .requests("2000")
        .args(&["--no-diagnose"]);
    let finished = base.args(&["--abort", "0.5"]).run(&traffic(port));
    let result = finished.result();
    let route = &result.routes[0];
    let verdict = verdict_of(route);
    assert_eq!(verdict.kind, VerdictKind::Retention, "{verdict:#?}");
    for cycle in &route.cycles {
        assert_eq!(cycle.load.aborted, 1000, "exactly half hung up");
        assert_eq!(cycle.responses, 1000);
        assert_eq!(cycle.errors, 0);
    }
    assert_eq!(result.settings.abort, Some(0.5));

    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/listen"])
        .requests("2000")
        .args(&["--no-diagnose"])
        .run(&traffic(port));
    let verdict = verdict_of(&finished.result().routes[0]).clone();
    assert!(
        !verdict.fails_gate,
        "without hang-ups the listeners are removed: {verdict:#?}"
    );
}

#[test]
fn an_external_driver_is_measured_by_what_the_target_served() {
    let driver = format!(
        "{} {}",
        node(),
        repo_path("tests/targets/driver.mjs").display()
    );
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/item"])
        .requests("3000")
        .args(&["--load-cmd", &driver, "--no-diagnose"])
        .run(&traffic(port));
    let result = finished.result();
    let route = &result.routes[0];
    for cycle in &route.cycles {
        let driver = cycle.driver.as_ref().expect("the cycle ran the driver");
        assert!(driver.succeeded(), "{driver:#?}");
        // The log itself is removed with the run's private folder; its
        // last lines are in the report.
        assert!(!driver.log_kept);
        assert!(
            !std::path::Path::new(&driver.log).exists(),
            "{}",
            driver.log
        );
        assert!(
            driver
                .output_tail
                .iter()
                .any(|l| l.contains("sent 3000 requests")),
            "{:?}",
            driver.output_tail
        );
        assert_eq!(cycle.served, Some(3000), "the target's own count");
        assert_eq!(cycle.units, 3000);
    }
    assert_eq!(verdict_of(route).kind, VerdictKind::Retention);
    let external = heap_per_request(route);

    let port = free_port();
    let builtin = RunArgs::new(port)
        .routes(&["/item?id={n}"])
        .requests("3000")
        .args(&["--no-diagnose"])
        .run(&traffic(port));
    let builtin = heap_per_request(&builtin.result().routes[0]);
    let ratio = external / builtin;
    assert!(
        (0.75..=1.25).contains(&ratio),
        "bytes per request: driver {external:.0}, built-in {builtin:.0}"
    );
}

/// GET /orders keeps nothing, POST /orders keeps every order: the
/// diagnosis' extra cycle must send the driver's POSTs, or it snapshots a
/// cycle in which nothing grew and names no holder.
#[test]
fn the_diagnosis_of_a_driver_only_leak_runs_the_driver_and_names_its_holder() {
    let driver = format!(
        "DRIVER_METHOD=POST {} {}",
        node(),
        repo_path("tests/targets/driver.mjs").display()
    );
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/orders"])
        .requests("1500")
        .args(&["--load-cmd", &driver])
        .run(&traffic(port));
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let result = finished.result();
    let route = &result.routes[0];
    assert!(verdict_of(route).fails_gate, "{:#?}", route.verdict);
    let diagnosis = route.diagnosis.as_ref().expect("a diagnosis");
    assert!(
        diagnosis.holders.iter().any(|h| h.name == "postedOrders"),
        "{:#?}",
        diagnosis.holders
    );
    // The extra cycle's units are what the target served of the driver's
    // requests, not a guess.
    assert_eq!(diagnosis.requests, 1500, "{diagnosis:#?}");
}

#[test]
fn a_failing_driver_fails_the_cycle_and_is_never_clean() {
    let logs = tempfile::tempdir().unwrap();
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/item"])
        .requests("10")
        .args(&["--load-cmd", "echo broken >&2; exit 3"])
        .args(&["--driver-logs", logs.path().to_str().unwrap()])
        .run(&traffic(port));
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let result = finished.result();
    let route = &result.routes[0];
    assert_eq!(route.cycles.len(), 1);
    let driver = route.cycles[0].driver.as_ref().unwrap();
    assert_eq!(driver.exit.exit_code, Some(3));
    assert_eq!(driver.output_tail, ["broken"]);
    // --driver-logs keeps the log, private to its owner.
    use std::os::unix::fs::PermissionsExt;
    assert!(driver.log_kept);
    assert!(driver.log.starts_with(logs.path().to_str().unwrap()));
    assert_eq!(std::fs::read_to_string(&driver.log).unwrap(), "broken\n");
    let mode = std::fs::metadata(&driver.log).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(verdict_of(route).kind, VerdictKind::Inconclusive);
    assert!(
        result
            .outcome
            .error
            .as_deref()
            .unwrap()
            .contains("exited with exit code 3")
    );
}

#[test]
fn a_bad_scenario_is_refused_before_the_target_starts() {
    let (_dir, scenario) = script(
        "bad.json",
        r#"{"steps":[{"path":"/login"},{"pth":"/profile"}]}"#,
    );
    let (_marker_dir, marker) = script("never-started.mjs", "console.log('must not run');");
    let command = vec![node(), marker.display().to_string()];
    let finished = RunArgs::new(free_port())
        .args(&["--scenario", &scenario.display().to_string()])
        .run(&command);
    assert_eq!(finished.code, 2);
    assert!(
        finished
            .stderr
            .contains("bad.json: step 2: unknown field `pth`"),
        "{}",
        finished.stderr
    );
    assert!(processes_matching(&marker.display().to_string()).is_empty());
}
