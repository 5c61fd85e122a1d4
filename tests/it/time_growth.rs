//! Leaks driven by a clock, not by requests: a sampler whose interval
//! appends every 20 ms (tests/targets/sampler-server.mjs). A soak decides
//! on the trend with time and projects it; `run` adds an idle interval and
//! says time, not requests; the bounded twin is clean in both.

use leakcheck::model::{FindingKind, Series, TimeDecision, VerdictKind};

use crate::util::*;

fn sampler(port: u16, mode: &str, per_tick: u32) -> Vec<String> {
    let mut command = target_command("sampler-server.mjs", port);
    command.push(mode.to_string());
    command.push(per_tick.to_string());
    command
}

/// 60 s at 500 requests a second, a settled reading every 5 s.
fn soak(command: &[String], port: u16) -> Finished {
    RunArgs::new(port)
        .soak()
        .progress()
        .routes(&["/work"])
        .args(&["-d", "60s", "--every", "5s", "-R", "500", "--no-diagnose"])
        .run(command)
}

#[test]
fn a_soak_decides_an_interval_fed_array_on_its_trend_and_projects_it() {
    let port = free_port();
    // Two samples a tick: about 70 MB an hour, a few KB per 5 s step.
    let finished = soak(&sampler(port, "leak", 2), port);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    validate(&finished.stdout);
    let result = finished.result();
    let route = &result.routes[0];
    let verdict = verdict_of(route);
    assert_eq!(verdict.kind, VerdictKind::Retention, "{verdict:#?}");
    assert!(
        verdict.summary.contains("retention over time"),
        "{}",
        verdict.summary
    );
    let soak = route.soak.as_ref().unwrap();
    let heap = soak
        .time_fits
        .iter()
        .find(|f| f.series == Series::HEAP_USED)
        .expect("heapUsed fitted against time");
    assert_eq!(heap.decision, TimeDecision::Grows, "{heap:#?}");
    assert!(heap.lower_per_hour > heap.floor_per_hour);
    // The projection is the trend's growth per hour, not steps per request.
    assert_eq!(soak.growth_bytes_per_hour, heap.per_hour);
    assert!(soak.hours_to_limit.is_some(), "{}", soak.projection);
    assert!(soak.projection.contains("with time"), "{}", soak.projection);
    // The live line of the last reading carries that reading's verdict,
    // not the one before it (the trend's figure moves with each reading).
    let live = finished
        .stderr
        .lines()
        .rfind(|line| line.contains("soak ") && line.contains(" s of "))
        .unwrap_or_else(|| panic!("no live line: {}", finished.stderr));
    assert!(
        live.ends_with(&soak.projection),
        "{live}\n{}",
        soak.projection
    );
    assert!(port_is_free(port));
}

#[test]
fn the_bounded_sampler_is_never_called_a_leak() {
    let port = free_port();
    let finished = soak(&sampler(port, "bounded", 2), port);
    assert_ne!(finished.code, 1, "{}", finished.stderr);
    let result = finished.result();
    let route = &result.routes[0];
    let verdict = verdict_of(route);
    // No false alarm. Clean here; with five soaks at once on Node 22,
    // 3 of 15 read V8's warm-up creep as undecided (`inconclusive`, with
    // the soak length that would decide; bench/soak-sensitivity.sh).
    assert!(
        matches!(
            verdict.kind,
            VerdictKind::NoRetention | VerdictKind::Inconclusive
        ),
        "{verdict:#?}"
    );
    let soak = route.soak.as_ref().unwrap();
    let heap = soak
        .time_fits
        .iter()
        .find(|f| f.series == Series::HEAP_USED)
        .unwrap();
    assert_ne!(heap.decision, TimeDecision::Grows, "{heap:#?}");
    assert!(verdict.has_finding(FindingKind::TimeTrend));
    assert_eq!(soak.hours_to_limit, None);
    // Every reading, the last included, is taken under the load: a last
    // reading with the connections closed read 0.05–0.2 MB above the rest
    // and tilted the trend (Node 22: undecided in 2 of 3 soaks).
    let last = route.cycles.last().unwrap();
    let sockets = last
        .after_gc
        .resources
        .get("active_resources.TCPSocketWrap");
    assert!(
        sockets.is_some_and(|n| *n > 0.0),
        "{:?}",
        last.after_gc.resources
    );
}

#[test]
fn run_tells_time_from_requests_with_an_idle_interval() {
    let port = free_port();
    // Twelve samples a tick: about 100 KB a second, which a run of a few
    // seconds sees.
    let finished = RunArgs::new(port)
        .routes(&["/work"])
        .run(&sampler(port, "leak", 12));
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    validate(&finished.stdout);
    let result = finished.result();
    let route = &result.routes[0];
    let verdict = verdict_of(route);
    assert_eq!(verdict.kind, VerdictKind::TimeGrowth, "{verdict:#?}");
    assert!(
        verdict.summary.contains("with or without requests"),
        "{}",
        verdict.summary
    );
    let idle = route.idle.as_ref().expect("an idle interval was added");
    assert!(idle.time_driven);
    assert!(idle.heap_used_after > idle.heap_used_before);
    // The holder is named, in the words of time.
    assert!(verdict.action.contains("`samples`"), "{}", verdict.action);
    assert!(
        verdict.action.contains("as time passes"),
        "{}",
        verdict.action
    );
    assert!(port_is_free(port));

    // The bounded twin, and a per-request leak, are not time's.
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/work"])
        .run(&sampler(port, "bounded", 12));
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let twin = finished.result();
    assert_eq!(verdict_of(&twin.routes[0]).kind, VerdictKind::NoRetention);

    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/leak"])
        .requests("2000")
        .run(&demo_command(port));
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let demo = finished.result();
    let leak = &demo.routes[0];
    assert_eq!(verdict_of(leak).kind, VerdictKind::Retention);
    if let Some(idle) = &leak.idle {
        assert!(!idle.time_driven, "{idle:#?}");
    }
}
