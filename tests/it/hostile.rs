//! Hostile and careless use (issue: hardening): flags that would corrupt a
//! request or a report, outputs that fail only after minutes of load,
//! descriptor exhaustion, a lying `/json/list`, inspectors that would open
//! beyond loopback. Each is refused up front with what to do instead, and
//! no target is ever started for it.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};

use crate::util::*;

/// A script that would say it ran; every refusal below must leave it unstarted.
fn never_started() -> (tempfile::TempDir, Vec<String>, String) {
    let (dir, path) = script("never-started.mjs", "console.log('must not run');");
    let marker = path.display().to_string();
    (dir, vec![node(), marker.clone()], marker)
}

/// Runs `leakcheck run` on a target that must never start, with `args`.
fn refused(args: &[&str]) -> Finished {
    let (_dir, command, marker) = never_started();
    let port = free_port();
    let finished = RunArgs::new(port).args(args).run(&command);
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    assert!(processes_matching(&marker).is_empty(), "the target started");
    finished
}

fn says(finished: &Finished, needle: &str) {
    assert!(
        finished.stderr.contains(needle),
        "expected {needle:?} in:\n{}",
        finished.stderr
    );
}

#[test]
fn two_formats_on_stdout_are_refused() {
    let finished = refused(&["--markdown", "-"]);
    says(&finished, "only one of --json, --html and --markdown");
}

#[test]
fn routes_and_headers_that_would_split_a_request_are_refused() {
    says(&refused(&["--route", "leak"]), "must start with `/`");
    says(&refused(&["--route", "/a\r\nX: y"]), "line break");
    says(&refused(&["-H", "X-A: 1\r\nX-B: 2"]), "line break");
    // A second framing beside leakcheck's own Content-Length would split
    // the request (`-H 'Transfer-Encoding: chunked' -b hello`).
    says(
        &refused(&["-H", "Transfer-Encoding: chunked", "-b", "hello"]),
        "\"Transfer-Encoding\" is refused",
    );
    says(
        &refused(&["-H", "content-length: 0"]),
        "sets Content-Length",
    );
    says(&refused(&["-H", "Connection: close"]), "--abort");
    let (_dir, scenario) = script(
        "framing.json",
        r#"{"steps":[{"path":"/a","headers":{"Content-Length":"0"}}]}"#,
    );
    says(
        &refused(&["--scenario", scenario.to_str().unwrap()]),
        "step 1: headers: \"Content-Length\" is refused",
    );
}

#[test]
fn abort_one_is_refused_with_why() {
    says(
        &refused(&["--abort", "1"]),
        "no answer is read and nothing is measured",
    );
}

/// A secret in --load-cmd's command line never reaches a report.
#[test]
fn a_secret_in_the_load_command_is_redacted_in_every_report() {
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/leak"])
        .requests("50")
        .cycles(1)
        .args(&[
            "--load-cmd",
            "API_TOKEN=hunter2 true -H 'Authorization: Bearer hunter3'",
        ])
        .args(&["--no-diagnose"])
        .run(&demo_command(port));
    assert!(!finished.stdout.contains("hunter"), "{}", finished.stdout);
    assert!(!finished.stderr.contains("hunter"), "{}", finished.stderr);
    let result = finished.result();
    let shown = result.settings.load_cmd.as_deref().unwrap();
    assert_eq!(shown, "API_TOKEN=*** true -H 'Authorization: Bearer ***'");
    let driver = result.routes[0].cycles[0].driver.as_ref().unwrap();
    assert_eq!(driver.command, shown);
}

#[test]
fn a_count_beyond_64_bits_is_an_error_not_a_saturation() {
    let (_dir, command, _) = never_started();
    let finished = RunArgs::new(free_port())
        .args(&["-a", "18446744073709551616"])
        .run(&command);
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    says(&finished, "more than 18446744073709551615");
}

#[test]
fn outputs_are_checked_before_the_target_starts() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing-dir/x.json").display().to_string();
    let started = std::time::Instant::now();
    says(&refused(&["--json", &missing]), "--json");
    let folder = dir.path().display().to_string();
    says(&refused(&["--html", &folder]), "is a directory");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{ not json").unwrap();
    says(
        &refused(&["--baseline", &bad.display().to_string()]),
        "--baseline",
    );
    let plain = dir.path().join("plain");
    std::fs::write(&plain, "").unwrap();
    says(
        &refused(&["--snapshots", &plain.display().to_string()]),
        "--snapshots",
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn oversized_inputs_stop_at_their_limit() {
    let report = run_leakcheck(&["report", "/dev/zero", "--json", "-"]);
    assert_eq!(report.code, 2);
    says(&report, "larger than 64 MB");
    says(&refused(&["--body-file", "/dev/zero"]), "larger than 64 MB");
}

#[test]
fn more_connections_than_open_files_are_refused_before_anything_starts() {
    let (_dir, command, marker) = never_started();
    let port = free_port();
    let mut run = RunArgs::new(port).args(&["-c", "400"]).command(&command);
    // SAFETY: setrlimit in the child before exec only lowers its own limits.
    unsafe {
        use std::os::unix::process::CommandExt;
        run.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 256,
                rlim_max: 256,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let finished = run_to_end(run);
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    says(&finished, "-c 400 needs about 464 open files");
    says(&finished, "ulimit");
    assert!(processes_matching(&marker).is_empty());
}

#[test]
fn a_password_in_the_url_reaches_no_report() {
    let port = free_port();
    let url = format!("http://admin:hunter2@127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let markdown = dir.path().join("r.md").display().to_string();
    let finished = RunArgs::with_url(&url)
        .routes(&["/churn"])
        .cycles(1)
        .requests("200")
        .args(&["--markdown", &markdown])
        .run(&demo_command(port));
    let result = finished.result();
    assert_eq!(
        result.target.url,
        format!("http://admin:***@127.0.0.1:{port}/")
    );
    for text in [
        &finished.stdout,
        &finished.stderr,
        &std::fs::read_to_string(&markdown).unwrap(),
    ] {
        assert!(!text.contains("hunter2"), "{text}");
    }
}

#[test]
fn a_counter_that_throws_or_returns_no_number_is_a_finding() {
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/sessions"])
        .cycles(1)
        .requests("100")
        .args(&[
            "--counter",
            "typo=globalThis.sesions.size",
            "--counter",
            "set=globalThis.sessions",
        ])
        .run(&target_command("rows-server.mjs", port));
    let result = finished.result();
    let verdict = verdict_of(&result.routes[0]);
    let failed: Vec<&str> = verdict
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::CounterFailed)
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(failed.len(), 2, "{verdict:#?}");
    assert!(
        failed
            .iter()
            .any(|m| m.contains("typo") && m.contains("TypeError")),
        "{failed:?}"
    );
    assert!(
        failed
            .iter()
            .any(|m| m.contains("set") && m.contains("Set")),
        "{failed:?}"
    );
}

/// A fake inspector: answers `/json/list` once with a WebSocket on another
/// host, as a hostile process on a loopback port could.
fn lying_json_list() -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().unwrap();
        let mut request = [0u8; 1024];
        let _ = socket.read(&mut request);
        let body = r#"[{"webSocketDebuggerUrl":"ws://10.1.2.3:9229/0f2c"}]"#;
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let _ = socket.write_all(answer.as_bytes());
    });
    (port, server)
}

#[test]
fn a_websocket_url_off_this_machine_is_not_followed() {
    let (port, server) = lying_json_list();
    let inspect = format!("127.0.0.1:{port}");
    let finished = run_leakcheck(&["sample", "--inspect", &inspect]);
    server.join().unwrap();
    assert_eq!(finished.code, 2);
    says(&finished, "10.1.2.3:9229");
    says(&finished, "--allow-remote-inspector");
}

#[test]
fn pid_refuses_a_process_that_would_open_its_inspector_on_all_interfaces() {
    let (guard, port) = start_demo(&["--inspect-port=0.0.0.0:0"]);
    let pid = guard.pid();
    let finished = run_leakcheck(&["sample", "--pid", &pid.to_string()]);
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    says(&finished, "0.0.0.0");
    says(&finished, "--allow-remote-inspector");
    // It was never signalled: it listens on its app port alone.
    assert_eq!(
        leakcheck::platform::procfs::listening_ports_of(pid),
        vec![port],
        "no inspector was opened"
    );
}

#[test]
fn a_launched_command_that_opens_its_own_inspector_on_all_interfaces_is_refused() {
    let (_dir, mut command, marker) = never_started();
    command.insert(1, "--inspect=0.0.0.0:0".to_string());
    let finished = RunArgs::new(free_port()).run(&command);
    assert_eq!(finished.code, 2);
    says(&finished, "opens the inspector on 0.0.0.0");
    assert!(processes_matching(&marker).is_empty());
}

#[test]
fn a_closed_pipe_is_a_quiet_end() {
    // A heap snapshot with thousands of classes: far more text than a pipe holds.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.heapsnapshot");
    let status = Command::new(node())
        .arg("-e")
        .arg(format!(
            "globalThis.k = Array.from({{length: 6000}}, (_, i) => new (eval(`(class C${{i}} {{}})`))()); \
             require('v8').writeHeapSnapshot({:?})",
            path.display().to_string()
        ))
        .status()
        .unwrap();
    assert!(status.success());
    let mut command = leakcheck();
    command
        .args(["inspect", &path.display().to_string(), "--top", "5000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut guard = Guard::spawn(&mut command);
    let mut stdout = guard.0.stdout.take().unwrap();
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let status = guard.wait_within(std::time::Duration::from_secs(60));
    let mut stderr = String::new();
    guard
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status.code(), Some(0), "{stderr}");
}
