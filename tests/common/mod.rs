//! Helpers shared by the integration tests: running the real binary with a
//! deadline, free ports, and guards that stop every process a test starts by
//! its PID, even when the test fails.
#![allow(dead_code)]

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// No leakcheck run in a test may take longer than this.
pub const RUN_DEADLINE: Duration = Duration::from_secs(120);

pub fn leakcheck() -> Command {
    Command::new(env!("CARGO_BIN_EXE_leakcheck"))
}

pub fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// A port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn port_is_free(port: u16) -> bool {
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_err()
}

/// Kills its process by PID when dropped, so a failing assertion never
/// leaves a process behind.
pub struct Guard(pub Child);

impl Guard {
    pub fn spawn(command: &mut Command) -> Guard {
        Guard(command.spawn().expect("spawn"))
    }
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
    /// Waits for exit, killing the process after `limit`.
    pub fn wait_within(&mut self, limit: Duration) -> ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status;
            }
            if started.elapsed() > limit {
                let _ = self.0.kill();
                panic!("process {} did not finish within {limit:?}", self.0.id());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// What a finished leakcheck run printed.
pub struct Finished {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// Runs leakcheck with `args` to the end (bounded by `RUN_DEADLINE`).
pub fn run_leakcheck(args: &[&str]) -> Finished {
    let mut command = leakcheck();
    command.args(args);
    run_to_end(command)
}

/// Runs `command` to the end (bounded by `RUN_DEADLINE`), capturing its output.
pub fn run_to_end(mut command: Command) -> Finished {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut guard = Guard::spawn(&mut command);
    let mut stdout = guard.0.stdout.take().unwrap();
    let mut stderr = guard.0.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).ok();
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        stderr.read_to_string(&mut s).ok();
        s
    });
    let status = guard.wait_within(RUN_DEADLINE);
    Finished {
        code: status.code().unwrap_or(-1),
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

/// PIDs of live processes whose command line contains `marker` (zombies
/// have an empty command line and do not match).
pub fn processes_matching(marker: &str) -> Vec<u32> {
    use leakcheck::procfs::{all_pids, command_line};
    all_pids()
        .into_iter()
        .filter(|pid| *pid != std::process::id() && command_line(*pid).contains(marker))
        .collect()
}

/// Writes a target script into a fresh directory and returns its path; the
/// directory lives as long as the returned guard.
pub fn script(name: &str, source: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, source).unwrap();
    (dir, path)
}

/// The Node binary the tests use: `LEAKCHECK_TEST_NODE` (CI sets it to a
/// Node 22 for a second pass) or `node` from the PATH.
pub fn node() -> String {
    std::env::var("LEAKCHECK_TEST_NODE").unwrap_or_else(|_| "node".to_string())
}

/// The demo server's command line for leakcheck, on `port`.
pub fn demo_command(port: u16) -> Vec<String> {
    vec![
        node(),
        repo_path("examples/demo-server.mjs").display().to_string(),
        port.to_string(),
    ]
}

/// A target script's command line for leakcheck: `node tests/targets/NAME PORT`.
pub fn target_command(name: &str, port: u16) -> Vec<String> {
    vec![
        node(),
        repo_path(&format!("tests/targets/{name}"))
            .display()
            .to_string(),
        port.to_string(),
    ]
}

/// Waits until something listens on `port`.
pub fn wait_listening(port: u16) {
    let started = Instant::now();
    while port_is_free(port) {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "nothing listened on {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// True when no live process runs `command` (matched on its script path and port).
pub fn none_running(command: &[String]) -> bool {
    let script = &command[1];
    let port = command.last().unwrap();
    processes_matching(script).iter().all(|pid| {
        !leakcheck::procfs::command_line(*pid)
            .split(' ')
            .any(|arg| arg == port.as_str())
    })
}

/// Builds leakcheck's arguments: `args`, then `--`, then `command`.
pub fn with_command<'a>(args: &[&'a str], command: &'a [String]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.push("--");
    all.extend(command.iter().map(String::as_str));
    all
}

/// Starts the demo server by itself (for attach tests), with `node_flags`
/// before the script, and waits until it listens; killed when dropped.
pub fn start_demo(node_flags: &[&str]) -> (Guard, u16) {
    let port = free_port();
    let mut command = Command::new(node());
    command
        .args(node_flags)
        .arg(repo_path("examples/demo-server.mjs"))
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let guard = Guard::spawn(&mut command);
    wait_listening(port);
    (guard, port)
}
