//! Helpers shared by the integration tests: running the real binary with a
//! deadline, one builder for `leakcheck run`'s arguments, the typed result,
//! free ports, and guards that stop every process a test starts by its PID,
//! even when the test fails.

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

pub use leakcheck::model::{
    FindingKind, OutcomeStatus, ProbeKind, RouteResult, RunResult, Stopped, Verdict, VerdictKind,
};

/// No leakcheck run in a test may take longer than this.
pub const RUN_DEADLINE: Duration = Duration::from_secs(120);

/// Whether the tests run in CI (`CI=true`), where every tool the tests
/// need is installed by `.ci/run` and a missing one fails the test.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// `npm install` of local tarballs, with nothing fetched and nothing but
/// errors printed (the npm and arm64 tests install packed tarballs).
pub const NPM_OFFLINE_INSTALL: [&str; 5] = [
    "install",
    "--offline",
    "--no-audit",
    "--no-fund",
    "--loglevel=error",
];

/// Whether `program` is a file in one of the PATH's folders.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

pub fn leakcheck() -> Command {
    Command::new(env!("CARGO_BIN_EXE_leakcheck"))
}

pub fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// Ports handed to test targets: below Linux's ephemeral range (32768–
/// 60999). A port the kernel picked for `bind(0)` lies in that range, so
/// between this check and the target's own bind an outgoing connection of
/// another test running at the same time (a load generator opens hundreds)
/// could take it as its local port, and the target would not start.
const TARGET_PORTS: std::ops::Range<u16> = 20_000..32_000;

/// A port that was free a moment ago, picked at random in `TARGET_PORTS`
/// (random per process, so tests running side by side rarely try the same).
pub fn free_port() -> u16 {
    use std::hash::{BuildHasher, RandomState};
    let random = RandomState::new();
    let span = u64::from(TARGET_PORTS.end - TARGET_PORTS.start);
    for attempt in 0..1000u32 {
        let port =
            TARGET_PORTS.start + (random.hash_one((std::process::id(), attempt)) % span) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port in {TARGET_PORTS:?} after 1000 tries");
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
        self.exit_within(limit).unwrap_or_else(|| {
            let _ = self.0.kill();
            panic!("process {} did not finish within {limit:?}", self.0.id());
        })
    }

    /// The exit status, if the process exits within `limit`.
    pub fn exit_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return Some(status);
            }
            if started.elapsed() > limit {
                return None;
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

/// Reads the child's stderr (piped) until a line contains `needle`: the
/// event a test waits for, instead of a sleep. Panics if it ends first.
pub fn wait_for_stderr(guard: &mut Guard, needle: &str) {
    use std::io::BufRead;
    let stderr = guard.0.stderr.as_mut().expect("stderr is piped");
    let mut reader = std::io::BufReader::new(stderr);
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let n = reader.read_line(&mut line).unwrap();
        assert!(n > 0, "leakcheck ended before printing {needle:?}:\n{seen}");
        seen.push_str(&line);
        if line.contains(needle) {
            return;
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

    /// `leakcheck load --json -` read back into its type.
    pub fn load_json(&self) -> leakcheck::report::load_view::LoadJson {
        self.typed("a load report")
    }

    /// `leakcheck diff --json -` read back into its type.
    pub fn diff_report(&self) -> leakcheck::snapshot::DiffReport {
        self.typed("a diff report")
    }

    /// `leakcheck inspect --json -` read back into its type.
    pub fn inspect_report(&self) -> leakcheck::snapshot::InspectReport {
        self.typed("an inspect report")
    }

    fn typed<T: serde::de::DeserializeOwned>(&self, what: &str) -> T {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not {what} ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// The run's result as leakcheck's own model (stdout must hold `--json -`).
    pub fn result(&self) -> RunResult {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not a leakcheck result ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// A leakcheck command line built one flag at a time: `leakcheck run`
/// against `http://127.0.0.1:PORT` (`--url`, then `-- COMMAND`), and the
/// same for `soak`, `page`, `load` and `diff` (whose first arguments are
/// positional); `--json -` and `-q` unless told otherwise.
pub struct RunArgs {
    subcommand: &'static str,
    /// `--url URL` for run and soak; the positional arguments of the others.
    url: String,
    positional: Vec<String>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    json: bool,
    quiet: bool,
}

impl RunArgs {
    pub fn new(port: u16) -> RunArgs {
        RunArgs::with_url(&format!("http://127.0.0.1:{port}"))
    }

    pub fn with_url(url: &str) -> RunArgs {
        RunArgs {
            subcommand: "run",
            url: url.to_string(),
            positional: Vec::new(),
            args: Vec::new(),
            env: Vec::new(),
            json: true,
            quiet: true,
        }
    }

    /// `leakcheck page URL`.
    pub fn page(url: &str) -> RunArgs {
        RunArgs::positional("page", &[url])
    }

    /// `leakcheck load URL`.
    pub fn load(url: &str) -> RunArgs {
        RunArgs::positional("load", &[url])
    }

    /// `leakcheck diff BEFORE AFTER` (it has no `-q`).
    pub fn diff(before: &Path, after: &Path) -> RunArgs {
        let mut args =
            RunArgs::positional("diff", &[before.to_str().unwrap(), after.to_str().unwrap()]);
        args.quiet = false;
        args
    }

    fn positional(subcommand: &'static str, positional: &[&str]) -> RunArgs {
        RunArgs {
            subcommand,
            url: String::new(),
            positional: positional.iter().map(|a| a.to_string()).collect(),
            args: Vec::new(),
            env: Vec::new(),
            json: true,
            quiet: true,
        }
    }

    /// `leakcheck soak` with the same flags, instead of `run`.
    pub fn soak(mut self) -> RunArgs {
        self.subcommand = "soak";
        self
    }

    /// `leakcheck routes --url URL`: the routes a run would check.
    pub fn list_routes(mut self) -> RunArgs {
        self.subcommand = "routes";
        self
    }

    pub fn routes(mut self, routes: &[&str]) -> RunArgs {
        for route in routes {
            self.args.extend(["--route".to_string(), route.to_string()]);
        }
        self
    }

    pub fn cycles(self, cycles: u32) -> RunArgs {
        self.args(&["--cycles", &cycles.to_string()])
    }

    /// `-a`: requests per cycle.
    pub fn requests(self, requests: &str) -> RunArgs {
        self.args(&["-a", requests])
    }

    pub fn args(mut self, args: &[&str]) -> RunArgs {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    pub fn env(mut self, name: &str, value: &str) -> RunArgs {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    /// The target's environment: `NAME=value` pairs.
    pub fn envs(self, env: &[(&str, &str)]) -> RunArgs {
        env.iter()
            .fold(self, |run, (name, value)| run.env(name, value))
    }

    /// Leaves stdout to the terminal table (no `--json -`).
    pub fn table(mut self) -> RunArgs {
        self.json = false;
        self
    }

    /// Keeps the progress lines on stderr (no `-q`), for tests that wait
    /// for a step.
    pub fn progress(mut self) -> RunArgs {
        self.quiet = false;
        self
    }

    /// The command line, ending in `-- target...` (nothing after `--`
    /// when `target` is empty: an attached run).
    pub fn command(self, target: &[String]) -> Command {
        let mut command = leakcheck();
        command.arg(self.subcommand);
        if self.positional.is_empty() {
            command.args(["--url", &self.url]);
        }
        command.args(&self.positional);
        if self.quiet {
            command.arg("-q");
        }
        if self.json {
            command.args(["--json", "-"]);
        }
        command.args(&self.args);
        if !target.is_empty() {
            command.arg("--").args(target);
        }
        command.envs(self.env);
        command
    }

    /// Runs to the end (bounded by `RUN_DEADLINE`).
    pub fn run(self, target: &[String]) -> Finished {
        run_to_end(self.command(target))
    }
}

/// Looking a route up in a result by its path.
pub trait RouteLookup {
    fn route(&self, name: &str) -> &RouteResult;
}

impl RouteLookup for RunResult {
    fn route(&self, name: &str) -> &RouteResult {
        self.routes
            .iter()
            .find(|r| r.route == name)
            .unwrap_or_else(|| panic!("no route {name} in {:#?}", self.routes))
    }
}

/// A route's verdict, which every finished route has.
pub fn verdict_of(route: &RouteResult) -> &Verdict {
    route
        .verdict
        .as_ref()
        .unwrap_or_else(|| panic!("route {} has no verdict: {route:#?}", route.route))
}

pub fn finding_kinds(verdict: &Verdict) -> Vec<FindingKind> {
    verdict.findings.iter().map(|f| f.kind).collect()
}

/// Retained bytes per request of the route's heapUsed.
pub fn heap_per_request(route: &RouteResult) -> f64 {
    route
        .retained_bytes_per_request
        .expect("a finished route has its slopes")
        .heap_used
}

/// Runs leakcheck with `args` to the end (bounded by `RUN_DEADLINE`).
pub fn run_leakcheck(args: &[&str]) -> Finished {
    let mut command = leakcheck();
    command.args(args);
    run_to_end(command)
}

/// Runs `command` to the end (bounded by `RUN_DEADLINE`), capturing its output.
pub fn run_to_end(command: Command) -> Finished {
    run_within(command, RUN_DEADLINE)
}

/// Runs `command` to the end within `deadline`: for the few runs whose
/// diagnosis starts the target again (the native recorder, the allocator
/// A/B) on a large framework process.
pub fn run_within(mut command: Command, deadline: Duration) -> Finished {
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
    let status = wait_or_interrupt(&mut guard, deadline);
    let finished = Finished {
        code: status.map_or(-1, |s| s.code().unwrap_or(-1)),
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    };
    if status.is_none() {
        panic!(
            "process {} did not finish within {deadline:?}; interrupted, it printed\n\
             stderr:\n{}\nstdout:\n{}",
            guard.pid(),
            finished.stderr,
            finished.stdout
        );
    }
    finished
}

/// Waits for exit; past `limit`, interrupts the run as Ctrl-C would (so it
/// stops its target and prints what it measured and where it was), then
/// kills it if it does not stop within `GRACE`. None when it was stopped.
fn wait_or_interrupt(guard: &mut Guard, limit: Duration) -> Option<ExitStatus> {
    const GRACE: Duration = Duration::from_secs(15);
    if let Some(status) = guard.exit_within(limit) {
        return Some(status);
    }
    // SAFETY: kill(2) on the PID of a child this guard still owns.
    unsafe { libc::kill(guard.pid() as i32, libc::SIGINT) };
    if guard.exit_within(GRACE).is_none() {
        let _ = guard.0.kill();
        let _ = guard.0.wait();
    }
    None
}

/// PIDs of live processes whose command line contains `marker` (zombies
/// have an empty command line and do not match).
/// leakcheck's own watchdog (a fork of leakcheck, so its command line is
/// leakcheck's, target arguments included) is not a target process; the
/// orphan tests look for it by this name.
pub fn processes_matching(marker: &str) -> Vec<u32> {
    use leakcheck::platform::procfs::{all_pids, command_line};
    all_pids()
        .into_iter()
        .filter(|pid| *pid != std::process::id() && command_line(*pid).contains(marker))
        .filter(|pid| !is_watchdog(*pid))
        .collect()
}

/// Whether `pid` is leakcheck's watchdog of a target's process group.
pub fn is_watchdog(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "lc-watchdog")
}

/// Writes a target script into a fresh directory and returns its path; the
/// directory lives as long as the returned guard.
pub fn script(name: &str, source: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, source).unwrap();
    (dir, path)
}

/// The Node binary the tests use: `LEAKCHECK_TEST_NODE` (CI sets it to each
/// Node line in turn: 24, 22 and 26) or `node` from the PATH.
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
        !leakcheck::platform::procfs::command_line(*pid)
            .split(' ')
            .any(|arg| arg == port.as_str())
    })
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

/// Asserts that a JSON result matches schema.json.
pub fn validate(json_text: &str) {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo_path("schema.json")).unwrap()).unwrap();
    let instance: serde_json::Value = serde_json::from_str(json_text).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema.json is a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(&instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the result does not match schema.json:\n{}",
        errors.join("\n")
    );
}

#[test]
fn free_ports_lie_below_the_ephemeral_range_and_can_be_bound() {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .expect("Linux's ephemeral port range");
    let ephemeral_start: u16 = range.split_whitespace().next().unwrap().parse().unwrap();
    let ports: Vec<u16> = (0..20).map(|_| free_port()).collect();
    for port in &ports {
        assert!(*port < ephemeral_start, "{port} is in the ephemeral range");
        TcpListener::bind(("127.0.0.1", *port)).expect("a free port binds");
    }
    let distinct: std::collections::HashSet<_> = ports.iter().collect();
    assert!(distinct.len() > 15, "ports barely vary: {ports:?}");
}

/// The 1-based line of the repository file `path` where `needle` first appears.
pub fn line_of(path: &str, needle: &str) -> u32 {
    let text = std::fs::read_to_string(repo_path(path)).unwrap();
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i as u32 + 1)
        .unwrap_or_else(|| panic!("{needle} not in {path}"))
}

/// `tests/targets/<folder>` copied into the build directory's scratch
/// space with its package.json's dependencies installed from npm: once per
/// build directory, again when a copied file changes. Tests of one file
/// run as processes at once: one installs, the others wait on a lock.
pub fn npm_project(folder: &str, files: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(folder.replace('/', "-"));
    std::fs::create_dir_all(&dir).unwrap();
    let lock = std::fs::File::create(dir.with_extension("lock")).unwrap();
    lock.lock().unwrap();
    let mut changed = false;
    for source in std::iter::once(&"package.json").chain(files) {
        let from = std::fs::read(repo_path(&format!("tests/targets/{folder}/{source}"))).unwrap();
        let to = dir.join(source);
        if std::fs::read(&to).ok().as_deref() != Some(&from[..]) {
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::write(&to, from).unwrap();
            changed |= *source == "package.json";
        }
    }
    if changed || !dir.join("node_modules/.package-lock.json").exists() {
        let status = Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .status()
            .expect("npm runs");
        assert!(
            status.success(),
            "npm install in tests/targets/{folder} failed"
        );
    }
    dir
}
