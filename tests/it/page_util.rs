//! What the page tests share: the test pages served on a free port, the
//! check that Chromium is installed (required in CI), and a page run that
//! asserts Chromium was stopped afterwards.

use std::path::Path;

use crate::util::*;

/// Serves tests/targets/pages on a free port.
pub fn serve_pages() -> (Guard, u16) {
    let port = free_port();
    let server = Guard::spawn(
        std::process::Command::new(node()).args([
            repo_path("tests/targets/static-server.mjs")
                .display()
                .to_string(),
            port.to_string(),
            repo_path("tests/targets/pages").display().to_string(),
        ]),
    );
    wait_listening(port);
    (server, port)
}

pub fn chromium_installed() -> bool {
    let found = leakcheck::page::browser::find(None).is_ok();
    if !found {
        // CI installs Chromium: there a missing one is a broken setup, not a skip.
        assert!(!in_ci(), "CI=true and no Chromium on the PATH");
        eprintln!("skipped: no Chromium on the PATH (apt-get install chromium)");
    }
    found
}

pub fn page_run(page: &str, actions: &[&str], extra: &[&str]) -> Finished {
    let (_server, port) = serve_pages();
    let url = format!("http://127.0.0.1:{port}/{page}");
    let mut args = RunArgs::page(&url).args(extra);
    for action in actions {
        args = args.args(&["--action", action]);
    }
    let finished = args.run(&[]);
    if let Ok(result) = serde_json::from_str::<RunResult>(&finished.stdout)
        && let Some(pid) = result.target.pid
    {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists() || is_zombie(pid),
            "Chromium {pid} was left running"
        );
    }
    finished
}

pub fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit(") ").next().is_some_and(|r| r.starts_with('Z')))
}
