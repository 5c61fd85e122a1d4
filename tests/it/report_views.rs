//! Reports in the target's language, rendered from real runs: a page's
//! charts are the series that made its verdict (DOM nodes, listeners), not
//! zeros of what a page never reports; its table counts iterations; its
//! figure is a count in every format; its target is the browser and the
//! page. A server's Timeout leak gets a chart of its handles, and its
//! scripts are printed relative to the target's working directory.

use std::path::Path;

use crate::page_util::*;
use crate::util::*;

/// The `data-series` of each chart in an HTML report, in order.
fn charts(html: &str) -> Vec<String> {
    html.split("<figure data-series=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next().map(String::from))
        .collect()
}

/// The header cells of the per-cycle table.
fn cycle_columns(html: &str) -> Vec<String> {
    let table = html.split("<table class=\"cycles\">").nth(1).unwrap_or("");
    let header = table.split("</tr>").next().unwrap_or("");
    header
        .split("<th")
        .skip(1)
        .filter_map(|cell| cell.split('>').nth(1)?.split('<').next().map(String::from))
        .collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn a_page_report_charts_what_grew_and_counts_iterations() {
    if !chromium_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (html, markdown) = (dir.path().join("page.html"), dir.path().join("page.md"));
    let finished = page_run(
        "leaky.html",
        &["click #open", "click #close"],
        &[
            "--no-diagnose",
            "--html",
            html.to_str().unwrap(),
            "--markdown",
            markdown.to_str().unwrap(),
        ],
    );
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let result = finished.result();
    let figure = &result.routes[0].verdict.as_ref().unwrap().figure;
    assert_eq!(figure.metric.name(), "dom.Nodes");
    let json: serde_json::Value = serde_json::from_str(&finished.stdout).unwrap();
    assert_eq!(json["routes"][0]["verdict"]["figure"]["unit"], "count");
    let nodes = format!("+{:.0} dom.Nodes", figure.bytes_per_request);

    let html = read(&html);
    let charts = charts(&html);
    assert_eq!(
        charts.first().map(String::as_str),
        Some("dom.Nodes"),
        "{charts:?}"
    );
    assert!(
        charts.iter().any(|c| c == "dom.JSEventListeners"),
        "{charts:?}"
    );
    assert!(charts.iter().any(|c| c == "heapUsed"), "{charts:?}");
    assert!(
        !charts.iter().any(|c| c == "external"),
        "a page has no external: {charts:?}"
    );
    assert!(html.contains("Not read: external"), "said once instead");
    let columns = cycle_columns(&html);
    for wanted in ["iterations", "failed", "iterations/s", "ms / iteration"] {
        assert!(
            columns.iter().any(|c| c == wanted),
            "{wanted} in {columns:?}"
        );
    }
    for unwanted in ["requests", "non-2xx", "req/s", "external"] {
        assert!(
            !columns.iter().any(|c| c == unwanted),
            "{unwanted} in {columns:?}"
        );
    }
    assert!(
        html.contains("Target page http://127.0.0.1:"),
        "the page names the target"
    );
    assert!(
        !html.contains("--headless"),
        "the command line stays in the JSON"
    );
    assert!(json["target"]["command"].to_string().contains("--headless"));

    // One figure, one unit, in the three formats.
    let markdown = read(&markdown);
    for (format, text) in [
        ("html", &html),
        ("markdown", &markdown),
        ("terminal", &finished.stderr),
    ] {
        assert!(text.contains(&nodes), "{format} says {nodes}:\n{text}");
        assert!(
            !text.contains(" B (dom.Nodes)"),
            "{format} prints a count as bytes"
        );
    }
    // What to do, in the page's terms.
    let action = &result.routes[0].verdict.as_ref().unwrap().action;
    assert!(action.contains("`resize` listener on Window"), "{action}");
}

#[test]
fn a_handle_leak_report_charts_its_handles_and_prints_scripts_relative() {
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("handles.html");
    let command = target_command("handles-server.mjs", port);
    let finished = RunArgs::new(port)
        .routes(&["/interval"])
        .requests("1000")
        .args(&["--html", html.to_str().unwrap()])
        .run(&command);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    assert!(none_running(&command));
    let result = finished.result();
    let cwd = result
        .target
        .cwd
        .clone()
        .expect("the target's working directory");
    let html = read(&html);
    let charts = charts(&html);
    assert!(
        charts.iter().any(|c| c == "active_resources.Timeout"),
        "{charts:?}"
    );
    let columns = cycle_columns(&html);
    for wanted in ["requests", "errors", "req/s", "external"] {
        assert!(
            columns.iter().any(|c| c == wanted),
            "{wanted} in {columns:?}"
        );
    }
    assert!(!columns.iter().any(|c| c == "iterations"), "{columns:?}");
    // The target's scripts (and its command) relative to its working
    // directory; the JSON keeps them whole.
    let absolute = format!("{cwd}/tests/targets/handles-server.mjs");
    assert!(!html.contains(&absolute), "{absolute} in the HTML");
    assert!(
        !finished.stderr.contains(&absolute),
        "{absolute} in the terminal"
    );
    assert!(html.contains("tests/targets/handles-server.mjs"));
    assert!(
        finished.stdout.contains(&absolute),
        "the JSON keeps the path"
    );
}
