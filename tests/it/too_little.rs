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

/// The demo's /leak driven by `driver`, asked for 300 requests a cycle:
/// the run, which must be inconclusive with the served count in its words.
fn driven(driver: &str, served: u64) -> RunResult {
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/leak"])
        .requests("300")
        .args(&["--load-cmd", driver, "--no-diagnose"])
        .run(&demo_command(port));
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    validate(&finished.stdout);
    let result = finished.result();
    let verdict = verdict_of(&result.routes[0]);
    assert_eq!(verdict.kind, VerdictKind::Inconclusive, "{verdict:#?}");
    let counts = format!("asked for 300 requests and the target served {served}");
    assert!(verdict.summary.contains(&counts), "{}", verdict.summary);
    result
}

#[test]
fn a_driver_that_serves_nothing_or_a_fraction_is_inconclusive_with_the_counts() {
    driven("true", 0);
    // One request of the 300 asked for.
    let one = format!(
        "{} -e \"fetch(process.env.LEAKCHECK_URL + process.env.LEAKCHECK_ROUTE).then((r) => r.text())\"",
        node()
    );
    let result = driven(&one, 1);
    let cycle = &result.routes[0].cycles[0];
    assert_eq!(cycle.driver.as_ref().unwrap().requests_asked, Some(300));
    assert_eq!(cycle.served, Some(1));
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
