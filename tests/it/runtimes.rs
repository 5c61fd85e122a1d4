//! Deno and Bun: the same checks on the other JavaScript runtimes, with
//! targets of our own (`tests/targets/runtimes`): one TypeScript server
//! that both run directly (a module-level Map keyed per request, its
//! bounded twin, a listener added per request) and a module of functions
//! for `fn`. Started the way their users start them: `deno task serve`
//! (a task in deno.json) and `npm start` (a package.json script that runs
//! `bun server.ts`). `.ci/run` installs both from npm and sets
//! LEAKCHECK_RUNTIMES_BIN; without them (outside CI) the tests say they
//! are skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::*;

const TARGET: &str = "tests/targets/runtimes";
const FILES: [&str; 4] = ["server.ts", "cache.ts", "package.json", "deno.json"];

/// Deno's and Bun's folder, first on the PATH of every command here.
fn runtimes_bin() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("LEAKCHECK_RUNTIMES_BIN") {
        return Some(PathBuf::from(bin));
    }
    let found = on_path("deno") && on_path("bun");
    assert!(
        found || !in_ci(),
        "Deno and Bun are needed: .ci/run installs them from npm and sets LEAKCHECK_RUNTIMES_BIN"
    );
    if !found {
        eprintln!("Deno and Bun tests skipped: neither LEAKCHECK_RUNTIMES_BIN nor both on PATH");
    }
    found.then(PathBuf::new)
}

/// The target folder, copied into the build's scratch space (a watch
/// writes its checkpoint into the working directory).
fn project(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("runtimes-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    for file in FILES {
        std::fs::copy(repo_path(&format!("{TARGET}/{file}")), dir.join(file)).unwrap();
    }
    dir
}

/// leakcheck in `dir` with Deno and Bun on the PATH.
fn leakcheck_in(dir: &Path, bin: &Path, args: &[&str]) -> Command {
    let mut command = leakcheck();
    let path = std::env::var("PATH").unwrap_or_default();
    command
        .current_dir(dir)
        .env("PATH", format!("{}:{path}", bin.display()))
        .args(args);
    command
}

fn route<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["route"] == name)
        .unwrap_or_else(|| panic!("no route {name} in {json}"))
}

/// What every server check on Deno or Bun must show: the runtime named
/// (not Node), what it lacks stated, the served count read, the cache a
/// leak held by `sessions` stored at its `.ts` line, the bounded twin
/// clean, the listener per request named as listener growth.
fn check_server(runtime: &str, launch: &[&str]) {
    let Some(bin) = runtimes_bin() else { return };
    let dir = project(runtime);
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let mut args = vec![
        "run",
        "--url",
        &url,
        "--json",
        "-",
        "--route",
        "/remember?id={n}",
    ];
    args.extend(["--route", "/bounded?id={n}", "--route", "/subscribe", "--"]);
    args.extend(launch);
    let mut command = leakcheck_in(&dir, &bin, &args);
    command.env("PORT", port.to_string());
    let done = run_within(command, RUN_DEADLINE * 2);
    assert_eq!(done.code, 1, "a leak exits 1:\n{}", done.stderr);
    let json = done.json();
    let target = &json["target"];
    assert!(
        target["runtime"].as_str().unwrap().starts_with(runtime),
        "{target}"
    );
    assert!(target["node_version"].is_null(), "{target}");
    assert!(
        target["runtime_gaps"].as_array().unwrap().len() >= 3,
        "{target}"
    );
    assert!(
        done.stderr.contains(&format!("with {runtime}'s inspector")),
        "{}",
        done.stderr
    );

    let cache = route(&json, "/remember?id={n}");
    assert_eq!(
        cache["verdict"]["kind"], "retention",
        "{}",
        cache["verdict"]
    );
    assert_eq!(cache["diagnosis"]["holders"][0]["name"], "sessions");
    let line = line_of(&format!("{TARGET}/server.ts"), "sessions.set(");
    let action = cache["verdict"]["action"].as_str().unwrap();
    assert!(
        action.contains(&format!(
            "server.ts:{line}: `sessions.set(id, session(id));`"
        )),
        "{action}"
    );
    for cycle in cache["cycles"].as_array().unwrap() {
        assert_eq!(cycle["served"], cycle["responses"], "{cycle}");
    }

    let bounded = route(&json, "/bounded?id={n}");
    assert_eq!(
        bounded["verdict"]["kind"], "no-retention",
        "{}",
        bounded["verdict"]
    );

    let listeners = route(&json, "/subscribe");
    assert_eq!(
        listeners["verdict"]["leak"], true,
        "{}",
        listeners["verdict"]
    );
    let named = listeners["verdict"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| {
            f["kind"] == "handle-growth"
                && f["message"]
                    .as_str()
                    .unwrap()
                    .contains("listeners.process.leakcheck:reload")
        });
    assert!(named, "{}", listeners["verdict"]);
}

#[test]
fn a_deno_server_started_by_its_task_leaks_at_its_ts_line_and_its_bounded_twin_is_clean() {
    check_server("Deno", &["deno", "task", "serve"]);
}

#[test]
fn a_bun_server_started_by_npm_start_leaks_at_its_ts_line_and_its_bounded_twin_is_clean() {
    check_server("Bun", &["npm", "start"]);
}

/// `fn` on a runtime: the Map that keeps a page per call, held by `pages`
/// and stored at its `.ts` line; the bounded twin clean.
fn check_function(runtime: &str) {
    let Some(bin) = runtimes_bin() else { return };
    let dir = project(&format!("fn-{runtime}"));
    let flag = runtime.to_lowercase();
    let leak = leakcheck_in(
        &dir,
        &bin,
        &["fn", "cache.ts#remember", "--runtime", &flag, "--json", "-"],
    );
    let done = run_within(leak, RUN_DEADLINE);
    assert_eq!(done.code, 1, "{}", done.stderr);
    let json = done.json();
    assert!(
        json["target"]["runtime"]
            .as_str()
            .unwrap()
            .starts_with(runtime)
    );
    let only = &json["routes"][0];
    assert_eq!(only["verdict"]["kind"], "retention", "{}", only["verdict"]);
    assert_eq!(only["diagnosis"]["holders"][0]["name"], "pages");
    let line = line_of(&format!("{TARGET}/cache.ts"), "pages.set(");
    let action = only["verdict"]["action"].as_str().unwrap();
    assert!(action.contains(&format!("cache.ts:{line}:")), "{action}");

    let clean = leakcheck_in(
        &dir,
        &bin,
        &["fn", "cache.ts#recent", "--runtime", &flag, "--json", "-"],
    );
    let done = run_within(clean, RUN_DEADLINE);
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert_eq!(done.json()["routes"][0]["verdict"]["kind"], "no-retention");
}

#[test]
fn a_function_that_keeps_a_page_per_call_leaks_under_deno_and_its_bounded_twin_does_not() {
    check_function("Deno");
}

#[test]
fn a_function_that_keeps_a_page_per_call_leaks_under_bun_and_its_bounded_twin_does_not() {
    check_function("Bun");
}

/// `watch` of a launched Deno or Bun server under traffic: neither
/// publishes its collections, so readings come from the collections the
/// watch forces; the served count is the preload's.
fn check_watch(runtime: &str, launch: &[&str]) {
    let Some(bin) = runtimes_bin() else { return };
    let dir = project(&format!("watch-{runtime}"));
    let port = free_port();
    let mut args = vec![
        "watch",
        "-d",
        "12s",
        "--force-gc-every",
        "2s",
        "--max-pause",
        "2s",
    ];
    args.extend(["--json", "-", "--"]);
    args.extend(launch);
    let mut command = leakcheck_in(&dir, &bin, &args);
    command.env("PORT", port.to_string());
    let mut load = leakcheck();
    load.args([
        "load",
        &format!("http://127.0.0.1:{port}/remember?id={{n}}"),
    ]);
    load.args(["-d", "8s", "-R", "1000", "-q"]);
    let watcher = std::thread::spawn(move || run_within(command, RUN_DEADLINE));
    wait_listening(port);
    let loaded = run_within(load, RUN_DEADLINE);
    assert_eq!(loaded.code, 0, "{}", loaded.stderr);
    let done = watcher.join().unwrap();
    let json = done.json();
    assert!(
        json["target"]["runtime"]
            .as_str()
            .unwrap()
            .starts_with(runtime)
    );
    let readings = json["routes"][0]["cycles"].as_array().unwrap();
    assert!(
        readings.len() >= 3,
        "{} readings:\n{}",
        readings.len(),
        done.stderr
    );
    let served: u64 = readings
        .iter()
        .filter_map(|r| r["served"].as_u64())
        .max()
        .unwrap_or(0);
    assert!(
        served >= 1000,
        "the preload's count: {served}\n{}",
        done.stderr
    );
    assert!(
        done.stderr.contains("publishes no collections of its own")
            || done.stderr.contains("forced"),
        "{}",
        done.stderr
    );
}

#[test]
fn a_watch_of_a_deno_server_reads_at_forced_collections_with_its_served_count() {
    check_watch(
        "Deno",
        &["deno", "run", "--allow-net", "--allow-env", "server.ts"],
    );
}

#[test]
fn a_watch_of_a_bun_server_reads_at_forced_collections_with_its_served_count() {
    check_watch("Bun", &["bun", "server.ts"]);
}

/// A Bun server started by hand with its inspector: `--inspect` with the
/// ws:// URL Bun prints attaches (WebKit's protocol) and names the leak;
/// `--pid` is refused before any signal, since SIGUSR1 would end Bun, and
/// the server is still serving afterwards.
#[test]
fn a_bun_server_is_attached_by_its_printed_url_and_never_signalled_by_pid() {
    use std::io::BufRead;
    let Some(bin) = runtimes_bin() else { return };
    let dir = project("attach-Bun");
    let port = free_port();
    let path = std::env::var("PATH").unwrap_or_default();
    let mut server = Guard::spawn(
        Command::new("bun")
            .args(["--inspect=127.0.0.1:0", "server.ts"])
            .current_dir(&dir)
            .env("PATH", format!("{}:{path}", bin.display()))
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped()),
    );
    // Read on a thread that keeps draining, so Bun never writes to a
    // closed pipe.
    let stderr = server.0.stderr.take().unwrap();
    let (found, url) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if let Some(rest) = line.trim().strip_prefix("ws://") {
                let _ = found.send(format!("ws://{rest}"));
            }
        }
    });
    let url = url
        .recv_timeout(std::time::Duration::from_secs(15))
        .expect("Bun prints its inspector's URL");
    wait_listening(port);

    let refused = run_within(
        leakcheck_in(&dir, &bin, &["sample", "--pid", &server.pid().to_string()]),
        RUN_DEADLINE,
    );
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("is Bun, which opens no inspector on SIGUSR1"),
        "{}",
        refused.stderr
    );
    assert!(
        server
            .exit_within(std::time::Duration::from_millis(200))
            .is_none(),
        "Bun was signalled"
    );

    let app = format!("http://127.0.0.1:{port}");
    let args = [
        "run",
        "--inspect",
        &url,
        "--url",
        &app,
        "--route",
        "/remember?id={n}",
        "--json",
        "-",
    ];
    let done = run_within(leakcheck_in(&dir, &bin, &args), RUN_DEADLINE);
    assert_eq!(done.code, 1, "{}", done.stderr);
    let json = done.json();
    assert!(
        json["target"]["runtime"]
            .as_str()
            .unwrap()
            .starts_with("Bun"),
        "{}",
        json["target"]
    );
    assert_eq!(
        json["routes"][0]["diagnosis"]["holders"][0]["name"],
        "sessions"
    );
    assert!(
        server
            .exit_within(std::time::Duration::from_millis(100))
            .is_none()
    );
}
