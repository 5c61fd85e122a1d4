//! The diagnosis inside `leakcheck run`: on retention, two heap snapshots
//! around one more cycle name the holder, its script and the allocating
//! function, for the demo's routes and for Map caches, emitter listeners,
//! timers and a global property in CommonJS.

mod common;

use common::*;

/// Runs `routes` on `target` (a script in tests/targets or the demo) and
/// returns the JSON.
fn run_target(command: &[String], port: u16, routes: &[&str], extra: &[&str]) -> serde_json::Value {
    let url = format!("http://127.0.0.1:{port}");
    let mut args = vec!["run", "--url", &url, "--json", "-", "-q"];
    if !extra.contains(&"-a") {
        args.extend(["-a", "1500"]);
    }
    for route in routes {
        args.extend(["--route", route]);
    }
    args.extend_from_slice(extra);
    let finished = run_leakcheck(&with_command(&args, command));
    assert!(port_is_free(port));
    assert!(
        finished.code == 1 || finished.code == 0,
        "{}",
        finished.stderr
    );
    finished.json()
}

/// The holder of `route` named `name`: the diagnosis lists one per grown
/// class, and which class grew most (records, strings, or the JIT's code
/// when the machine is busy) may vary, so the test looks for the name.
fn holder<'a>(json: &'a serde_json::Value, route: usize, name: &str) -> &'a serde_json::Value {
    let diagnosis = &json["routes"][route]["diagnosis"];
    assert!(
        diagnosis.is_object(),
        "route {route} has a diagnosis: {:#}",
        json["routes"][route]["verdict"]
    );
    let holders = diagnosis["holders"].as_array().unwrap();
    holders
        .iter()
        .find(|h| h["name"] == name)
        .unwrap_or_else(|| panic!("no holder named {name}: {holders:#?}"))
}

fn line_of(path: &str, needle: &str) -> u64 {
    let text = std::fs::read_to_string(repo_path(path)).unwrap();
    text.lines().position(|l| l.contains(needle)).unwrap() as u64 + 1
}

#[test]
fn demo_leak_names_the_array_its_script_and_the_allocating_function() {
    let port = free_port();
    let json = run_target(&demo_command(port), port, &["/leak", "/buffers"], &[]);
    let leak = holder(&json, 0, "keptRequests");
    assert_eq!(leak["kind"], "closure or module variable");
    assert!(
        leak["script"]
            .as_str()
            .unwrap()
            .ends_with("examples/demo-server.mjs")
    );
    let push = line_of("examples/demo-server.mjs", "keptRequests.push(");
    let sites = json["routes"][0]["diagnosis"]["allocation_sites"]
        .as_array()
        .unwrap();
    let handler = sites
        .iter()
        .find(|s| s["function"] == "/leak")
        .expect("the /leak handler allocated what survived");
    // V8's sampling profiler locates the allocating function, which starts on the line before the push.
    let line = handler["line"].as_u64().unwrap();
    assert!(
        push - 1 <= line && line <= push,
        "handler at line {line}, push at {push}"
    );
    // The line inside it that stores into the holder, read from the source.
    assert_eq!(handler["holder_line"].as_u64(), Some(push), "{handler:#}");
    assert!(
        handler["holder_line_text"]
            .as_str()
            .unwrap()
            .starts_with("keptRequests.push(")
    );
    assert!(
        handler["url"]
            .as_str()
            .unwrap()
            .ends_with("demo-server.mjs")
    );
    holder(&json, 1, "keptBuffers");
    let diagnosis = &json["routes"][0]["diagnosis"];
    assert!(diagnosis["snapshot_bytes"][1].as_u64().unwrap() > 1_000_000);
    assert!(diagnosis["target_rss_after"].as_u64().unwrap() > 0);
}

#[test]
fn map_cache_listeners_and_timers_are_named() {
    let port = free_port();
    let command = target_command("holders-server.mjs", port);
    let json = run_target(
        &command,
        port,
        &["/map-cache", "/listeners", "/timers"],
        &["-a", "4000"],
    );
    let cache = holder(&json, 0, "responseCache");
    assert_eq!(cache["holder_class"], "Map");
    let listeners = holder(&json, 1, "configBus._events.reload");
    assert_eq!(listeners["kind"], "event listener list", "{listeners:#}");
    let timers = json["routes"][2]["diagnosis"]["holders"]
        .as_array()
        .unwrap();
    assert!(
        timers.iter().any(|h| h["kind"] == "timer list"),
        "{timers:#?}"
    );
}

#[test]
fn a_global_property_in_commonjs_is_named() {
    let port = free_port();
    let command = target_command("holders-server.cjs", port);
    let json = run_target(&command, port, &["/global"], &["-a", "6000"]);
    let global = holder(&json, 0, "globalThis.auditLog");
    assert_eq!(global["kind"], "global property");
}

#[test]
fn no_diagnose_skips_it_and_snapshots_dir_keeps_private_files() {
    use std::os::unix::fs::PermissionsExt;
    let port = free_port();
    let json = run_target(&demo_command(port), port, &["/leak"], &["--no-diagnose"]);
    assert!(json["routes"][0].get("diagnosis").is_none());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().display().to_string();
    let port = free_port();
    let json = run_target(
        &demo_command(port),
        port,
        &["/leak"],
        &["--snapshots", &path],
    );
    let files = json["routes"][0]["diagnosis"]["snapshot_files"]
        .as_array()
        .unwrap_or_else(|| panic!("no snapshot files: {:#}", json["routes"][0]["verdict"]));
    assert_eq!(files.len(), 2);
    for file in files {
        let mode = std::fs::metadata(file.as_str().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
    }
}

#[test]
fn an_inlined_handler_is_charged_for_what_it_keeps() {
    let port = free_port();
    let script = repo_path("tests/targets/inlined-server.mjs");
    let command = vec![
        node(),
        "--allow-natives-syntax".to_string(),
        script.display().to_string(),
        port.to_string(),
    ];
    let json = run_target(&command, port, &["/"], &["-a", "4000"]);
    let diagnosis = &json["routes"][0]["diagnosis"];
    assert!(
        diagnosis.is_object(),
        "no diagnosis: {:#}",
        json["routes"][0]["verdict"]
    );
    assert_eq!(diagnosis["sites_without_inlining"], true);
    let sites = diagnosis["allocation_sites"].as_array().unwrap();
    let in_script = |s: &&serde_json::Value| {
        s["url"]
            .as_str()
            .is_some_and(|u| u.ends_with("inlined-server.mjs"))
    };
    // The largest surviving site in the script is the handler that pushes,
    // not `dispatch`, which TurboFan had inlined it into.
    let top = sites
        .iter()
        .find(in_script)
        .unwrap_or_else(|| panic!("no site in the script: {sites:#?}"));
    assert_eq!(top["function"], "keepRecord", "{sites:#?}");
    assert_eq!(
        top["line"].as_u64().unwrap(),
        line_of("tests/targets/inlined-server.mjs", "function keepRecord(")
    );
}
