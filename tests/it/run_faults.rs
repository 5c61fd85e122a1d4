//! `leakcheck run` when things go wrong before or during the check: a busy
//! port, a target that exits before listening, a route that fails. Each
//! asserts the exit code, the message, and that no process is left behind.

use std::net::TcpListener;

use crate::util::*;

#[test]
fn busy_port_is_refused_naming_its_holder() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (_dir, marker_script) = script("never-started.mjs", "console.log('must not run');");
    let url = format!("http://127.0.0.1:{port}");
    let marker = marker_script.display().to_string();
    let node = node();
    let finished = run_leakcheck(&["run", "--url", &url, "--", &node, &marker]);
    assert_eq!(finished.code, 2);
    assert!(
        finished.stderr.contains(&format!("port {port}")),
        "{}",
        finished.stderr
    );
    assert!(
        finished.stderr.contains("already in use"),
        "{}",
        finished.stderr
    );
    assert!(
        finished
            .stderr
            .contains(&format!("PID {}", std::process::id())),
        "names the holder: {}",
        finished.stderr
    );
    assert!(
        processes_matching(&marker).is_empty(),
        "the target was never started"
    );
}

#[test]
fn target_exiting_before_listening_reports_code_and_output() {
    let port = free_port();
    let (_dir, path) = script(
        "bad-config.mjs",
        "console.error('config error: DATABASE_URL is not set'); process.exit(3);",
    );
    let url = format!("http://127.0.0.1:{port}");
    let path = path.display().to_string();
    let node = node();
    let finished = run_leakcheck(&["run", "--url", &url, "--", &node, &path]);
    assert_eq!(finished.code, 2);
    assert!(
        finished
            .stderr
            .contains("exited with exit code 3 before listening"),
        "{}",
        finished.stderr
    );
    assert!(
        finished.stderr.contains("DATABASE_URL is not set"),
        "{}",
        finished.stderr
    );
    assert!(processes_matching(&path).is_empty());
    assert!(port_is_free(port));
}

#[test]
fn failing_route_is_never_called_clean() {
    let port = free_port();
    let command = demo_command(port);
    let finished = RunArgs::new(port)
        .routes(&["/missing"])
        .cycles(2)
        .requests("200")
        .run(&command);
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let result = finished.result();
    let route = &result.routes[0];
    let verdict = verdict_of(route);
    assert_eq!(verdict.kind, VerdictKind::Inconclusive);
    assert!(!verdict.fails_gate);
    assert!(verdict.summary.contains("no successful response"));
    assert_eq!(route.cycles[0].non_2xx, 200);
    assert!(port_is_free(port));
    assert!(none_running(&command));
}
