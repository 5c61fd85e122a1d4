//! The diagnosis inside `leakcheck run`: on retention, two heap snapshots
//! around one more cycle name the holder, its script and the allocating
//! function, for the demo's routes and for Map caches, emitter listeners,
//! timers and a global property in CommonJS.

use leakcheck::model::{Diagnosis, Holder, HolderKind};

use crate::util::*;

/// Runs `routes` on `target` (a script in tests/targets or the demo) and
/// returns the result.
fn run_target(command: &[String], port: u16, routes: &[&str], extra: &[&str]) -> RunResult {
    let mut args = RunArgs::new(port).routes(routes);
    if !extra.contains(&"-a") {
        args = args.requests("1500");
    }
    let finished = args.args(extra).run(command);
    assert!(port_is_free(port));
    assert!(
        finished.code == 1 || finished.code == 0,
        "{}",
        finished.stderr
    );
    finished.result()
}

fn diagnosis(result: &RunResult, route: usize) -> &Diagnosis {
    let route = &result.routes[route];
    route.diagnosis.as_ref().unwrap_or_else(|| {
        panic!(
            "route {} has no diagnosis: {:#?}",
            route.route, route.verdict
        )
    })
}

/// The holder of `route` named `name`: the diagnosis lists one per grown
/// class, and which class grew most (records, strings, or the JIT's code
/// when the machine is busy) may vary, so the test looks for the name.
fn holder<'a>(result: &'a RunResult, route: usize, name: &str) -> &'a Holder {
    let holders = &diagnosis(result, route).holders;
    holders
        .iter()
        .find(|h| h.name == name)
        .unwrap_or_else(|| panic!("no holder named {name}: {holders:#?}"))
}

#[test]
fn demo_leak_names_the_array_its_script_and_the_allocating_function() {
    let port = free_port();
    let result = run_target(&demo_command(port), port, &["/leak", "/buffers"], &[]);
    let leak = holder(&result, 0, "keptRequests");
    assert_eq!(leak.kind, HolderKind::ClosureVariable);
    assert!(
        leak.script
            .as_deref()
            .unwrap()
            .ends_with("examples/demo-server.mjs")
    );
    let push = line_of("examples/demo-server.mjs", "keptRequests.push(");
    let sites = &diagnosis(&result, 0).allocation_sites;
    let handler = sites
        .iter()
        .find(|s| s.function == "/leak")
        .expect("the /leak handler allocated what survived");
    // V8's sampling profiler locates the allocating function, which starts on the line before the push.
    assert!(
        push - 1 <= handler.line && handler.line <= push,
        "handler at line {}, push at {push}",
        handler.line
    );
    // The line inside it that stores into the holder, read from the source.
    assert_eq!(handler.holder_line, Some(push), "{handler:#?}");
    assert!(
        handler
            .holder_line_text
            .as_deref()
            .unwrap()
            .starts_with("keptRequests.push(")
    );
    assert!(handler.url.ends_with("demo-server.mjs"));
    // Once the holder is named, what to do is about it, not the method.
    let action = &verdict_of(&result.routes[0]).action;
    assert!(action.contains("`keptRequests`"), "{action}");
    assert!(!action.contains("Take two heap snapshots"), "{action}");
    holder(&result, 1, "keptBuffers");
    let d = diagnosis(&result, 0);
    assert!(d.snapshot_bytes[1] > 1_000_000);
    assert!(d.target_rss_after > 0);
}

#[test]
fn map_cache_listeners_and_timers_are_named() {
    let port = free_port();
    let command = target_command("holders-server.mjs", port);
    let result = run_target(
        &command,
        port,
        &["/map-cache", "/listeners", "/timers"],
        &["-a", "4000"],
    );
    let cache = holder(&result, 0, "responseCache");
    assert_eq!(cache.holder_class, "Map");
    let listeners = holder(&result, 1, "configBus._events.reload");
    assert_eq!(
        listeners.kind,
        HolderKind::EventListenerList,
        "{listeners:#?}"
    );
    let timers = &diagnosis(&result, 2).holders;
    assert!(
        timers.iter().any(|h| h.kind == HolderKind::TimerList),
        "{timers:#?}"
    );
}

#[test]
fn a_global_property_in_commonjs_is_named() {
    let port = free_port();
    let command = target_command("holders-server.cjs", port);
    let result = run_target(&command, port, &["/global"], &["-a", "6000"]);
    let global = holder(&result, 0, "globalThis.auditLog");
    assert_eq!(global.kind, HolderKind::GlobalProperty);
}

#[test]
fn no_diagnose_skips_it_and_snapshots_dir_keeps_private_files() {
    use std::os::unix::fs::PermissionsExt;
    let port = free_port();
    let result = run_target(&demo_command(port), port, &["/leak"], &["--no-diagnose"]);
    assert!(result.routes[0].diagnosis.is_none());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().display().to_string();
    let port = free_port();
    let result = run_target(
        &demo_command(port),
        port,
        &["/leak"],
        &["--snapshots", &path],
    );
    let files = &diagnosis(&result, 0).snapshot_files;
    assert_eq!(files.len(), 2);
    for file in files {
        let mode = std::fs::metadata(file).unwrap().permissions().mode() & 0o777;
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
    let result = run_target(&command, port, &["/"], &["-a", "4000"]);
    let d = diagnosis(&result, 0);
    assert!(d.sites_without_inlining);
    // The largest surviving site in the script is the handler that pushes,
    // not `dispatch`, which TurboFan had inlined it into.
    let top = d
        .allocation_sites
        .iter()
        .find(|s| s.url.ends_with("inlined-server.mjs"))
        .unwrap_or_else(|| panic!("no site in the script: {:#?}", d.allocation_sites));
    assert_eq!(top.function, "keepRecord", "{:#?}", d.allocation_sites);
    assert_eq!(
        top.line,
        line_of("tests/targets/inlined-server.mjs", "function keepRecord(")
    );
}

#[test]
fn a_failing_sampling_profile_still_names_the_holder_from_the_snapshots() {
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/leak"])
        .requests("1500")
        .env("LEAKCHECK_TEST_FAIL", "sampling-profile")
        .run(&demo_command(port));
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    assert!(port_is_free(port));
    let result = finished.result();
    let d = diagnosis(&result, 0);
    // Both snapshots were taken and the holder named without the profile.
    assert!(d.snapshot_bytes[1] > 0);
    holder(&result, 0, "keptRequests");
    assert!(d.allocation_sites.is_empty());
    assert!(
        d.missing.iter().any(|m| m.contains("allocation sites")),
        "{:#?}",
        d.missing
    );
    let verdict = verdict_of(&result.routes[0]);
    assert!(
        verdict
            .findings
            .iter()
            .any(|f| f.kind == leakcheck::model::FindingKind::DiagnosisFailed
                && f.message.contains("allocation sites")),
        "{verdict:#?}"
    );
    assert!(
        verdict.action.contains("`keptRequests`"),
        "{}",
        verdict.action
    );
}
