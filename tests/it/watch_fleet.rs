//! `leakcheck watch` over many processes (`--all --match`): real watch
//! servers (tests/targets/watch-server.mjs, copied into a folder of the
//! test's own so that `--match` takes only them and never another test's),
//! each started with `--inspect-port=0` as the README's recipe says, under
//! loads leakcheck does not send; Debian's Prometheus scraping
//! `--metrics`; processes that exit and start mid-watch.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::*;

/// A folder holding a copy of the watch server: its path is what
/// `--match` selects.
fn server_folder() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("fleet-server.mjs");
    std::fs::copy(repo_path("tests/targets/watch-server.mjs"), &script).unwrap();
    (dir, script)
}

/// One watch server on a free port (`leak` or `clean`, its note scaled).
fn server(script: &Path, mode: &str, scale: u32, node_options: &[&str]) -> (Guard, u16) {
    crate::watch::watch_server_at(script, mode, scale, node_options)
}

/// `leakcheck load` at `rate` for `seconds`: traffic the watch does not send.
fn load(port: u16, rate: u32, seconds: u32) -> Guard {
    let mut command = leakcheck();
    command
        .args([
            "load",
            &format!("http://127.0.0.1:{port}/"),
            "-q",
            "-c",
            "5",
        ])
        .args(["-R", &rate.to_string(), "-d", &format!("{seconds}s")])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    Guard::spawn(&mut command)
}

/// `watch --all --match FOLDER` for `seconds`, in the background, its JSON
/// and progress in `out`.
fn fleet_watch(folder: &Path, seconds: u32, out: &Path, extra: &[&str]) -> Guard {
    let mut command = leakcheck();
    command
        .args(["watch", "--all", "--match"])
        .arg(folder)
        .args(["-d", &format!("{seconds}s"), "--json"])
        .arg(out.join("fleet.json"))
        .arg("--checkpoint")
        .arg(out)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(out.join("stderr.txt")).unwrap());
    Guard::spawn(&mut command)
}

fn finished_result(watch: &mut Guard, out: &Path, limit: Duration) -> (i32, serde_json::Value) {
    let status = watch.wait_within(limit);
    let stderr = std::fs::read_to_string(out.join("stderr.txt")).unwrap_or_default();
    let text = std::fs::read_to_string(out.join("fleet.json"))
        .unwrap_or_else(|e| panic!("no JSON ({e}): {stderr}"));
    validate(&text);
    (
        status.code().unwrap_or(-1),
        serde_json::from_str(&text).unwrap(),
    )
}

fn route_of(result: &serde_json::Value, pid: u32) -> &serde_json::Value {
    result["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["pid"] == pid)
        .unwrap_or_else(|| panic!("pid {pid} is not in the report: {result:#}"))
}

fn prometheus_installed() -> bool {
    let found = Command::new("prometheus").arg("--version").output().is_ok();
    if !found {
        assert!(!in_ci(), "CI=true and Debian's prometheus is not installed");
        eprintln!("skipped: no prometheus (apt-get install prometheus)");
    }
    found
}

/// `GET path` on 127.0.0.1:`port`, the body.
fn get(port: u16, path: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text.split_once("\r\n\r\n")
        .map_or(text.clone(), |(_, b)| b.to_string())
}

/// An instant query through Prometheus's HTTP API: `[(labels, value)]`.
fn query(port: u16, promql: &str) -> Vec<(serde_json::Value, f64)> {
    let encoded: String = url::form_urlencoded::byte_serialize(promql.as_bytes()).collect();
    let body = get(port, &format!("/api/v1/query?query={encoded}"));
    let answer: serde_json::Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(answer["status"], "success", "{answer}");
    answer["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let value = r["value"][1].as_str().unwrap().parse().unwrap();
            (r["metric"].clone(), value)
        })
        .collect()
}

#[test]
fn the_shipped_alert_rules_pass_promtool() {
    if !prometheus_installed() {
        return;
    }
    let output = Command::new("promtool")
        .args(["check", "rules"])
        .arg(repo_path("deploy/prometheus/leakcheck-rules.yml"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("SUCCESS: 4 rules found"), "{text}");
}

/// Three processes, one leaking ~6 KB a request at 400 requests/s (some
/// 8 GB an hour against a 1 GB heap), two clean; a real Prometheus scrapes
/// the watch every second and is asked, through its own API, for what a
/// dashboard or an alert would see.
#[test]
fn prometheus_sees_the_leaking_process_projected_and_the_clean_ones_never_leaking() {
    if !prometheus_installed() {
        return;
    }
    let (folder, script) = server_folder();
    let (leak, leak_port) = server(&script, "leak", 40, &["--max-old-space-size=1024"]);
    let (clean_a, port_a) = server(&script, "clean", 1, &[]);
    let (clean_b, port_b) = server(&script, "clean", 1, &[]);
    let _loads = [
        load(leak_port, 400, 70),
        load(port_a, 200, 70),
        load(port_b, 200, 70),
    ];
    let metrics_port = free_port();
    let prometheus_port = free_port();
    let config = folder.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: leakcheck\n    static_configs:\n\
             \x20     - targets: ['127.0.0.1:{metrics_port}']\n"
        ),
    )
    .unwrap();
    let mut prometheus_command = Command::new("prometheus");
    prometheus_command
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            folder.path().join("tsdb").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{prometheus_port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _prometheus = Guard::spawn(&mut prometheus_command);
    let out = tempfile::tempdir().unwrap();
    let metrics = format!("127.0.0.1:{metrics_port}");
    let mut watch = fleet_watch(folder.path(), 65, out.path(), &["--metrics", &metrics]);
    // While the watch runs, its endpoint answers with the format's lines.
    let started = Instant::now();
    let mut page = String::new();
    while started.elapsed() < Duration::from_secs(30) && !page.contains("leakcheck_watch_up{") {
        std::thread::sleep(Duration::from_millis(500));
        if !port_is_free(metrics_port) {
            page = get(metrics_port, "/metrics");
        }
    }
    assert!(page.contains("# TYPE leakcheck_watch_leak gauge"), "{page}");
    let (code, result) = finished_result(&mut watch, out.path(), Duration::from_secs(150));
    assert_eq!(code, 1, "a leak among them: {result:#}");

    // What Prometheus kept: the leak's projection, and the clean ones
    // never flagged over the whole watch.
    let leak_pid = leak.pid().to_string();
    let projected = query(
        prometheus_port,
        &format!("last_over_time(leakcheck_watch_limit_seconds{{pid=\"{leak_pid}\"}}[5m])"),
    );
    assert_eq!(projected.len(), 1, "{projected:?}");
    let (labels, seconds) = &projected[0];
    assert_eq!(labels["limit"], "V8's heap limit", "{labels}");
    assert!(*seconds < 3600.0, "projected {seconds} s");
    let flagged = query(prometheus_port, "max_over_time(leakcheck_watch_leak[5m])");
    for (labels, value) in &flagged {
        let expected = if labels["pid"] == leak_pid.as_str() {
            1.0
        } else {
            0.0
        };
        assert_eq!(*value, expected, "{labels}: {flagged:?}");
    }
    assert_eq!(flagged.len(), 3, "{flagged:?}");

    // The report lists them all, leaks first.
    let routes = result["routes"].as_array().unwrap();
    assert_eq!(routes.len(), 3, "{result:#}");
    assert_eq!(routes[0]["pid"], leak.pid(), "leaks first");
    assert_eq!(routes[0]["verdict"]["kind"], "retention");
    for clean in [&clean_a, &clean_b] {
        let kind = route_of(&result, clean.pid())["verdict"]["kind"].clone();
        assert!(
            kind == "no-retention" || kind == "inconclusive",
            "pid {}: {kind}",
            clean.pid()
        );
    }
}

/// A process that exits mid-watch is reported exited with what was read
/// before; one started after the watch began is picked up; one that runs
/// out of memory while watched is `memory-exhausted`.
#[test]
fn processes_that_exit_start_or_run_out_of_memory_mid_watch_are_each_reported() {
    let (folder, script) = server_folder();
    let (mut first, first_port) = server(&script, "clean", 1, &[]);
    let (dying, dying_port) = server(&script, "leak", 40, &["--max-old-space-size=48"]);
    let _first_load = load(first_port, 200, 40);
    let out = tempfile::tempdir().unwrap();
    let mut watch = fleet_watch(folder.path(), 40, out.path(), &[]);
    std::thread::sleep(Duration::from_secs(8));
    // ~6 KB a request at 400/s fills a 48 MB heap in well under 30 s.
    let _dying_load = load(dying_port, 400, 30);
    std::thread::sleep(Duration::from_secs(4));
    let _ = first.0.kill();
    let _ = first.0.wait();
    let (later, later_port) = server(&script, "clean", 1, &[]);
    let _later_load = load(later_port, 200, 25);
    let (_, result) = finished_result(&mut watch, out.path(), Duration::from_secs(120));

    let first_route = route_of(&result, first.pid());
    let exited = &first_route["watch"]["exited"];
    assert!(
        exited["reason"]
            .as_str()
            .unwrap_or("")
            .starts_with("exited after"),
        "{first_route:#}"
    );
    assert!(!first_route["cycles"].as_array().unwrap().is_empty());
    let later_route = route_of(&result, later.pid());
    assert!(
        !later_route["cycles"].as_array().unwrap().is_empty(),
        "{later_route:#}"
    );
    let dying_route = route_of(&result, dying.pid());
    assert_eq!(
        dying_route["verdict"]["kind"], "memory-exhausted",
        "{dying_route:#}"
    );
    let routes = result["routes"].as_array().unwrap();
    assert_eq!(routes[0]["pid"], dying.pid(), "leaks first");
}

/// `--pid PRIMARY` of a Node cluster watches its workers too, found
/// through the primary; each worker has a debug port of its own
/// (node:cluster's, ephemeral here), so each inspector opens.
#[test]
fn a_clusters_workers_are_found_through_their_primary() {
    let port = free_port();
    let mut command = Command::new(node());
    command
        .arg("--inspect-port=0")
        .arg(repo_path("tests/targets/cluster-server.mjs"))
        .args([&port.to_string(), "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let primary = Guard::spawn(&mut command);
    wait_listening(port);
    let workers = || {
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let parent = stat
                .rsplit(") ")
                .next()
                .and_then(|rest| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if parent == Some(primary.pid()) {
                found.push(pid);
            }
        }
        found
    };
    let started = Instant::now();
    while workers().len() < 2 && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let children = workers();
    assert_eq!(children.len(), 2, "the cluster forked {children:?}");
    let _load = load(port, 200, 25);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("cluster.json");
    let finished = run_leakcheck(&[
        "watch",
        "--pid",
        &primary.pid().to_string(),
        "-d",
        "20s",
        "--json",
        json.to_str().unwrap(),
        "--checkpoint",
        out.path().to_str().unwrap(),
    ]);
    let text =
        std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}: {}", finished.stderr));
    validate(&text);
    let result: serde_json::Value = serde_json::from_str(&text).unwrap();
    let watched: Vec<u64> = result["routes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["pid"].as_u64())
        .collect();
    for pid in children.iter().chain([&primary.pid()]) {
        assert!(
            watched.contains(&u64::from(*pid)),
            "pid {pid} not watched: {watched:?}\n{}",
            finished.stderr
        );
    }
    // The workers served the load and were read; each left as found.
    for worker in &children {
        let route = route_of(&result, *worker);
        assert!(!route["cycles"].as_array().unwrap().is_empty(), "{route:#}");
        assert_eq!(
            route["watch"]["detached"]["inspector_closed"], true,
            "{route:#}"
        );
    }
    assert!(
        std::path::Path::new(
            &out.path()
                .join(format!("leakcheck-watch-{}.ndjson", children[0]))
        )
        .exists()
    );
}
