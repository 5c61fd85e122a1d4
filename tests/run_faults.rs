//! `leakcheck run` when things go wrong before or during the check: a busy
//! port, a target that exits before listening, a route that fails. Each
//! asserts the exit code, the message, and that no process is left behind.

mod common;

use std::net::TcpListener;

use common::*;

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
    let url = format!("http://127.0.0.1:{port}");
    let command = demo_command(port);
    let mut args = vec![
        "run", "--url", &url, "--route", "/missing", "--cycles", "2", "-a", "200", "--json", "-",
        "-q", "--",
    ];
    args.extend(command.iter().map(String::as_str));
    let finished = run_leakcheck(&args);
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let json = finished.json();
    let route = &json["routes"][0];
    assert_eq!(route["verdict"]["kind"], "inconclusive");
    assert_eq!(route["verdict"]["leak"], false);
    assert!(
        route["verdict"]["summary"]
            .as_str()
            .unwrap()
            .contains("no successful response")
    );
    assert_eq!(route["cycles"][0]["non_2xx"], 200);
    assert!(port_is_free(port));
    assert!(none_running(&command));
}
