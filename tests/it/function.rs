//! `leakcheck fn MODULE#EXPORT`: library code as the workload, no server.
//! Real Node processes run leakcheck's harness over the modules in
//! tests/targets/functions: leaks named by their holder (a cache, an
//! emitter's listeners, a promise chain given by --setup), their bounded
//! and clean twins clean, and a function that only throws inconclusive.

use leakcheck::model::{FindingKind, Unit, VerdictKind};

use crate::util::*;

/// `leakcheck fn tests/targets/functions/TARGET` with `extra` flags.
fn check(target: &str, extra: &[&str]) -> Finished {
    let mut command = leakcheck();
    command
        .arg("fn")
        .arg(repo_path(&format!("tests/targets/functions/{target}")))
        .args(["-q", "--json", "-"])
        .args(extra)
        .env("LEAKCHECK_NODE", node());
    run_to_end(command)
}

fn holder_of(finished: &Finished) -> String {
    let result = finished.result();
    let route = &result.routes[0];
    route
        .diagnosis
        .as_ref()
        .and_then(|d| d.holders.first())
        .map(|h| h.name.clone())
        .unwrap_or_else(|| panic!("no holder: {:#?}", route.diagnosis))
}

#[test]
fn an_unbounded_cache_leaks_per_call_and_its_bounded_twin_is_clean() {
    let leaky = check("lru.mjs#cached", &[]);
    assert_eq!(leaky.code, 1, "{}", leaky.stderr);
    validate(&leaky.stdout);
    let result = leaky.result();
    assert_eq!(result.settings.unit, Unit::Call);
    let verdict = verdict_of(&result.routes[0]);
    assert_eq!(verdict.kind, VerdictKind::Retention, "{verdict:#?}");
    assert!(verdict.summary.contains("per call"), "{}", verdict.summary);
    assert_eq!(holder_of(&leaky), "cache");
    // The line that stores into it.
    assert!(verdict.action.contains("lru.mjs:"), "{}", verdict.action);

    let bounded = check("lru.mjs#bounded", &[]);
    assert_eq!(bounded.code, 0, "{}", bounded.stderr);
    assert_eq!(
        verdict_of(&bounded.result().routes[0]).kind,
        VerdictKind::NoRetention
    );
}

/// A function that registers its plugin on every call (issue 60): each
/// call keeps a hook and runs every hook so far, so it slows as it leaks.
/// Its cycles end at their time target, the verdict is retention with its
/// holder, and the slowdown is a finding; registered once, it is clean.
#[test]
fn a_function_that_slows_as_it_leaks_is_retention_with_its_holder_and_a_slowdown() {
    let slowing = check("plugins.mjs#register", &[]);
    assert_eq!(slowing.code, 1, "{}", slowing.stderr);
    let result = slowing.result();
    let route = &result.routes[0];
    let verdict = verdict_of(route);
    assert_eq!(verdict.kind, VerdictKind::Retention, "{verdict:#?}");
    assert_eq!(holder_of(&slowing), "hooks");
    let slowdown = verdict
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Slowdown)
        .unwrap_or_else(|| panic!("no slowdown: {verdict:#?}"));
    assert!(
        slowdown.message.contains("per call in cycle 1"),
        "{}",
        slowdown.message
    );
    // Slower calls, so later cycles end at the 5 s target with fewer.
    assert_eq!(result.settings.cycle_time_s, Some(5.0));
    assert!(
        route.cycles.iter().any(|c| c.load.time_bound),
        "{:#?}",
        route.cycles
    );
    for cycle in &route.cycles {
        assert!(cycle.units == 2500 || cycle.load.time_bound, "{cycle:#?}");
    }

    let once = check("plugins.mjs#registerOnce", &["--no-diagnose"]);
    assert_eq!(once.code, 0, "{}", once.stderr);
    let verdict = verdict_of(&once.result().routes[0]).clone();
    assert_eq!(verdict.kind, VerdictKind::NoRetention, "{verdict:#?}");
    assert!(!verdict.has_finding(FindingKind::Slowdown), "{verdict:#?}");
}

#[test]
fn a_listener_per_call_and_a_promise_chain_from_setup_are_named() {
    let listeners = check("emitter.mjs#subscribe", &[]);
    assert_eq!(listeners.code, 1, "{}", listeners.stderr);
    assert_eq!(holder_of(&listeners), "connection._events.message");

    let chained = check("promises.mjs#enqueue", &["--setup", "setup", "-c", "4"]);
    assert_eq!(chained.code, 1, "{}", chained.stderr);
    let result = chained.result();
    assert_eq!(result.settings.connections, 4);
    assert_eq!(holder_of(&chained), "setupResult.tail");
}

#[test]
fn a_clean_parser_and_an_empty_function_read_clean_and_a_throwing_one_inconclusive() {
    for clean in ["parser.cjs#parse", "parser.cjs#empty"] {
        let finished = check(clean, &[]);
        assert_eq!(finished.code, 0, "{clean}: {}", finished.stderr);
        let verdict = verdict_of(&finished.result().routes[0]).clone();
        assert_eq!(
            verdict.kind,
            VerdictKind::NoRetention,
            "{clean}: {verdict:#?}"
        );
    }
    let throws = check("parser.cjs#throws", &[]);
    assert_eq!(throws.code, 2, "{}", throws.stderr);
    let result = throws.result();
    let route = &result.routes[0];
    let verdict = verdict_of(route);
    assert_eq!(verdict.kind, VerdictKind::Inconclusive);
    assert!(
        verdict
            .summary
            .contains("TypeError: the input is not a document"),
        "{}",
        verdict.summary
    );
    assert_eq!(route.cycles[0].errors, route.cycles[0].requests);
}

#[test]
fn a_module_or_export_that_is_not_there_is_named() {
    let missing = check("lru.mjs#evict", &[]);
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("has no exported function `evict`")
            && missing.stderr.contains("(it exports: bounded, cached)"),
        "{}",
        missing.stderr
    );
    let no_file = check("nothing-here.mjs#f", &[]);
    assert_eq!(no_file.code, 2);
    assert!(
        no_file.stderr.contains("could not be loaded"),
        "{}",
        no_file.stderr
    );
}

#[test]
fn a_call_that_never_settles_fails_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("hangs.mjs");
    std::fs::write(
        &module,
        "export function hangs() { return new Promise(() => {}); }\n",
    )
    .unwrap();
    let mut command = leakcheck();
    command
        .arg("fn")
        .arg(format!("{}#hangs", module.display()))
        .args([
            "-q",
            "--json",
            "-",
            "--cycles",
            "3",
            "-n",
            "4",
            "-c",
            "4",
            "--timeout",
            "200ms",
        ])
        .env("LEAKCHECK_NODE", node());
    let finished = run_to_end(command);
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let result = finished.result();
    let cycle = &result.routes[0].cycles[0];
    assert_eq!((cycle.errors, cycle.load.timeouts), (4, 4), "{cycle:#?}");
    assert!(
        verdict_of(&result.routes[0])
            .summary
            .contains("no answer within 200 ms"),
        "{:#?}",
        result.routes[0].verdict
    );
}
