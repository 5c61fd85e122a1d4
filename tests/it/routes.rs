//! Every route without listing them: the live app's router read through
//! the inspector (Express 4 and 5, Fastify, Koa, Hapi), an OpenAPI
//! document, a Next.js build's manifests, and the config file; a run with
//! no `--route` checks each route found, names the leaking one and its
//! holder, and leaves the rest clean. The frameworks are installed from
//! npm once per build directory (tests/targets/apps/package.json).

use std::path::PathBuf;

use leakcheck::model::VerdictKind;
use serde_json::Value;

use crate::util::*;

/// tests/targets/apps with its packages installed (`npm_project`).
fn apps() -> PathBuf {
    npm_project("apps", &["shop.cjs", "shop.openapi.yaml"])
}

fn shop(port: u16, framework: &str) -> Vec<String> {
    vec![
        node(),
        apps().join("shop.cjs").display().to_string(),
        port.to_string(),
        framework.to_string(),
    ]
}

/// `leakcheck routes --json -`'s answer.
fn listed(args: RunArgs, target: &[String]) -> Value {
    let finished = args.list_routes().run(target);
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    serde_json::from_str(&finished.stdout).unwrap_or_else(|e| panic!("{e}: {}", finished.stdout))
}

/// (method, request path) of every route listed.
fn requests(listing: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = listing["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["method"].as_str().unwrap_or("GET").to_string(),
                r["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The shop's GET routes as every router declares them, filled.
const SHOP_GETS: [&str; 12] = [
    "/",
    "/admin/stats",
    "/catalog",
    "/categories/{n}",
    "/health",
    "/old-catalog",
    "/products/{n}",
    "/products/{n}/reviews",
    "/search",
    "/stores/{n}/hours",
    "/users/{n}/cart",
    "/users/{n}/orders",
];

#[test]
fn every_routers_table_is_read_through_the_inspector() {
    for framework in ["express", "express5", "fastify", "koa", "hapi"] {
        let port = free_port();
        let listing = listed(RunArgs::new(port), &shop(port, framework));
        assert_eq!(listing["source"], "app", "{framework}: {listing:#}");
        let gets: Vec<String> = requests(&listing)
            .into_iter()
            .map(|(method, path)| {
                assert_eq!(method, "GET", "{framework}");
                path
            })
            .collect();
        assert_eq!(gets, SHOP_GETS, "{framework}: {listing:#}");
        // The two that change data are named, not sent.
        let skipped = listing["skipped"].as_array().unwrap();
        assert_eq!(skipped.len(), 2, "{framework}: {skipped:#?}");
        assert!(
            skipped
                .iter()
                .all(|s| s["reason"].as_str().unwrap().contains("--methods")),
            "{skipped:#?}"
        );
        assert!(
            port_is_free(port),
            "{framework}: the target was left running"
        );
    }
}

#[test]
fn a_run_with_no_route_checks_every_route_names_the_leak_and_leaves_the_rest_clean() {
    let port = free_port();
    // Fixed cycles keep ten routes short: the leak keeps 1.5 KB a request.
    let finished = RunArgs::new(port)
        .cycles(3)
        .requests("2000")
        .run(&shop(port, "express"));
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    validate(&finished.stdout);
    let result = finished.result();
    let found = result.settings.discovery.as_ref().expect("found routes");
    assert_eq!(
        (found.source.as_str(), found.origin.as_str()),
        ("app", "express 4")
    );
    assert_eq!(found.declared, 14);
    // 401 without a token, a redirect, and the two that change data.
    let reason = |pattern: &str| {
        found
            .skipped
            .iter()
            .find(|s| s.pattern == pattern)
            .map(|s| s.reason.clone())
            .unwrap_or_else(|| panic!("{pattern} not skipped: {:#?}", found.skipped))
    };
    assert!(reason("/admin/stats").contains("answered 401"));
    assert!(reason("/old-catalog").contains("redirects (302) to /catalog"));
    assert_eq!(result.routes.len(), 10, "{:#?}", result.settings.routes);
    for route in &result.routes {
        let verdict = verdict_of(route);
        if route.route == "/products/{n}/reviews" {
            assert_eq!(verdict.kind, VerdictKind::Retention, "{verdict:#?}");
            let holder = &route.diagnosis.as_ref().expect("a diagnosis").holders[0];
            assert_eq!(holder.name, "reviewCache");
        } else {
            assert!(!verdict.kind.is_leak(), "{}: {verdict:#?}", route.route);
        }
    }
    assert!(port_is_free(port));
}

#[test]
fn an_openapi_document_gives_types_examples_and_bodies_and_the_config_its_values() {
    let apps = apps();
    let document = apps.join("shop.openapi.yaml").display().to_string();
    // No target needed to list a document's routes.
    let listing = listed(
        RunArgs::new(free_port()).args(&["--openapi", &document, "--methods", "GET,POST"]),
        &[],
    );
    assert_eq!(listing["source"], "openapi");
    let all = requests(&listing);
    for expected in [
        ("GET", "/catalog?page=2"),
        ("GET", "/search?q=term{n}"),
        ("GET", "/categories/books"),
        ("GET", "/products/{n}/reviews"),
        ("POST", "/orders"),
    ] {
        assert!(
            all.iter()
                .any(|(m, p)| (m.as_str(), p.as_str()) == expected),
            "{expected:?} in {all:#?}"
        );
    }
    let post = listing["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["method"] == "POST")
        .unwrap();
    assert_eq!(post["body"], r#"{"item":"book","qty":1}"#);

    // A run over the document, the config file giving the admin token and
    // leaving out what this test does not need.
    let config = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        config.path(),
        r#"{"headers": {"Authorization": "Bearer test"},
            "skip": ["/users/*", "/stores/*", "/categories/*", "/catalog", "/health", "/", "/old-catalog", "/search"]}"#,
    )
    .unwrap();
    let port = free_port();
    let finished = RunArgs::new(port)
        .cycles(3)
        .requests("2000")
        .args(&[
            "--openapi",
            &document,
            "--config",
            config.path().to_str().unwrap(),
        ])
        .run(&shop(port, "fastify"));
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let result = finished.result();
    let checked: Vec<&str> = result.routes.iter().map(|r| r.route.as_str()).collect();
    assert_eq!(
        checked,
        ["/admin/stats", "/products/{n}", "/products/{n}/reviews"],
        "{:#?}",
        result.settings.discovery
    );
    assert_eq!(
        verdict_of(result.route("/products/{n}/reviews")).kind,
        VerdictKind::Retention
    );
    // With the config's token the admin route answers, and is checked.
    let admin = result.route("/admin/stats");
    assert!(!verdict_of(admin).kind.is_leak(), "{:#?}", admin.verdict);
    assert!(
        admin
            .cycles
            .iter()
            .all(|c| c.load.status.s2xx == c.load.requests)
    );
}

#[test]
fn a_next_builds_pages_and_api_routes_come_from_its_manifests() {
    let app = crate::nextjs::built_app();
    let port = free_port();
    let listing = listed(
        RunArgs::new(port).args(&["--routes-from", "next"]),
        &crate::nextjs::next_start(&app, port),
    );
    assert_eq!(listing["source"], "next");
    let paths: Vec<String> = requests(&listing).into_iter().map(|(_, p)| p).collect();
    assert_eq!(
        paths,
        ["/", "/api/health", "/clean", "/items/{n}"],
        "{listing:#}"
    );
    assert!(
        port_is_free(port),
        "next start was not needed, nor left running"
    );
}

#[test]
fn a_source_that_cannot_be_read_says_what_to_give() {
    let port = free_port();
    let no_document = RunArgs::new(port)
        .args(&["--routes-from", "openapi"])
        .list_routes()
        .run(&[]);
    assert_eq!(no_document.code, 2);
    assert!(
        no_document.stderr.contains("give --openapi"),
        "{}",
        no_document.stderr
    );
    let unknown = RunArgs::new(port)
        .args(&["--routes-from", "swagger"])
        .list_routes()
        .run(&[]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("use openapi, app, next or auto"),
        "{}",
        unknown.stderr
    );
    let soak = RunArgs::new(port)
        .soak()
        .args(&["-d", "10s", "--every", "5s", "--openapi", "x.yaml"])
        .run(&["node".into()]);
    assert_eq!(soak.code, 2);
    assert!(
        soak.stderr.contains("a soak loads one route"),
        "{}",
        soak.stderr
    );
}
