//! The npm platform binary runs on any x86_64 Linux: `scripts/npm-pack.sh`
//! packs the static build (`scripts/build-static.sh`), the packed binary
//! names no shared library, and from an otherwise empty root directory
//! (`chroot`: no libc, no NSS modules, no /etc/hosts, no /proc) it prints
//! its version, inspects a heap snapshot and sends load to a loopback
//! server by the name `localhost` — what it needs on Alpine's musl, which
//! it would find there no more than here.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::*;

/// The static build: `LEAKCHECK_STATIC_BINARY` (CI builds it once before
/// the tests), or built here (a release build; a no-op when up to date).
fn static_binary() -> PathBuf {
    if let Ok(path) = std::env::var("LEAKCHECK_STATIC_BINARY") {
        return PathBuf::from(path);
    }
    let built = Command::new("bash")
        .arg(repo_path("scripts/build-static.sh"))
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(built.status.success(), "scripts/build-static.sh failed");
    PathBuf::from(String::from_utf8(built.stdout).unwrap().trim())
}

/// Packs `binary` and unpacks the platform package's binary into `into`.
fn packed(binary: &Path, into: &Path) -> PathBuf {
    let packs = into.join("packs");
    let packed = Command::new("bash")
        .arg(repo_path("scripts/npm-pack.sh"))
        .arg(&packs)
        .env("LEAKCHECK_PACK_BINARY", binary)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&packed.stdout).to_string();
    assert!(packed.status.success(), "npm-pack.sh failed: {said}");
    assert!(said.contains("needs: none (static)"), "{said}");
    let tarball = packs.join(format!(
        "leakcheck-linux-x64-{}.tgz",
        env!("CARGO_PKG_VERSION")
    ));
    let unpacked = Command::new("tar")
        .arg("-xzf")
        .arg(&tarball)
        .arg("-C")
        .arg(into)
        .status()
        .unwrap();
    assert!(unpacked.success());
    into.join("package/bin/leakcheck")
}

/// The program headers and dynamic section as `readelf` prints them.
fn readelf(binary: &Path) -> String {
    let out = Command::new("readelf").arg("-ld").arg(binary).output();
    let out = out.expect("readelf (binutils) is installed");
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// Runs `args` of the binary at the root of `root`, chrooted there.
fn in_chroot(root: &Path, args: &[&str]) -> Finished {
    let mut command = match unsafe { libc::geteuid() } {
        0 => Command::new("chroot"),
        _ => {
            let mut c = Command::new("unshare");
            c.args(["--user", "--map-root-user", "chroot"]);
            c
        }
    };
    command
        .arg(root)
        .arg("/leakcheck")
        .args(args)
        .stdin(Stdio::null());
    run_to_end(command)
}

#[test]
fn the_packed_binary_needs_no_library_and_runs_from_an_empty_root() {
    let dir = tempfile::tempdir().unwrap();
    let binary = packed(&static_binary(), dir.path());
    let elf = readelf(&binary);
    assert!(!elf.contains("(NEEDED)"), "no shared library: {elf}");
    assert!(!elf.contains("INTERP"), "no program interpreter: {elf}");

    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::copy(&binary, root.join("leakcheck")).unwrap();
    let (_script_dir, snapshot_script) = script(
        "snap.cjs",
        "globalThis.kept = Array.from({ length: 2000 }, (_, i) => ({ i }));\n\
         require('v8').writeHeapSnapshot(process.argv[2]);\n",
    );
    let made = Command::new(node())
        .arg(&snapshot_script)
        .arg(root.join("s.heapsnapshot"))
        .status()
        .unwrap();
    assert!(made.success());
    let entries: Vec<_> = std::fs::read_dir(&root).unwrap().collect();
    assert_eq!(entries.len(), 2, "only the binary and the snapshot");

    let version = in_chroot(&root, &["--version"]);
    assert_eq!(version.code, 0, "{}", version.stderr);
    assert!(version.stdout.contains(env!("CARGO_PKG_VERSION")));

    let inspect = in_chroot(&root, &["inspect", "/s.heapsnapshot"]);
    assert_eq!(inspect.code, 0, "{}", inspect.stderr);
    assert!(inspect.stdout.contains("(GC roots)"), "{}", inspect.stdout);

    let (server, port) = start_demo(&[]);
    let url = format!("http://localhost:{port}/churn");
    let load = in_chroot(&root, &["load", &url, "-a", "500", "--json", "-"]);
    drop(server);
    assert_eq!(load.code, 0, "{}", load.stderr);
    let report: serde_json::Value = serde_json::from_str(&load.stdout).unwrap();
    assert_eq!(report["2xx"], 500, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    assert!(port_is_free(port));
}
