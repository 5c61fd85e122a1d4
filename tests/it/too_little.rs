//! Paths that measured too little say so: a scenario whose every iteration
//! fails, an external driver that served nothing or a fraction of what it
//! was asked, and cycles too small to see a leak of the resolution are
//! `inconclusive` (exit 2) with the reason, never a clean pass.

use crate::util::*;

#[test]
fn a_scenario_whose_every_iteration_fails_is_inconclusive_naming_the_step() {
    // /churn answers 200; the step expects 201, so no iteration completes
    // although every request is answered 2xx.
    let (_dir, scenario) = script(
        "fails.json",
        r#"{"steps":[{"path":"/leak"},{"path":"/churn","expect":"201"}]}"#,
    );
    let port = free_port();
    let finished = RunArgs::new(port)
        .requests("200")
        .args(&["--scenario", scenario.to_str().unwrap(), "--no-diagnose"])
        .run(&demo_command(port));
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let result = finished.result();
    let verdict = verdict_of(&result.routes[0]);
    assert_eq!(verdict.kind, VerdictKind::Inconclusive, "{verdict:#?}");
    assert!(
        verdict.summary.contains("completed no iteration")
            && verdict.summary.contains("step 2")
            && verdict.summary.contains("expected 201"),
        "{}",
        verdict.summary
    );
}

#[test]
fn a_driver_that_serves_nothing_or_a_fraction_is_inconclusive_with_the_counts() {
    let port = free_port();
    let nothing = RunArgs::new(port)
        .routes(&["/leak"])
        .requests("300")
        .args(&["--load-cmd", "true", "--no-diagnose"])
        .run(&demo_command(port));
    assert_eq!(nothing.code, 2, "{}", nothing.stderr);
    let verdict = verdict_of(&nothing.result().routes[0]).clone();
    assert_eq!(verdict.kind, VerdictKind::Inconclusive, "{verdict:#?}");
    assert!(
        verdict
            .summary
            .contains("asked for 300 requests and the target served 0"),
        "{}",
        verdict.summary
    );

    // One request of the 300 asked for.
    let one = format!(
        "{} -e \"fetch(process.env.LEAKCHECK_URL + process.env.LEAKCHECK_ROUTE).then((r) => r.text())\"",
        node()
    );
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/leak"])
        .requests("300")
        .args(&["--load-cmd", &one, "--no-diagnose"])
        .run(&demo_command(port));
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    validate(&finished.stdout);
    let result = finished.result();
    let route = &result.routes[0];
    let driver = route.cycles[0].driver.as_ref().unwrap();
    assert_eq!(driver.requests_asked, Some(300));
    assert_eq!(route.cycles[0].served, Some(1));
    let verdict = verdict_of(route);
    assert_eq!(verdict.kind, VerdictKind::Inconclusive, "{verdict:#?}");
    assert!(
        verdict
            .summary
            .contains("asked for 300 requests and the target served 1"),
        "{}",
        verdict.summary
    );
}

/// `-a 300 --cycles 3` on the demo's /leak (about 0.4 KB a request) grows
/// 0.13 MB a cycle, under the heap's noise: it read `no-retention` before.
#[test]
fn cycles_too_small_to_see_a_leak_of_the_resolution_are_inconclusive() {
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/leak"])
        .requests("300")
        .cycles(3)
        .args(&["--no-diagnose"])
        .run(&demo_command(port));
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let result = finished.result();
    let verdict = verdict_of(&result.routes[0]);
    assert_eq!(verdict.kind, VerdictKind::Inconclusive, "{verdict:#?}");
    assert!(
        verdict.summary.contains("can only rule out a leak above"),
        "{}",
        verdict.summary
    );
    assert!(
        verdict.action.contains("--cycles auto"),
        "{}",
        verdict.action
    );
    assert!(
        finished.stderr.contains("inconclusive"),
        "{}",
        finished.stderr
    );
}
