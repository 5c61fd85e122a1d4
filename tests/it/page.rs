//! `leakcheck page` on small pages served from the test: a page whose
//! closed dialogs stay referenced and whose window listeners pile up, its
//! fixed twin, and an action whose selector matches nothing. Skipped, with
//! a message, only where no Chromium is installed (CI installs Debian's).

use std::path::Path;

use leakcheck::model::{Series, Trend};

use crate::page_util::*;
use crate::util::*;

fn fit_of<'a>(route: &'a RouteResult, name: &str) -> &'a leakcheck::model::MetricFit {
    let verdict = verdict_of(route);
    verdict
        .fits
        .iter()
        .find(|f| f.metric == Series::Resource(leakcheck::model::Resource::parse(name).unwrap()))
        .unwrap_or_else(|| panic!("no fit of {name}: {:#?}", verdict.fits))
}

const OPEN_CLOSE: [&str; 2] = ["click #open", "click #close"];

#[test]
fn closed_dialogs_kept_and_window_listeners_piling_up_are_found_and_held() {
    if !chromium_installed() {
        return;
    }
    let finished = page_run("leaky.html", &OPEN_CLOSE, &["-n", "40"]);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    validate(&finished.stdout);
    let result = finished.result();
    assert_eq!(result.settings.unit, leakcheck::model::Unit::Iteration);
    let route = &result.routes[0];
    let nodes = fit_of(route, "dom.Nodes");
    assert_eq!(nodes.trend, Trend::Growing);
    assert!(nodes.slope_bytes_per_request > 20.0, "{nodes:#?}");
    let listeners = fit_of(route, "dom.JSEventListeners");
    assert!(
        (listeners.slope_bytes_per_request - 1.0).abs() < 0.1,
        "{listeners:#?}"
    );
    let verdict = verdict_of(route);
    assert!(verdict.fails_gate);
    assert!(
        verdict.has_finding(FindingKind::HandleGrowth),
        "{verdict:#?}"
    );
    // The listeners by type and target, where the last was added.
    let resize = route
        .listeners
        .iter()
        .find(|l| l.event == "resize" && l.target == "Window")
        .unwrap_or_else(|| panic!("{:#?}", route.listeners));
    assert!((resize.per_unit - 1.0).abs() < 0.05, "{resize:#?}");
    assert!(
        resize
            .added_at
            .as_deref()
            .is_some_and(|at| at.contains("/leaky.html:")),
        "{resize:#?}"
    );
    let diagnosis = route.diagnosis.as_ref().expect("a diagnosis");
    // The closed dialogs' list, a top-level const of a classic script,
    // gains one entry per iteration.
    assert!(
        diagnosis
            .collections
            .iter()
            .any(|c| c.name == "closedDialogs" && c.kind == "Array" && c.per_unit >= 1.0),
        "{:#?}",
        diagnosis.collections
    );
    assert_eq!(
        diagnosis.holders[0].name, "closedDialogs",
        "{:#?}",
        diagnosis.holders
    );
    assert!(
        diagnosis
            .classes
            .iter()
            .any(|c| c.class.starts_with("Detached ")),
        "detached DOM nodes are named: {:#?}",
        diagnosis.classes
    );
    // Allocation sites come from the sampling heap profiler: a few hundred
    // KB of dialogs are sampled or not, so only their form is checked.
    assert!(
        diagnosis
            .allocation_sites
            .iter()
            .all(|s| s.url.starts_with("http://127.0.0.1:"))
    );
}

#[test]
fn a_routers_views_kept_by_a_list_and_by_listeners_are_named_by_the_list_and_the_view() {
    if !chromium_installed() {
        return;
    }
    let finished = page_run("router.html", &["click #about", "click #home"], &[]);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let result = finished.result();
    let route = &result.routes[0];
    let verdict = verdict_of(route);
    assert!(
        !verdict.has_finding(FindingKind::LeftStartUrl),
        "{verdict:#?}"
    );
    let diagnosis = route.diagnosis.as_ref().expect("a diagnosis");
    // Each view is reached from the list and from its listener's closure:
    // the dominator tree alone names the GC roots.
    let held = diagnosis
        .holders
        .iter()
        .find(|h| h.class.starts_with("Detached "))
        .unwrap_or_else(|| panic!("{:#?}", diagnosis.holders));
    assert_eq!(held.name, "this.mounted", "{:#?}", diagnosis.holders);
    assert_eq!(
        held.root_class.as_deref(),
        Some("Detached <div class=\"dialog\">"),
        "{held:#?}"
    );
    assert!(
        verdict.action.starts_with(
            "`this.mounted` keeps removed `<div class=\"dialog\">` nodes (2 per iteration)"
        ),
        "{}",
        verdict.action
    );
}

#[test]
fn elements_left_in_the_document_are_named_by_their_class() {
    if !chromium_installed() {
        return;
    }
    let finished = page_run("toasts.html", &["click #notify"], &[]);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let result = finished.result();
    let verdict = verdict_of(&result.routes[0]);
    assert!(
        verdict.action.starts_with(
            "`<div class=\"toast\">` nodes stay in the document: 1 added each iteration and never \
             removed"
        ),
        "{}",
        verdict.action
    );
    // Nor is a holder named by Blink's slots (`this`, `(GC roots) @3`, an
    // index path): the document is what keeps them.
    let diagnosis = result.routes[0].diagnosis.as_ref().expect("a diagnosis");
    for holder in &diagnosis.holders {
        assert!(
            holder.name.starts_with("the document")
                || !(holder.name == "this"
                    || holder.name.starts_with('(')
                    || holder.name.starts_with('[')
                    || holder.name.starts_with("globalThis.document[")),
            "{:#?}",
            diagnosis.holders
        );
    }
    // A new tag each time: named by how many tags, with one of them.
    let finished = page_run("toasts.html", &["click #badge"], &[]);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let result = finished.result();
    let verdict = verdict_of(&result.routes[0]);
    assert!(
        verdict.action.starts_with("Elements of ")
            && verdict
                .action
                .contains("different tags or classes (such as `<x-badge-"),
        "{}",
        verdict.action
    );
}

#[test]
fn the_fixed_twin_keeps_nothing() {
    if !chromium_installed() {
        return;
    }
    let finished = page_run(
        "fixed.html",
        &OPEN_CLOSE,
        // 3 × 40 iterations rule out about 7 KB per iteration.
        &["-n", "40", "--resolution", "8KB"],
    );
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let result = finished.result();
    let verdict = verdict_of(&result.routes[0]);
    assert!(!verdict.fails_gate, "{verdict:#?}");
    assert!(!verdict.has_finding(FindingKind::HandleGrowth));
    assert!(result.routes[0].diagnosis.is_none());
}

#[test]
fn a_selector_that_matches_nothing_fails_the_iteration_by_name() {
    if !chromium_installed() {
        return;
    }
    let finished = page_run("fixed.html", &["click #nowhere"], &["-n", "3"]);
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let result = finished.result();
    let verdict = verdict_of(&result.routes[0]);
    assert_eq!(verdict.kind, VerdictKind::Inconclusive);
    assert!(verdict.summary.contains("#nowhere"), "{}", verdict.summary);
}

/// Without a cycle size, pages run `--cycles auto` as servers do: small
/// cycles until the verdict is decided, each with the main thread's figures.
#[test]
fn cycles_auto_decides_a_leaking_page_and_bounds_its_fixed_twin() {
    use leakcheck::model::SequentialStop;
    if !chromium_installed() {
        return;
    }
    let leaky = page_run("leaky.html", &OPEN_CLOSE, &["--no-diagnose"]);
    assert_eq!(leaky.code, 1, "{}", leaky.stderr);
    let result = leaky.result();
    let route = &result.routes[0];
    let sequential = route
        .sequential
        .as_ref()
        .expect("--cycles auto is the default");
    assert_eq!(
        sequential.stopped,
        SequentialStop::Retention,
        "{sequential:#?}"
    );
    assert!(
        route.cycles.len() < 24,
        "decided before the budget: {sequential:#?}"
    );
    assert_eq!(result.settings.requests_per_cycle, 25);
    // The page's words, not a server's.
    let action = &verdict_of(route).action;
    assert!(!action.contains("descriptors"), "{action}");
    assert!(action.contains("removeEventListener"), "{action}");
    for cycle in &route.cycles {
        let event_loop = cycle.event_loop.as_ref().expect("the page's main thread");
        assert!(
            (0.0..=1.0).contains(&event_loop.utilization),
            "{event_loop:#?}"
        );
        assert!(event_loop.delay_max_ms >= event_loop.delay_p50_ms);
    }

    let fixed = page_run("fixed.html", &OPEN_CLOSE, &[]);
    assert_eq!(fixed.code, 0, "{}", fixed.stderr);
    let result = fixed.result();
    let sequential = result.routes[0].sequential.as_ref().unwrap();
    assert_eq!(
        sequential.stopped,
        SequentialStop::Bounded,
        "{sequential:#?}"
    );
    assert!(sequential.upper_bound_bytes_per_request.unwrap() < 2048.0);
}

/// A page whose every iteration fails is cut short after --timeout, as a
/// server that stops answering is: 100 000 failing iterations would
/// otherwise take minutes and measure nothing.
#[test]
fn a_page_that_stops_working_ends_its_cycle_after_the_timeout() {
    if !chromium_installed() {
        return;
    }
    let started = std::time::Instant::now();
    let finished = page_run(
        "fixed.html",
        &["click #nowhere"],
        &["-n", "100000", "--timeout", "1s"],
    );
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let result = finished.result();
    let cycle = &result.routes[0].cycles[0];
    assert!(cycle.load.stalled, "{cycle:#?}");
    assert!(cycle.requests < 100_000);
    let error = result.outcome.error.as_deref().unwrap();
    assert!(
        error.contains("no iteration completed in the last 1 s"),
        "{error}"
    );
}

/// A script that never returns blocks the page's main thread: the
/// action's own limit (`--timeout`) ends the run and names the action,
/// without waiting out the inspector's 60 s, and Chromium's D-Bus and
/// zygote noise is not shown as the page's output.
#[test]
fn a_page_script_that_never_returns_ends_at_the_actions_limit_and_names_it() {
    if !chromium_installed() {
        return;
    }
    let started = std::time::Instant::now();
    let finished = page_run(
        "fixed.html",
        &["eval while (true) {}"],
        &["-n", "5", "--timeout", "2s"],
    );
    // Before: 2 s for the action, 2 s for the URL check, then the
    // reading's 60 s --inspector-timeout blamed on the inspector.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(40),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let result = finished.result();
    assert!(result.routes[0].baseline.is_some());
    let error = result.outcome.error.as_deref().unwrap();
    assert!(
        error.contains("`eval while (true) {}` did not return within 2 s"),
        "{error}"
    );
    assert!(!error.contains("inspector"), "{error}");
    for line in &result.outcome.target_output {
        let lower = line.to_ascii_lowercase();
        assert!(
            !lower.contains("dbus") && !lower.contains("zygote"),
            "{line}"
        );
    }
}

/// Chromium's own traffic stays on this machine: a page run under strace
/// makes no DNS query and opens no connection off loopback. The one
/// non-loopback `connect` Chromium makes is its IPv6 reachability probe, a
/// UDP socket connected to 2001:4860:4860::8888 to learn a source address,
/// through which nothing is sent.
#[test]
fn chromium_stays_on_loopback() {
    if !chromium_installed() {
        return;
    }
    if std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_err()
    {
        assert!(!in_ci(), "CI=true and strace is not installed");
        eprintln!("skipped: no strace (apt-get install strace)");
        return;
    }
    let (_server, port) = serve_pages();
    let url = format!("http://127.0.0.1:{port}/fixed.html");
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.txt");
    let mut command = std::process::Command::new("strace");
    command
        .args(["-f", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_leakcheck"))
        .args(["page", &url, "-q", "-n", "5", "--resolution", "64KB"])
        .args(["--action", "click #open", "--action", "click #close"]);
    let finished = run_to_end(command);
    assert_ne!(finished.code, -1, "{}", finished.stderr);
    let text = std::fs::read_to_string(&trace).unwrap();
    let off_machine: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("sin_addr=inet_addr(") || l.contains("inet_pton(AF_INET6"))
        .filter(|l| !l.contains("inet_addr(\"127.") && !l.contains("\"::1\""))
        .filter(|l| !(l.contains("connect(") && l.contains("\"2001:4860:4860::8888\"")))
        .collect();
    assert!(
        off_machine.is_empty(),
        "traffic off loopback:\n{}",
        off_machine.join("\n")
    );
    assert!(!text.contains("htons(53)"), "a DNS query was made");
    // The probe's socket carries nothing.
    for probe in text.lines().filter(|l| l.contains("2001:4860:4860::8888")) {
        assert!(probe.contains("connect("), "{probe}");
    }
}

#[test]
fn a_page_off_loopback_or_a_script_url_is_refused_before_the_browser_starts() {
    let refused = |args: &[&str], needle: &str| {
        let finished = run_leakcheck(args);
        assert_eq!(finished.code, 2, "{}", finished.stderr);
        assert!(finished.stderr.contains(needle), "{}", finished.stderr);
    };
    refused(
        &["page", "javascript:alert(1)", "--action", "click #x"],
        "is a javascript: URL",
    );
    refused(
        &["page", "http://192.0.2.1/", "--action", "click #x"],
        "not a loopback address",
    );
    refused(
        &[
            "page",
            "http://127.0.0.1:9/",
            "--action",
            "goto http://192.0.2.1/",
        ],
        "--action goto",
    );
}

/// A page that alerts on load and on every click would hang at its first
/// dialog: each is dismissed and counted.
#[test]
fn dialogs_are_dismissed_and_counted() {
    if !chromium_installed() {
        return;
    }
    let started = std::time::Instant::now();
    let finished = page_run(
        "alerts.html",
        &["click #ask"],
        &["-n", "10", "--resolution", "64KB", "--timeout", "5s"],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    validate(&finished.stdout);
    let result = finished.result();
    let cycles = &result.routes[0].cycles;
    assert_eq!(cycles.len(), 3, "{}", finished.stderr);
    for cycle in cycles {
        assert_eq!(cycle.units, 10, "{cycle:#?}");
        // A confirm and an alert per click.
        assert_eq!(cycle.load.dialogs, 20, "{cycle:#?}");
    }
}

/// A page that answers 404 is named as such, not clicked in and reported
/// as "no element matches".
#[test]
fn a_page_that_answers_an_http_error_is_named() {
    if !chromium_installed() {
        return;
    }
    let finished = page_run("missing.html", &["click #open"], &["-n", "5"]);
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let error = finished.result().outcome.error.unwrap();
    assert!(error.contains("answered HTTP 404"), "{error}");
    assert!(!error.contains("no element matches"), "{error}");
}

/// A --chrome that is not a browser is named as soon as it exits, not
/// after the 30 s start limit.
#[test]
fn a_chrome_that_exits_at_once_is_named_at_once() {
    let started = std::time::Instant::now();
    let finished = run_leakcheck(&[
        "page",
        "http://127.0.0.1:9/",
        "--chrome",
        "/bin/false",
        "--action",
        "click #x",
    ]);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(finished.code, 2);
    assert!(
        finished.stderr.contains("/bin/false exited (exit code 1)"),
        "{}",
        finished.stderr
    );
}

#[test]
fn connect_to_a_closed_port_says_nothing_listens_there() {
    let port = free_port();
    let endpoint = format!("ws://127.0.0.1:{port}/devtools/browser/x");
    let finished = run_leakcheck(&[
        "page",
        "http://127.0.0.1:9/",
        "--connect",
        &endpoint,
        "--action",
        "click #x",
    ]);
    assert_eq!(finished.code, 2);
    assert!(
        finished.stderr.contains(&format!(
            "nothing listens on 127.0.0.1:{port} for --connect"
        )),
        "{}",
        finished.stderr
    );
}

#[test]
fn a_misspelt_action_is_refused_before_the_browser_starts() {
    let finished = run_leakcheck(&["page", "http://127.0.0.1:9/", "--action", "hover #x"]);
    assert_eq!(finished.code, 2);
    assert!(
        finished.stderr.contains("is not an action"),
        "{}",
        finished.stderr
    );
}

#[test]
fn ctrl_c_stops_chromium_by_pid_removes_its_profile_and_reports() {
    if !chromium_installed() {
        return;
    }
    let (_server, port) = serve_pages();
    let url = format!("http://127.0.0.1:{port}/leaky.html");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("page.json").display().to_string();
    let mut command = leakcheck();
    command
        .args([
            "page",
            &url,
            "--action",
            "click #open",
            "--action",
            "click #close",
        ])
        .args(["--action", "wait 20", "-n", "100000", "--json", &json])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut guard = Guard::spawn(&mut command);
    wait_for_stderr(&mut guard, "running the actions");
    // SAFETY: signalling the leakcheck process this test started, by PID.
    unsafe { libc::kill(guard.pid() as i32, libc::SIGINT) };
    let status = guard.wait_within(std::time::Duration::from_secs(20));
    assert_eq!(status.code(), Some(2));
    let result: RunResult = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(result.outcome.status, OutcomeStatus::Interrupted);
    assert!(result.routes[0].baseline.is_some(), "the baseline is kept");
    let pid = result.target.pid.expect("Chromium's pid");
    assert!(!Path::new(&format!("/proc/{pid}")).exists() || is_zombie(pid));
    let profile = result
        .target
        .command
        .iter()
        .find_map(|a| a.strip_prefix("--user-data-dir="))
        .expect("the profile flag");
    assert!(
        !Path::new(profile).exists(),
        "the profile {profile} was left behind"
    );
}
