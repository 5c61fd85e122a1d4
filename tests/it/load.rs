//! `leakcheck load` against real servers on loopback: exact counts, body
//! framings, servers that close connections, fail, or stall, and a refused
//! port. Every server is started by the test and killed by its PID.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use leakcheck::report::load_view::LoadJson;

use crate::util::*;

/// The test server, stopped when dropped.
struct LoadServer {
    _guard: Guard,
    port: u16,
}

impl LoadServer {
    fn start() -> LoadServer {
        let port = free_port();
        let script = repo_path("tests/targets/load-server.mjs");
        let guard = Guard::spawn(
            Command::new(node())
                .arg(script)
                .arg(port.to_string())
                .stdout(std::process::Stdio::null()),
        );
        wait_listening(port);
        LoadServer {
            _guard: guard,
            port,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// How many requests the server has seen (not counting this one).
    fn seen(&self) -> u64 {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .write_all(b"GET /count HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        let body = text.split("\r\n\r\n").nth(1).unwrap();
        serde_json::from_str::<serde_json::Value>(body).unwrap()["seen"]
            .as_u64()
            .unwrap()
    }
}

/// `leakcheck load URL FLAGS…` (`args[0]` is the URL), read back.
fn load(args: &[&str]) -> (Finished, LoadJson) {
    let finished = RunArgs::load(args[0]).args(&args[1..]).run(&[]);
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let json = finished.load_json();
    (finished, json)
}

#[test]
fn exact_count_is_what_the_server_saw() {
    let server = LoadServer::start();
    let (_, json) = load(&[&server.url("/hit"), "-c", "7", "-a", "3001"]);
    assert_eq!(json.requests.total, 3001);
    assert_eq!(json.s2xx, 3001);
    assert_eq!(json.errors, 0);
    assert_eq!(server.seen(), 3001, "not one request more or less");
    assert!(json.latency.as_ref().unwrap().p99 > 0.0);
    assert!(json.throughput.total > 3001 * 5);
}

#[test]
fn chunked_and_large_bodies_are_read_whole() {
    let server = LoadServer::start();
    let (_, json) = load(&[
        &server.url("/chunked"),
        "-c",
        "3",
        "-a",
        "500",
        "--route",
        "/big",
    ]);
    assert_eq!(json.s2xx, 500);
    assert_eq!(json.errors, 0);
    assert_eq!(json.reconnects, 0, "keep-alive survives chunked bodies");
    // 250 chunked bodies of 4004 bytes and 250 of 200 000.
    assert!(json.throughput.total > 250 * 204_004);
    assert_eq!(server.seen(), 500);
}

#[test]
fn server_closing_connections_gets_reconnects_not_errors() {
    let server = LoadServer::start();
    let (_, json) = load(&[&server.url("/close-every?n=5"), "-c", "4", "-a", "1000"]);
    assert_eq!(json.s2xx, 1000);
    assert_eq!(json.errors, 0);
    let reconnects = json.reconnects;
    assert!(
        (150..=200).contains(&reconnects),
        "about one reconnect per 5 requests: {reconnects}"
    );
    assert_eq!(server.seen(), 1000);
}

#[test]
fn server_errors_are_counted_as_non_2xx() {
    let server = LoadServer::start();
    let (finished, json) = load(&[&server.url("/flaky"), "-c", "2", "-a", "400"]);
    assert_eq!(json.s5xx, 100);
    assert_eq!(json.s2xx, 300);
    assert_eq!(json.non2xx, 100);
    assert!(
        finished.stderr.contains("5xx 100"),
        "the summary shows them: {}",
        finished.stderr
    );
}

#[test]
fn a_server_that_never_answers_ends_the_run_after_one_timeout_window() {
    let server = LoadServer::start();
    let started = Instant::now();
    // 300 requests on 4 connections at 300 ms each would take 22 s of
    // timeouts; the first window in which nothing answered ends the run.
    let finished = run_leakcheck(&[
        "load",
        "--json",
        "-",
        "-q",
        &server.url("/stall"),
        "-c",
        "4",
        "-a",
        "300",
        "--timeout",
        "300ms",
    ]);
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    assert!(
        finished.stderr.contains("stopped answering"),
        "{}",
        finished.stderr
    );
    let json = finished.load_json();
    assert!(json.stalled);
    assert_eq!(json.timeouts, 4, "the four requests in flight");
    assert_eq!(json.s2xx, 0);
    assert!(json.latency.is_none(), "no response, no latency");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn duration_and_rate_limit_the_run() {
    let server = LoadServer::start();
    let (_, json) = load(&[&server.url("/hit"), "-c", "4", "-d", "1s", "-R", "200"]);
    let total = json.requests.total;
    // 200 req/s for 1 s, scheduled: within a few of 200.
    assert!((190..=201).contains(&total), "{total}");
    assert_eq!(server.seen(), total);
}

#[test]
fn refused_port_is_a_clear_error() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/");
    let finished = run_leakcheck(&["load", &url, "-a", "10", "-q"]);
    assert_eq!(finished.code, 2);
    assert!(
        finished
            .stderr
            .contains(&format!("nothing accepts connections on 127.0.0.1:{port}")),
        "{}",
        finished.stderr
    );
}

#[test]
fn remote_targets_are_refused_without_the_flag() {
    let finished = run_leakcheck(&["load", "http://192.0.2.1:80/", "-a", "1", "-q"]);
    assert_eq!(finished.code, 2);
    assert!(
        finished.stderr.contains("--allow-remote"),
        "{}",
        finished.stderr
    );
}

#[test]
fn ctrl_c_prints_what_was_measured() {
    let server = LoadServer::start();
    let url = server.url("/slow");
    let mut command = leakcheck();
    command
        .args(["load", &url, "-c", "2", "-d", "60s", "--json", "-", "-q"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut guard = Guard::spawn(&mut command);
    // Signal once the server has seen a few requests of the load.
    let started = Instant::now();
    while server.seen() <= 10 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no request arrived"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling the child this test started, by its PID.
    unsafe { libc::kill(guard.pid() as i32, libc::SIGINT) };
    let status = guard.wait_within(Duration::from_secs(10));
    let mut stdout = String::new();
    guard
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert_eq!(status.code(), Some(2));
    let json: LoadJson = serde_json::from_str(&stdout).unwrap();
    assert!(json.interrupted);
    let total = json.requests.total;
    assert!(total > 10, "requests before Ctrl-C are reported: {total}");
    assert_eq!(server.seen(), total);
}
