//! Attribution a team can act on: variables whose value is replaced each
//! request, TypeScript through its source maps, a leak held inside a
//! dependency, a worker thread's heap and a cluster's worker processes.

use std::path::Path;
use std::process::Command;

use leakcheck::model::{Diagnosis, FindingKind, IsolateKind, Owner, Series, Trend, VerdictKind};

use crate::util::*;

fn diagnosis(route: &RouteResult) -> &Diagnosis {
    route
        .diagnosis
        .as_ref()
        .unwrap_or_else(|| panic!("{} has no diagnosis: {:#?}", route.route, route.verdict))
}

fn holder_names(route: &RouteResult) -> Vec<&str> {
    diagnosis(route)
        .holders
        .iter()
        .map(|h| h.name.as_str())
        .collect()
}

fn line_of(text: &str, needle: &str) -> u32 {
    text.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1
}

#[test]
fn replaced_variables_are_named_by_the_variable_not_the_listener() {
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/log", "/history"])
        .requests("6000")
        .run(&target_command("attribution/replaced-server.mjs", port));
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let result = finished.result();
    for (route, variable) in result.routes.iter().zip(["auditLog", "history"]) {
        assert_eq!(
            verdict_of(route).kind,
            VerdictKind::Retention,
            "{}",
            route.route
        );
        let names = holder_names(route);
        assert_eq!(names.first(), Some(&variable), "{}: {names:?}", route.route);
        let top = &diagnosis(route).holders[0];
        assert_eq!(top.slot.as_deref(), Some(variable));
        assert!(
            top.script
                .as_deref()
                .unwrap_or("")
                .ends_with("replaced-server.mjs"),
            "{top:#?}"
        );
        // Nothing minor is printed beside it: no request listener, no code.
        assert!(
            names.iter().all(|n| !n.contains("_events")),
            "{}: {names:?}",
            route.route
        );
    }
}

/// `tsc` from npm, installed once per build directory.
fn tsc() -> std::path::PathBuf {
    let tools = Path::new(env!("CARGO_TARGET_TMPDIR")).join("typescript");
    let bin = tools.join("node_modules/.bin/tsc");
    if !bin.exists() {
        let status = Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(&tools)
            .arg("typescript@5")
            .status()
            .expect("npm runs");
        assert!(status.success(), "npm install typescript failed");
    }
    bin
}

#[test]
fn typescript_sites_and_holder_are_reported_in_the_ts_file() {
    let dir = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(repo_path("tests/targets/attribution/audit.ts")).unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/audit.ts"), &source).unwrap();
    let compiled = Command::new(tsc())
        .current_dir(dir.path())
        .args(["--sourceMap", "--outDir", "dist", "--target", "es2020"])
        .args(["--module", "commonjs", "src/audit.ts"])
        .output()
        .unwrap();
    assert!(compiled.status.success(), "{compiled:?}");
    let port = free_port();
    let script = dir.path().join("dist/audit.js").display().to_string();
    let finished = RunArgs::new(port)
        .routes(&["/audit"])
        .requests("6000")
        .run(&[node(), script.clone(), port.to_string()]);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    validate(&finished.stdout);
    let result = finished.result();
    let d = diagnosis(&result.routes[0]);
    let holder = d.holders.iter().find(|h| h.name == "auditTrail").unwrap();
    assert!(
        holder
            .original_script
            .as_deref()
            .unwrap_or("")
            .ends_with("src/audit.ts"),
        "{holder:#?}"
    );
    let site = d
        .allocation_sites
        .iter()
        .find(|s| s.function == "record")
        .unwrap_or_else(|| panic!("{:#?}", d.allocation_sites));
    let original = site.original.as_ref().expect("mapped through audit.js.map");
    assert!(original.file.ends_with("src/audit.ts"), "{original:?}");
    assert_eq!(original.line, line_of(&source, "function record"));
    let stored = site
        .holder_line_original
        .as_ref()
        .expect("the storing line mapped");
    assert_eq!(stored.line, line_of(&source, "auditTrail.push"));
    assert_eq!(stored.text.as_deref(), Some("auditTrail.push(entry);"));
    // The compiled place stays beside it.
    assert!(site.url.ends_with("dist/audit.js"), "{}", site.url);
    assert_eq!(site.owner, Some(Owner::App));
}

#[test]
fn a_leak_held_in_a_dependency_names_the_package_and_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let package = dir.path().join("node_modules/tiny-registry");
    std::fs::create_dir_all(&package).unwrap();
    std::fs::write(
        package.join("package.json"),
        r#"{ "name": "tiny-registry", "version": "1.4.2", "main": "index.js" }"#,
    )
    .unwrap();
    std::fs::write(
        package.join("index.js"),
        "const entries = [];\n\
         exports.register = (key, value) => { entries.push({ key, value, at: Date.now() }); };\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("app.js"),
        "const http = require('node:http');\n\
         const registry = require('tiny-registry');\n\
         http.createServer((req, res) => {\n\
         \x20 registry.register(req.url, { url: req.url, note: 'seen '.repeat(8) });\n\
         \x20 res.end('ok');\n\
         }).listen(Number(process.argv[2]), '127.0.0.1');\n",
    )
    .unwrap();
    let port = free_port();
    let app = dir.path().join("app.js").display().to_string();
    let finished =
        RunArgs::new(port)
            .routes(&["/x"])
            .requests("6000")
            .run(&[node(), app, port.to_string()]);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    validate(&finished.stdout);
    let result = finished.result();
    let route = &result.routes[0];
    let d = diagnosis(route);
    let holder = &d.holders[0];
    assert_eq!(holder.name, "entries");
    assert_eq!(
        holder.owner,
        Some(Owner::Dependency {
            name: "tiny-registry".into(),
            version: Some("1.4.2".into())
        })
    );
    // The app's frames lead.
    assert_eq!(
        d.allocation_sites[0].owner,
        Some(Owner::App),
        "{:#?}",
        d.allocation_sites
    );
    assert!(verdict_of(route).action.contains("tiny-registry@1.4.2"));
}

#[test]
fn a_leak_inside_a_worker_thread_is_judged_and_diagnosed_in_the_worker() {
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/work", "/echo"])
        .requests("5000")
        .run(&target_command("attribution/worker-server.mjs", port));
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    validate(&finished.stdout);
    let result = finished.result();
    let (work, echo) = (&result.routes[0], &result.routes[1]);
    let verdict = verdict_of(work);
    assert_eq!(verdict.kind, VerdictKind::Retention, "{verdict:#?}");
    assert!(finding_kinds(verdict).contains(&FindingKind::IsolateRetention));
    let main_heap = verdict
        .fits
        .iter()
        .find(|f| f.metric == Series::HEAP_USED)
        .unwrap();
    assert_ne!(main_heap.trend, Trend::Growing, "the main heap is flat");
    let worker = &work.isolates[0];
    assert_eq!(worker.kind, IsolateKind::Worker);
    assert!(
        worker.script.ends_with("worker-keeper.mjs"),
        "{}",
        worker.script
    );
    assert_eq!(worker.verdict.kind, VerdictKind::Retention);
    let d = diagnosis(work);
    assert_eq!(d.isolate.as_deref(), Some(worker.id.as_str()));
    assert_eq!(d.holders[0].name, "jobs");
    // The worker that keeps nothing is judged too, and clean.
    assert_eq!(echo.isolates.len(), 1);
    assert_ne!(verdict_of(echo).kind, VerdictKind::Retention);
    assert!(!verdict_of(echo).fails_gate);
}

/// Workers leakcheck cannot read served every request: a clean verdict
/// would be a false all-clear, so the route is inconclusive and says why.
#[test]
fn requests_served_by_unread_workers_are_never_an_all_clear() {
    let port = free_port();
    let command = target_command("attribution/uninspected-cluster.cjs", port);
    let finished = RunArgs::new(port)
        .routes(&["/"])
        .cycles(3)
        .requests("2000")
        .run(&command);
    assert!(none_running(&command));
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    validate(&finished.stdout);
    let result = finished.result();
    let verdict = verdict_of(&result.routes[0]);
    assert_eq!(verdict.kind, VerdictKind::Inconclusive, "{verdict:#?}");
    assert!(
        verdict.summary.contains("its memory was not read"),
        "{}",
        verdict.summary
    );
    assert!(finding_kinds(verdict).contains(&FindingKind::ServedMismatch));
}

/// Node gives a cluster's workers the primary's inspector port plus one,
/// plus two: with those ports taken, each worker would run unread. The
/// flags leakcheck starts a target with must give every worker its own.
#[test]
fn cluster_workers_get_free_inspector_ports_when_the_next_ones_are_taken() {
    use std::io::BufRead;
    use std::sync::mpsc;
    let inspector = free_port();
    let held: Vec<_> = (1..=2)
        .filter_map(|n| std::net::TcpListener::bind(("127.0.0.1", inspector + n)).ok())
        .collect();
    let port = free_port();
    let script = repo_path("tests/targets/attribution/cluster-server.cjs");
    let mut primary = Guard::spawn(
        Command::new(node())
            .arg(format!("--inspect=127.0.0.1:{inspector}"))
            .args(leakcheck::process::CLUSTER_PORTS_PRELOAD)
            .arg(&script)
            .arg(port.to_string())
            .stderr(std::process::Stdio::piped()),
    );
    let stderr = primary.0.stderr.take().unwrap();
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut announced = Vec::new();
    while announced.len() < 3 {
        match received.recv_timeout(std::time::Duration::from_secs(15)) {
            Ok(line) if line.starts_with("Debugger listening on ") => announced.push(line),
            Ok(line) => assert!(!line.contains("failed"), "{line}"),
            Err(e) => panic!("{e}: announced so far {announced:?}"),
        }
    }
    let workers = processes_matching(&format!("{} {port}", script.display()));
    drop(primary);
    for pid in workers {
        // SAFETY: kill(2) on a worker this test's primary started.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
    drop(held);
    assert!(
        announced
            .iter()
            .filter(|l| !l.contains(&format!(":{inspector}/")))
            .count()
            == 2,
        "{announced:?}"
    );
}

#[test]
fn a_cluster_s_growth_is_attributed_to_its_worker_processes() {
    let port = free_port();
    let command = target_command("attribution/cluster-server.cjs", port);
    let finished = RunArgs::new(port)
        .routes(&["/leak"])
        .requests("6000")
        .run(&command);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    assert!(none_running(&command));
    validate(&finished.stdout);
    let result = finished.result();
    let route = &result.routes[0];
    let pids: Vec<u32> = route
        .isolates
        .iter()
        .filter(|i| i.kind == IsolateKind::Process && i.pid != 0)
        .map(|i| i.pid)
        .collect();
    assert_eq!(pids.len(), 2, "{:#?}", route.isolates);
    assert!(pids.iter().all(|pid| Some(*pid) != route.pid));
    let verdict = verdict_of(route);
    assert_eq!(verdict.kind, VerdictKind::Retention, "{verdict:#?}");
    for pid in &pids {
        assert!(
            verdict.summary.contains(&format!("pid {pid}")),
            "{}",
            verdict.summary
        );
    }
    // The requests the workers served are counted: no mismatch is claimed.
    assert!(!finding_kinds(verdict).contains(&FindingKind::ServedMismatch));
    let diagnosed = diagnosis(route).isolate.clone().unwrap_or_default();
    assert!(diagnosed.starts_with("pid "), "{diagnosed}");
    let holder = &diagnosis(route).holders[0];
    assert_eq!(holder.name, "seen", "{holder:#?}");
    assert_eq!(holder.kind, leakcheck::model::HolderKind::ClosureVariable);
}
