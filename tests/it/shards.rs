//! `run --shard I/N`, `report --merge` and `-j`: twelve routes of the demo
//! server (eleven clean, one leaking), checked whole and in three shards
//! on one machine one after another, the shards' JSON merged: the same
//! routes with the same verdicts, and the whole run's exit code; a merge
//! of shards run with different settings, or with one missing, refused.

use crate::util::*;

/// Twelve routes: the demo's `/leak` among eleven queries of `/churn`.
fn twelve_routes() -> Vec<String> {
    let mut routes: Vec<String> = (1..=11).map(|i| format!("/churn?r={i}")).collect();
    routes.insert(5, "/leak".into());
    routes
}

/// A short check of `routes` in `cycles` cycles, `extra` appended, its
/// JSON kept in `json`.
fn check(routes: &[String], cycles: u32, extra: &[&str], json: &std::path::Path) -> Finished {
    let port = free_port();
    let routes: Vec<&str> = routes.iter().map(String::as_str).collect();
    // 6 000 requests rule out 0.14 KB a request: a resolution above it
    // lets the clean routes read clean, and the demo's leak keeps 0.43 KB.
    let mut args = vec!["--no-diagnose", "--resolution", "256B"];
    args.extend_from_slice(extra);
    let finished = RunArgs::new(port)
        .routes(&routes)
        .cycles(cycles)
        .requests("2000")
        .args(&args)
        .run(&demo_command(port));
    std::fs::write(json, &finished.stdout).unwrap();
    finished
}

fn verdicts(result: &serde_json::Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = result["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["route"].as_str().unwrap().to_string(),
                r["verdict"]["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

fn read(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn three_shards_merged_equal_the_whole_run_and_a_mismatched_merge_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let routes = twelve_routes();
    let whole = dir.path().join("whole.json");
    let finished = check(&routes, 3, &[], &whole);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let whole = read(&whole);

    let shards = dir.path().join("shards");
    std::fs::create_dir(&shards).unwrap();
    let mut checked = 0;
    for i in 1..=3 {
        let json = shards.join(format!("shard-{i}.json"));
        let shard = format!("{i}/3");
        let finished = check(&routes, 3, &["--shard", &shard], &json);
        assert!([0, 1].contains(&finished.code), "{}", finished.stderr);
        let result = read(&json);
        validate(&std::fs::read_to_string(&json).unwrap());
        let part = result["routes"].as_array().unwrap().len();
        assert!((2..=6).contains(&part), "shard {i} has {part} routes");
        checked += part;
    }
    assert_eq!(checked, 12);

    let merged_json = dir.path().join("merged.json");
    let merged = run_leakcheck(&[
        "report",
        "--merge",
        shards.to_str().unwrap(),
        "--json",
        merged_json.to_str().unwrap(),
    ]);
    assert_eq!(
        merged.code, 1,
        "the leak fails the merged run: {}",
        merged.stderr
    );
    assert!(merged.stdout.contains("/leak"), "{}", merged.stdout);
    let merged = read(&merged_json);
    assert_eq!(verdicts(&merged), verdicts(&whole));
    let order: Vec<&str> = merged["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["route"].as_str().unwrap())
        .collect();
    assert_eq!(order, routes.iter().map(String::as_str).collect::<Vec<_>>());

    // One shard missing, then one run with another schedule: refused, named.
    let two: Vec<String> = (1..=2)
        .map(|i| shards.join(format!("shard-{i}.json")).display().to_string())
        .collect();
    let mut args = vec!["report", "--merge"];
    args.extend(two.iter().map(String::as_str));
    let refused = run_leakcheck(&args);
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.contains("shard 3/3 missing"),
        "{}",
        refused.stderr
    );
    let other = shards.join("shard-3.json");
    let rerun = check(&routes, 2, &["--shard", "3/3"], &other);
    assert!([0, 1].contains(&rerun.code), "{}", rerun.stderr);
    let refused = run_leakcheck(&["report", "--merge", shards.to_str().unwrap()]);
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.contains("different settings (cycles)"),
        "{}",
        refused.stderr
    );
}

/// `-j 2`: the same routes, two targets side by side on ports of their
/// own (the second's port put in the command), the same verdicts as one
/// at a time, and every target stopped.
#[test]
fn routes_side_by_side_read_as_they_do_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut routes: Vec<String> = (1..=4).map(|i| format!("/churn?r={i}")).collect();
    routes.insert(1, "/leak".into());
    routes.push("/leak?again=1".into());
    let one = check(&routes, 3, &["-j", "1"], &dir.path().join("one.json"));
    let two = check(&routes, 3, &["-j", "2"], &dir.path().join("two.json"));
    assert_eq!((one.code, two.code), (1, 1), "{}", two.stderr);
    let (one, two) = (
        read(&dir.path().join("one.json")),
        read(&dir.path().join("two.json")),
    );
    assert_eq!(verdicts(&two), verdicts(&one));
    let order: Vec<&str> = two["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["route"].as_str().unwrap())
        .collect();
    assert_eq!(order, routes.iter().map(String::as_str).collect::<Vec<_>>());
    // Every route's own target is gone.
    for route in two["routes"].as_array().unwrap() {
        let pid = route["pid"].as_u64().expect("a target per route");
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists()
                || crate::page_util::is_zombie(pid as u32),
            "{pid} still runs"
        );
    }
    // -j needs targets of its own: an attached server is refused.
    let attached = run_leakcheck(&[
        "run",
        "--url",
        "http://127.0.0.1:9",
        "--pid",
        "1",
        "-j",
        "2",
    ]);
    assert_eq!(attached.code, 2);
    assert!(
        attached.stderr.contains("side by side"),
        "{}",
        attached.stderr
    );
}

/// `page --links --shard I/N`: each shard follows its part of the links,
/// and the merge has every link once, in the page's order.
#[test]
fn a_pages_links_split_into_shards_merge_back_whole() {
    if !crate::page_util::chromium_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut names = Vec::new();
    let mut codes = Vec::new();
    // One server for both shards: a link's name holds the page's URL.
    let (_server, port) = crate::page_util::serve_pages();
    let url = format!("http://127.0.0.1:{port}/menu.html");
    for i in 1..=2 {
        let shard = format!("{i}/2");
        let finished = RunArgs::page(&url)
            .args(&[
                "--links",
                "--shard",
                &shard,
                "--cycles",
                "3",
                "-n",
                "10",
                "--resolution",
                "8KB",
            ])
            .run(&[]);
        codes.push(finished.code);
        let json = dir.path().join(format!("page-{i}.json"));
        std::fs::write(&json, &finished.stdout).unwrap();
        let result = read(&json);
        assert_eq!(
            result["settings"]["shard"]["count"], 2,
            "{}",
            finished.stderr
        );
        for route in result["routes"].as_array().unwrap() {
            names.push(route["route"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(names.len(), 4, "each link in one shard: {names:?}");
    let merged_json = dir.path().join("merged.json");
    let merged = run_leakcheck(&[
        "report",
        "--merge",
        dir.path().to_str().unwrap(),
        "--json",
        merged_json.to_str().unwrap(),
    ]);
    // The whole run's exit code: a leak's 1 before an undecided 2.
    let whole = if codes.contains(&1) {
        1
    } else {
        codes.iter().copied().max().unwrap_or(0)
    };
    assert_eq!(merged.code, whole, "{codes:?}: {}", merged.stderr);
    assert!(!merged.stderr.contains("error:"), "{}", merged.stderr);
    let merged = read(&merged_json);
    let merged_names: Vec<&str> = merged["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["route"].as_str().unwrap())
        .collect();
    assert_eq!(merged_names.len(), 4, "{merged:#}");
    assert!(
        merged_names.windows(2).all(|w| w[0] < w[1]),
        "the page order: {merged_names:?}"
    );
}
