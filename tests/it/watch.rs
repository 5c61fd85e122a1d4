//! `leakcheck watch`: a live server (tests/targets/watch-server.mjs) under a
//! load leakcheck does not send (its own `load` command, a separate
//! process at a fixed rate), judged at the server's own major collections;
//! and the process left as it was found: no observer, no subscriber, no
//! profiler, the inspector closed again, the same handles.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::*;

/// The watch server on a free port, its inspector closed (SIGUSR1 opens
/// it on a port of its own, so that watches run side by side), `global.gc`
/// exposed for `/state`'s settled heap.
fn watched_server(mode: &str) -> (Guard, u16) {
    watched_server_scaled(mode, 1)
}

/// `watched_server` keeping `scale` times the audit note per request.
fn watched_server_scaled(mode: &str, scale: u32) -> (Guard, u16) {
    watched_server_with(mode, scale, &[])
}

/// `watched_server_scaled` with Node options of its own (a heap limit).
fn watched_server_with(mode: &str, scale: u32, node_options: &[&str]) -> (Guard, u16) {
    let script = repo_path("tests/targets/watch-server.mjs");
    watch_server_at(&script, mode, scale, node_options)
}

/// The watch server from `script` (a copy of it, for `--match` to pick
/// out) on a free port, opened to SIGUSR1 on a port of its own.
pub(crate) fn watch_server_at(
    script: &std::path::Path,
    mode: &str,
    scale: u32,
    node_options: &[&str],
) -> (Guard, u16) {
    let port = free_port();
    let mut command = Command::new(node());
    command
        .args(["--inspect-port=0", "--expose-gc"])
        .args(node_options)
        .arg(script)
        .args([&port.to_string(), mode, &scale.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let guard = Guard::spawn(&mut command);
    wait_listening(port);
    (guard, port)
}

/// Traffic the watch does not send: `leakcheck load` at `rate` for `seconds`.
fn external_load(port: u16, rate: u32, seconds: u32) -> Guard {
    let mut command = leakcheck();
    command
        .args(["load", &format!("http://127.0.0.1:{port}/"), "-q"])
        .args([
            "-c",
            "10",
            "-R",
            &rate.to_string(),
            "-d",
            &format!("{seconds}s"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    Guard::spawn(&mut command)
}

/// What `/state` says the server holds.
fn state(port: u16) -> serde_json::Value {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET /state HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let body = text.split("\r\n\r\n").nth(1).expect("a body");
    serde_json::from_str(body).unwrap()
}

fn watch_args(pid: u32, seconds: u32, dir: &std::path::Path, name: &str) -> Vec<String> {
    vec![
        "watch".into(),
        "--pid".into(),
        pid.to_string(),
        "-d".into(),
        format!("{seconds}s"),
        "--json".into(),
        dir.join(format!("{name}.json")).display().to_string(),
        "--checkpoint".into(),
        dir.join(format!("{name}.ndjson")).display().to_string(),
    ]
}

fn run_args(args: &[String]) -> Finished {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_leakcheck(&args)
}

/// The two series BENCHMARKS.md counts over ten runs each ("watch"), the
/// leak at six times its note there (flat text: ~1.1 KB a request). Under
/// the whole suite, Node 24 ran a major collection only every ~10 s and
/// the load fell short of its rate: the 0.3 KB leak read ~110 MB/h against
/// a floor of ~115 over 70 s (inconclusive), and so did "three times" (a
/// rope of the same size: +165 MB/h, the interval's lower end at 55 against
/// a floor of 106). Its twin is flat.
#[test]
fn a_slow_leak_under_live_traffic_is_retention_with_its_site_and_its_twin_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let (leak, leak_port) = watched_server_scaled("leak", 6);
    let (twin, twin_port) = watched_server("clean");
    let _loads = [
        external_load(leak_port, 200, 85),
        external_load(twin_port, 200, 85),
    ];
    // A finer sampling than the default's 512 KB: over 75 s the 0.3 KB leak adds
    // some 4 MB, eight default samples, too few to rank its site first
    // every time (BENCHMARKS.md counts how often the default does).
    let mut leak_args = watch_args(leak.pid(), 75, dir.path(), "leak");
    leak_args.extend(["--sample-interval", "64KB"].map(String::from));
    let twin_args = watch_args(twin.pid(), 75, dir.path(), "twin");
    let twin_watch = std::thread::spawn(move || run_args(&twin_args));
    let finished = run_args(&leak_args);
    let twin_finished = twin_watch.join().unwrap();

    assert_eq!(finished.code, 1, "{}", finished.stderr);
    validate(&std::fs::read_to_string(dir.path().join("leak.json")).unwrap());
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("leak.json")).unwrap())
            .unwrap();
    let route = &result["routes"][0];
    assert_eq!(route["verdict"]["kind"], "retention", "{}", finished.stderr);
    let per_request = route["verdict"]["figure"]["bytes_per_request"]
        .as_f64()
        .unwrap();
    assert!((100.0..4000.0).contains(&per_request), "{per_request}");
    assert_eq!(route["watch"]["reaches"]["limit"], "V8's heap limit");
    assert!(route["watch"]["natural_readings"].as_u64().unwrap() >= 5);
    // No collection forced but the sampling profile's reads, one per 10 s
    // and a last one (V8 collects before it reads a profile).
    let forced = route["watch"]["forced_readings"].as_u64().unwrap();
    assert!(forced <= 75 / 10 + 1, "{forced}");
    assert_eq!(route["watch"]["profiles"].as_u64().unwrap(), forced);
    let site = &route["diagnosis"]["allocation_sites"][0];
    assert!(
        site["url"].as_str().unwrap().ends_with("watch-server.mjs"),
        "{site}"
    );
    assert_eq!(site["owner"]["kind"], "app");
    assert!(
        finished.stdout.contains("reaches the"),
        "{}",
        finished.stdout
    );

    let twin: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("twin.json")).unwrap())
            .unwrap();
    let verdict = &twin["routes"][0]["verdict"];
    assert_eq!(verdict["leak"], false, "{}", twin_finished.stderr);
    assert_ne!(twin_finished.code, 1, "{}", twin_finished.stderr);
}

/// A leak minutes from its limit (issue 60): ~6 KB kept per request at
/// 400 requests/s, some 8 GB an hour against a 1 GB heap. A watch of at
/// most a minute decides it, with the projection and the sites that grew:
/// the sequential rule decides steep growth on fewer readings, and a
/// process projected to run out within the hour gets forced collections.
#[test]
fn a_fast_leak_minutes_from_its_limit_is_decided_within_a_minute_with_its_projection() {
    let dir = tempfile::tempdir().unwrap();
    let (leak, port) = watched_server_with("leak", 40, &["--max-old-space-size=1024"]);
    let _load = external_load(port, 400, 75);
    let mut args = watch_args(leak.pid(), 60, dir.path(), "fast");
    args.push("--until-decided".into());
    let finished = run_args(&args);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let text = std::fs::read_to_string(dir.path().join("fast.json")).unwrap();
    validate(&text);
    let result: serde_json::Value = serde_json::from_str(&text).unwrap();
    let route = &result["routes"][0];
    assert_eq!(route["verdict"]["kind"], "retention", "{}", finished.stderr);
    let reaches = &route["watch"]["reaches"];
    assert_eq!(reaches["limit"], "V8's heap limit", "{route:#}");
    let hours = reaches["hours"].as_f64().unwrap();
    assert!(hours < 1.0, "projected {hours} h: {route:#}");
    assert!(
        finished.stdout.contains("reaches the"),
        "{}",
        finished.stdout
    );
    // Decided before its minute was out, on fewer readings than the
    // fixed design's seven.
    assert!(
        finished.stderr.contains("decided after"),
        "{}",
        finished.stderr
    );
    assert!(route["watch"]["elapsed_s"].as_f64().unwrap() < 60.0);
    let site = &route["diagnosis"]["allocation_sites"][0];
    assert!(
        site["url"]
            .as_str()
            .unwrap_or("")
            .ends_with("watch-server.mjs"),
        "{site}"
    );
}

/// Forced collections every second, a snapshot within the headroom, and
/// then the process as it was: no watch global, no request subscriber,
/// the inspector leakcheck opened closed, the same handles, the heap
/// within what the twin's bounded audit and caches hold.
#[test]
fn leaving_restores_the_process_as_it_was_found() {
    let dir = tempfile::tempdir().unwrap();
    let (server, port) = watched_server("clean");
    let before = state(port);
    assert_eq!(before["inspectorOpen"], false);
    let load = external_load(port, 100, 10);
    let mut args = watch_args(server.pid(), 8, dir.path(), "watch");
    // Forced collections are what this test counts, not their pauses: a
    // busy machine (CI beside it: 143 ms for the first) must not make
    // --max-pause skip the rest (`forced_collections_and_snapshots…`
    // tests that rule).
    args.extend(
        [
            "--force-gc-every",
            "1s",
            "--max-pause",
            "2s",
            "--snapshot",
            "--snapshots",
        ]
        .map(String::from),
    );
    args.push(dir.path().display().to_string());
    let finished = run_args(&args);
    drop(load);
    // What the 8 s decide is not this test's matter (the twin still fills
    // its bounded audit then): only that the watch ended and reported.
    assert!([0, 1, 2].contains(&finished.code), "{}", finished.stderr);
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("watch.json")).unwrap())
            .unwrap();
    let watch = &result["routes"][0]["watch"];
    assert!(watch["forced_readings"].as_u64().unwrap() >= 4, "{watch}");
    assert_eq!(watch["detached"]["observer_removed"], true, "{watch}");
    assert_eq!(watch["detached"]["sampler_stopped"], true, "{watch}");
    assert_eq!(watch["detached"]["inspector_closed"], true, "{watch}");
    let snapshot = watch["snapshot"]["file"].as_str().expect("a snapshot");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(snapshot).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let inspected = run_leakcheck(&["inspect", snapshot]);
    assert_eq!(inspected.code, 0, "{}", inspected.stderr);

    // The load has ended and its sockets closed: what is left is the server's own.
    std::thread::sleep(Duration::from_millis(2500));
    let after = state(port);
    assert_eq!(after["watchInstalled"], false);
    assert_eq!(after["requestSubscribers"], before["requestSubscribers"]);
    assert_eq!(after["inspectorOpen"], false);
    assert_eq!(after["handles"], before["handles"]);
    let grew = after["heapUsed"].as_f64().unwrap() - before["heapUsed"].as_f64().unwrap();
    assert!(grew < 3.0 * 1024.0 * 1024.0, "{grew} bytes");

    let checkpoint = std::fs::read_to_string(dir.path().join("watch.ndjson")).unwrap();
    let kinds: Vec<String> = checkpoint
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].to_string())
        .collect();
    assert_eq!(kinds.first().map(String::as_str), Some("\"start\""));
    assert_eq!(kinds.last().map(String::as_str), Some("\"end\""));
    assert!(kinds.iter().filter(|k| *k == "\"reading\"").count() >= 4);
}

/// `--max-pause 0ms`: the first forced collection's pause is over it, so no
/// other is forced; and a snapshot that would not fit the stated memory
/// limit is not taken, with the reason.
#[test]
fn forced_collections_and_snapshots_keep_within_their_limits() {
    let dir = tempfile::tempdir().unwrap();
    let (server, port) = watched_server("clean");
    let _load = external_load(port, 100, 8);
    let mut args = watch_args(server.pid(), 5, dir.path(), "watch");
    args.extend(
        [
            "--force-gc-every",
            "1s",
            "--max-pause",
            "0ms",
            "--snapshot",
            "--memory-limit",
            "64MB",
        ]
        .map(String::from),
    );
    let finished = run_args(&args);
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("watch.json")).unwrap())
            .unwrap();
    let watch = &result["routes"][0]["watch"];
    assert!(watch["forced_readings"].as_u64().unwrap() <= 1, "{watch}");
    assert!(watch["forced_skipped"].as_u64().unwrap() >= 2, "{watch}");
    assert!(
        finished.stderr.contains("over --max-pause"),
        "{}",
        finished.stderr
    );
    let why = watch["snapshot"]["not_taken"].as_str().expect("a reason");
    assert!(why.contains("--memory-limit"), "{why}");
    assert!(watch["snapshot"]["file"].is_null());
}

/// A command it starts, interrupted as Ctrl-C would: the readings so far
/// are reported and the command is stopped.
#[test]
fn an_interrupted_watch_of_a_launched_command_reports_and_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let command = target_command("watch-server.mjs", port);
    let json = dir.path().join("watch.json");
    let mut watch = leakcheck();
    watch
        .args(["watch", "--force-gc-every", "1s", "--json"])
        .arg(&json)
        .arg("--checkpoint")
        .arg(dir.path().join("watch.ndjson"))
        .arg("--")
        .args(&command)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut guard = Guard::spawn(&mut watch);
    // Its stderr read on a thread to the end, so that the test waits on a
    // deadline and leakcheck never blocks on a full pipe.
    let stderr = guard.0.stderr.take().unwrap();
    let (lines, said) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines.send(line);
        }
    });
    // One deadline for the whole wait: leakcheck prints a line per reading.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut seen = String::new();
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = said
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("leakcheck did not say it is watching ({e}):\n{seen}"));
        if line.contains("watching pid") {
            break;
        }
        seen.push_str(&line);
        seen.push('\n');
    }
    let _load = external_load(port, 100, 30);
    // Interrupted once three readings are on disk.
    let checkpoint = dir.path().join("watch.ndjson");
    let readings = || {
        std::fs::read_to_string(&checkpoint)
            .unwrap_or_default()
            .matches("\"type\":\"reading\"")
            .count()
    };
    let started = std::time::Instant::now();
    while readings() < 3 {
        assert!(started.elapsed() < Duration::from_secs(30), "no readings");
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: kill(2) on the PID of a child this guard owns.
    unsafe { libc::kill(guard.pid() as i32, libc::SIGINT) };
    guard.wait_within(Duration::from_secs(30));
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(result["outcome"]["status"], "interrupted");
    assert!(result["routes"][0]["cycles"].as_array().unwrap().len() >= 3);
    assert!(none_running(&command), "the launched command still runs");
}

#[test]
fn a_launched_command_that_dies_leaves_its_own_error_in_the_report() {
    // The port is taken: the launched server dies of EADDRINUSE just after
    // leakcheck attached. Node prints that error only once its debugger
    // has gone, so the watch must close its session before it stops the
    // command, or the report says nothing of why.
    let (_taken, port) = watched_server("clean");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("watch.json");
    let command = target_command("watch-server.mjs", port);
    let mut args = vec!["watch", "-d", "20s", "--json", json.to_str().unwrap()];
    args.push("--checkpoint");
    let checkpoint = dir.path().join("watch.ndjson");
    args.push(checkpoint.to_str().unwrap());
    args.push("--");
    args.extend(command.iter().map(String::as_str));
    let finished = run_leakcheck(&args);
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(result["outcome"]["status"], "failed");
    let output = result["outcome"]["target_output"].to_string();
    assert!(output.contains("EADDRINUSE"), "{result:#}");
    assert!(
        finished.stdout.contains("EADDRINUSE"),
        "{}",
        finished.stdout
    );
    // It exited of its own accord, not by leakcheck's signal.
    assert_eq!(
        result["outcome"]["target_stopped"]["how"], "already-exited",
        "{result:#}"
    );
}

#[test]
fn a_command_behind_npm_is_watched_in_the_app_not_in_npm() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let app = repo_path("tests/targets/watch-npm");
    let mut watch = leakcheck();
    watch
        .args(["watch", "-d", "6s", "--json"])
        .arg(dir.path().join("watch.json"))
        .arg("--checkpoint")
        .arg(dir.path().join("watch.ndjson"))
        .args(["--", "npm", "--prefix"])
        .arg(&app)
        .args(["start", "--", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut guard = Guard::spawn(&mut watch);
    wait_listening(port);
    // The observer is installed in the process that serves the port.
    let started = std::time::Instant::now();
    while !state(port)["watchInstalled"].as_bool().unwrap() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the watch never reached the app behind npm"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    guard.wait_within(Duration::from_secs(30));
    // npm runs it as `node ../watch-server.mjs PORT`.
    let server = ["node", "watch-server.mjs", &port.to_string()].map(String::from);
    assert!(none_running(&server), "the app outlived npm's stop");
}

#[test]
fn a_watch_needs_one_process() {
    let finished = run_leakcheck(&["watch", "-d", "5s"]);
    assert_eq!(finished.code, 2);
    assert!(finished.stderr.contains("--pid PID"), "{}", finished.stderr);
    let finished = run_leakcheck(&["watch", "--pid", "1", "--", "node", "x.js"]);
    assert_eq!(finished.code, 2);
    assert!(
        finished.stderr.contains("not several"),
        "{}",
        finished.stderr
    );
}

/// A watch restarted on the same process with the same checkpoint
/// continues its series: the second watch's readings begin with the
/// first's, and it says so.
#[test]
fn a_restarted_watch_continues_the_series_from_its_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let (server, port) = watched_server("clean");
    let _load = external_load(port, 200, 30);
    let mut args = watch_args(server.pid(), 8, dir.path(), "first");
    args.extend(["--force-gc-every", "2s", "--max-pause", "2s"].map(String::from));
    let first = run_args(&args);
    assert!([0, 1, 2].contains(&first.code), "{}", first.stderr);
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(name)).unwrap()).unwrap()
    };
    let first_readings = read("first.json")["routes"][0]["cycles"]
        .as_array()
        .unwrap()
        .len();
    assert!(first_readings >= 2, "{}", first.stderr);
    // The same checkpoint file, a second watch.
    let mut args = watch_args(server.pid(), 8, dir.path(), "first");
    args[6] = dir.path().join("second.json").display().to_string();
    args.extend(["--force-gc-every", "2s", "--max-pause", "2s"].map(String::from));
    let second = run_args(&args);
    assert!(
        second.stderr.contains("continuing the series"),
        "{}",
        second.stderr
    );
    let second_readings = read("second.json")["routes"][0]["cycles"]
        .as_array()
        .unwrap()
        .len();
    assert!(
        second_readings > first_readings,
        "{first_readings} then {second_readings}"
    );
}
