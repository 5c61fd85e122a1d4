//! Reports of real runs: the HTML structure, GitHub-flavoured Markdown, the
//! JSON validated against schema.json (complete and failed runs), `report`
//! re-rendering a saved result, and the baseline comparison of two runs.

use crate::util::*;

struct Outputs {
    _dir: tempfile::TempDir,
    json: String,
    html: String,
    markdown: String,
}

fn outputs() -> Outputs {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    Outputs {
        json: path("result.json"),
        html: path("report.html"),
        markdown: path("report.md"),
        _dir: dir,
    }
}

/// Runs the rows server with `args` and the given environment; the table
/// goes to stdout, the files where `args` say.
fn run_rows(args: &[&str], env: &[(&str, &str)]) -> Finished {
    let port = free_port();
    RunArgs::new(port)
        .table()
        .args(args)
        .envs(env)
        .run(&target_command("rows-server.mjs", port))
}

#[test]
fn a_real_run_renders_html_markdown_and_schema_valid_json() {
    let out = outputs();
    let args = [
        "--route",
        "/churn",
        "--route",
        "/leak",
        "-a",
        "2000",
        "--json",
        &out.json,
        "--html",
        &out.html,
        "--markdown",
        &out.markdown,
    ];
    let finished = run_rows(&args, &[]);
    assert_eq!(finished.code, 1, "{}", finished.stderr);

    let html = std::fs::read_to_string(&out.html).unwrap();
    assert!(html.starts_with("<!doctype html>"));
    assert!(
        html.contains("<h1>leakcheck: 1 route keeps memory</h1>"),
        "the headline comes first"
    );
    assert_eq!(
        html.matches("<svg class=\"chart\"").count(),
        10,
        "four memory charts and one of lag and GC pauses per route"
    );
    assert_eq!(
        html.matches("lag (solid) and GC pause (dashed) per cycle (ms)")
            .count(),
        2
    );
    assert!(
        html.matches("class=\"fit\"").count() >= 2,
        "fitted lines are drawn"
    );
    assert!(html.contains("<h2 id=\"route-1\">Route <code>/leak</code></h2>"));
    assert!(html.contains("RETENTION") || html.contains(">retention (leak)<"));
    for forbidden in ["<script", "src=", "http://", "https://", "@import"] {
        assert!(
            !html.contains(forbidden),
            "self-contained: found {forbidden}"
        );
    }
    assert!(html.contains("@media print"));

    let markdown = std::fs::read_to_string(&out.markdown).unwrap();
    assert!(!markdown.contains('<'), "no raw HTML in the Markdown");
    let table: Vec<&str> = markdown.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(table.len(), 4, "header, separator, two routes:\n{markdown}");
    let pipes = |line: &str| line.replace("\\|", "").matches('|').count();
    assert!(
        table.iter().all(|l| pipes(l) == pipes(table[0])),
        "aligned columns:\n{markdown}"
    );
    assert!(markdown.contains("| `/leak` | retention ⚠ |"), "{markdown}");

    validate(&std::fs::read_to_string(&out.json).unwrap());

    // `leakcheck report` renders the same HTML from the saved result.
    let again = outputs();
    let finished = run_to_end({
        let mut c = leakcheck();
        c.args([
            "report",
            &out.json,
            "--html",
            &again.html,
            "--markdown",
            &again.markdown,
        ]);
        c
    });
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    assert_eq!(std::fs::read_to_string(&again.html).unwrap(), html);
    assert_eq!(std::fs::read_to_string(&again.markdown).unwrap(), markdown);
}

#[test]
fn a_failed_run_still_matches_the_schema() {
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/exit-after?n=1500"])
        .requests("1000")
        .run(&target_command("fault-server.mjs", port));
    assert_eq!(finished.code, 2);
    validate(&finished.stdout);
}

#[test]
fn baseline_passes_an_unchanged_route_and_fails_one_that_keeps_more() {
    // /leak with a gate well above its retention, so only the comparison
    // decides; its JSON to `json`, compared with `baseline` if given.
    let leak_run = |json: &str, baseline: Option<&str>, env: &[(&str, &str)]| {
        let mut args = vec!["--route", "/leak", "-a", "3000", "--json", json];
        args.extend(["--max-retained", "100KB"]);
        if let Some(baseline) = baseline {
            args.extend(["--baseline", baseline]);
        }
        run_rows(&args, env)
    };
    let base = outputs();
    assert_eq!(leak_run(&base.json, None, &[]).code, 0);

    let same = outputs();
    let unchanged = leak_run(&same.json, Some(&base.json), &[]);
    assert_eq!(unchanged.code, 0, "{}", unchanged.stderr);
    assert!(
        unchanged.stderr.contains("/leak: retained"),
        "{}",
        unchanged.stderr
    );
    assert!(
        unchanged.stderr.contains("within tolerance"),
        "{}",
        unchanged.stderr
    );

    // The same route now keeps a 4 KB string per request instead of 256 B.
    let more = outputs();
    let regressed = leak_run(&more.json, Some(&base.json), &[("LEAK_PAD", "4096")]);
    assert_eq!(regressed.code, 1, "{}", regressed.stderr);
    assert!(
        regressed.stderr.contains("/leak regressed: retained"),
        "{}",
        regressed.stderr
    );
    let result: RunResult =
        serde_json::from_str(&std::fs::read_to_string(&more.json).unwrap()).unwrap();
    let row = &result.comparison.as_ref().unwrap().routes[0];
    assert!(row.regressed);
    assert_eq!(row.metric.name(), "heapUsed");
    let (old, new) = (
        row.old_retained_per_request.unwrap(),
        row.new_retained_per_request.unwrap(),
    );
    assert!(new > old + 3000.0, "the message's figures: {old} → {new}");
    validate(&std::fs::read_to_string(&more.json).unwrap());

    // A page's result is no baseline for a server: refused before the run.
    let mut page: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&base.json).unwrap()).unwrap();
    page["settings"]["method"] = "page".into();
    let page_json = outputs();
    std::fs::write(&page_json.json, page.to_string()).unwrap();
    let other = outputs();
    let refused = leak_run(&other.json, Some(&page_json.json), &[]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("is the result of a page check"),
        "{}",
        refused.stderr
    );
}
