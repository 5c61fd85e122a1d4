//! One test target per row of the reading table, each run through
//! `leakcheck run` with bounded load and checked for its verdict; plus the
//! CI gate, fresh processes per route, counters and the endpoint probe.

use crate::util::*;

/// Runs leakcheck on the rows server, 3 cycles of `requests`, with
/// `extra` flags before `--` and `env` for the target.
fn check(
    routes: &[&str],
    requests: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Finished, RunResult) {
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(routes)
        .cycles(3)
        .requests(requests)
        // The rows are judged at what their few thousand requests resolve,
        // not at the method's 15.7 B (which would make clean rows inconclusive).
        .args(&["--resolution", "1KB"])
        .args(extra)
        .envs(env)
        .run(&target_command("rows-server.mjs", port));
    assert!(port_is_free(port), "port {port} left busy");
    let result = finished.result();
    (finished, result)
}

fn verdict(result: &RunResult, index: usize) -> &Verdict {
    verdict_of(&result.routes[index])
}

#[test]
fn small_record_per_request_is_retention_with_its_size() {
    let (finished, result) = check(&["/small"], "15000", &[], &[]);
    let v = verdict(&result, 0);
    assert_eq!(v.kind, VerdictKind::Retention, "{v:#?}");
    assert_eq!(finished.code, 1);
    let per = heap_per_request(&result.routes[0]);
    assert!(
        (30.0..80.0).contains(&per),
        "a 48-byte record, measured {per}"
    );
}

#[test]
fn unfilled_buffers_are_off_heap_with_untouched_pages() {
    let (_, result) = check(&["/buffers"], "300", &[], &[]);
    let v = verdict(&result, 0);
    assert_eq!(v.kind, VerdictKind::OffHeapRetention, "{v:#?}");
    assert!(
        finding_kinds(v).contains(&FindingKind::UntouchedPages),
        "{v:#?}"
    );
}

#[test]
fn filled_buffers_are_off_heap_and_resident() {
    let (_, result) = check(&["/buffers-filled"], "300", &[], &[]);
    let v = verdict(&result, 0);
    assert_eq!(v.kind, VerdictKind::OffHeapRetention, "{v:#?}");
    assert!(
        !finding_kinds(v).contains(&FindingKind::UntouchedPages),
        "{v:#?}"
    );
}

#[test]
fn cache_filling_over_cycles_is_a_working_set() {
    let (finished, result) = check(&["/filling-cache"], "4000", &[], &[("FILLING_MAX", "6000")]);
    let v = verdict(&result, 0);
    assert_eq!(v.kind, VerdictKind::WorkingSet, "{v:#?}");
    assert!(!v.fails_gate);
    assert_eq!(finished.code, 0);
}

#[test]
fn bounded_cache_and_heavy_garbage_are_not_leaks() {
    let (finished, result) = check(&["/bounded-cache", "/temp-big"], "3000", &[], &[]);
    // A bounded cache is a working set that fills in the first cycle; when
    // V8's warm-up spills into cycle 2 the series reads as levelling off,
    // which is as true. Neither may be called a leak.
    for index in 0..2 {
        let v = verdict(&result, index);
        assert!(!v.fails_gate, "{v:#?}");
        assert!(
            matches!(v.kind, VerdictKind::NoRetention | VerdictKind::WorkingSet),
            "{v:#?}"
        );
    }
    // Whether the after-load reading catches garbage depends on when V8 last
    // collected; the finding itself is tested on the seed's readings.
    assert_eq!(finished.code, 0);
}

#[test]
fn counter_rising_without_memory_is_counter_growth() {
    let (finished, result) = check(
        &["/sessions"],
        "500",
        &["--counter", "sessions=globalThis.sessions.size"],
        &[],
    );
    let v = verdict(&result, 0);
    assert_eq!(v.kind, VerdictKind::CounterGrowth, "{v:#?}");
    assert_eq!(finished.code, 1);
    let route = &result.routes[0];
    let baseline = &route.baseline.as_ref().unwrap().counters["sessions"];
    assert_eq!(*baseline, Some(0.0));
    assert_eq!(route.cycles[2].after_gc.counters["sessions"], Some(1500.0));
}

#[test]
fn the_gate_passes_small_retention_and_fails_large() {
    let (within, result) = check(&["/leak"], "3000", &["--max-retained", "4KB"], &[]);
    assert_eq!(within.code, 0, "{}", within.stderr);
    assert_eq!(verdict(&result, 0).kind, VerdictKind::Retention);
    assert!(finding_kinds(verdict(&result, 0)).contains(&FindingKind::WithinGate));
    let (above, _) = check(&["/leak"], "3000", &["--max-retained", "0.1KB"], &[]);
    assert_eq!(above.code, 1);
}

#[test]
fn each_route_gets_a_fresh_process_unless_asked() {
    let (_, fresh) = check(&["/churn", "/leak"], "500", &[], &[]);
    let pid = |result: &RunResult, i: usize| result.routes[i].pid.unwrap();
    assert_ne!(pid(&fresh, 0), pid(&fresh, 1));
    assert!(fresh.settings.fresh);
    let (_, shared) = check(&["/churn", "/leak"], "500", &["--no-fresh"], &[]);
    assert_eq!(pid(&shared, 0), pid(&shared, 1));
}

#[test]
fn endpoint_probe_reads_mem_and_turns_extra_fields_into_counters() {
    // Attach to a server the test started, through its /mem and /gc.
    let (mut server, port) = start_demo(&["--expose-gc"]);
    let finished = RunArgs::new(port)
        .routes(&["/leak"])
        .requests("3000")
        .args(&["--endpoints", "/"])
        .run(&[]);
    let result = finished.result();
    assert_eq!(result.target.probe, Some(ProbeKind::Endpoints));
    assert_eq!(verdict(&result, 0).kind, VerdictKind::Retention);
    assert_eq!(
        result.routes[0].cycles[2].after_gc.counters["kept"],
        Some(9000.0)
    );
    assert!(
        server.0.try_wait().unwrap().is_none(),
        "an attached server is left running"
    );
}
