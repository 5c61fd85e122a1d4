//! `leakcheck run` end to end against the bundled demo server: verdicts and
//! retained figures for the keeping and dropping routes, off-heap buffers,
//! and the port left free.

mod common;

use common::*;

fn run_routes(port: u16, routes: &[&str], requests: &str) -> Finished {
    let url = format!("http://127.0.0.1:{port}");
    let mut args = vec![
        "run", "--url", &url, "--cycles", "3", "-a", requests, "--json", "-", "--quiet",
    ];
    for route in routes {
        args.push("--route");
        args.push(route);
    }
    args.push("--");
    let command = demo_command(port);
    let mut args: Vec<&str> = args;
    args.extend(command.iter().map(String::as_str));
    run_leakcheck(&args)
}

fn route<'a>(json: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    json["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["route"] == name)
        .unwrap()
}

#[test]
fn keeping_route_is_retention_and_dropping_route_is_not() {
    let port = free_port();
    let finished = run_routes(port, &["/churn", "/leak"], "4000");
    let json = finished.json();
    assert_eq!(finished.code, 1, "a leak exits 1\n{}", finished.stderr);
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["outcome"]["status"], "complete");

    let churn = route(&json, "/churn");
    assert_eq!(
        churn["verdict"]["kind"], "no-retention",
        "{:#}",
        churn["verdict"]
    );
    assert_eq!(churn["verdict"]["leak"], false);
    assert_eq!(churn["cycles"].as_array().unwrap().len(), 3);

    let leak = route(&json, "/leak");
    assert_eq!(
        leak["verdict"]["kind"], "retention",
        "{:#}",
        leak["verdict"]
    );
    let per_request = leak["retained_bytes_per_request"]["heap_used"]
        .as_f64()
        .unwrap();
    // Each record is a header copy, a 512-byte string and a few fields: the
    // seed measured 0.43 KB; the order of magnitude is what must hold.
    assert!(
        (200.0..1500.0).contains(&per_request),
        "heap_used per request {per_request}"
    );
    for cycle in leak["cycles"].as_array().unwrap() {
        assert_eq!(cycle["requests"], 4000);
        assert_eq!(cycle["errors"], 0);
        assert_eq!(cycle["non_2xx"], 0);
        assert!(cycle["after_gc"]["heap_used"].as_u64().unwrap() > 0);
    }
    assert_eq!(json["outcome"]["port_freed"], true);
    assert!(port_is_free(port));
}

#[test]
fn buffers_grow_off_heap_and_only_filled_ones_grow_rss() {
    let port = free_port();
    let finished = run_routes(port, &["/buffers", "/buffers-filled"], "400");
    let json = finished.json();
    assert_eq!(json["outcome"]["status"], "complete", "{}", finished.stderr);
    let slope = |name: &str, metric: &str| {
        route(&json, name)["retained_bytes_per_request"][metric]
            .as_f64()
            .unwrap()
    };
    for name in ["/buffers", "/buffers-filled"] {
        let buffers = slope(name, "array_buffers");
        assert!(
            (58_000.0..72_000.0).contains(&buffers),
            "{name} arrayBuffers per request {buffers}"
        );
        assert!(
            slope(name, "heap_used").abs() < 2048.0,
            "{name} heap stays nearly flat"
        );
        assert_eq!(route(&json, name)["verdict"]["leak"], true);
    }
    let unfilled_rss = slope("/buffers", "rss");
    let filled_rss = slope("/buffers-filled", "rss");
    assert!(
        filled_rss > 40_000.0,
        "filled buffers are resident: {filled_rss}"
    );
    assert!(
        unfilled_rss < filled_rss / 2.0,
        "rss {unfilled_rss} unfilled vs {filled_rss} filled"
    );
    assert!(port_is_free(port));
}

#[test]
fn the_terminal_table_shows_the_seed_columns() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let command = demo_command(port);
    let mut args = vec![
        "run", "--url", &url, "--route", "/churn", "--cycles", "2", "-a", "500", "--quiet", "--",
    ];
    args.extend(command.iter().map(String::as_str));
    let finished = run_leakcheck(&args);
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    for column in [
        "rss",
        "heapTotal",
        "heapUsed",
        "external",
        "arrayBuffers",
        "after load",
        "after GC",
    ] {
        assert!(
            finished.stdout.contains(column),
            "missing {column}:\n{}",
            finished.stdout
        );
    }
    // 2 × 500 requests is too little load for a firm answer (V8's own
    // warm-up can still move 0.3 MB in cycle 2), so only what the table must
    // never say is checked here; run_demo's other tests check the verdicts.
    let verdict = finished
        .stdout
        .lines()
        .find(|line| line.trim_start().starts_with("verdict: "))
        .unwrap_or_else(|| panic!("no verdict line:\n{}", finished.stdout));
    assert!(
        verdict.contains("no-retention") || verdict.contains("inconclusive"),
        "{}",
        finished.stdout
    );
}
