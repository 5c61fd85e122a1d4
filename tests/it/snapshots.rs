//! The snapshot engine on snapshots written by real Node in the test run:
//! the holder named for six kinds of leak, figures equal to an independent
//! JavaScript oracle (another dominator algorithm), and a truncated file
//! refused with its byte offset.

use std::path::{Path, PathBuf};
use std::process::Command;

use leakcheck::model::{Holder, HolderKind};
use leakcheck::snapshot::DiffReport;

use crate::util::*;

/// Runs a leak scenario from tests/targets/leaks, which writes
/// before.heapsnapshot and after.heapsnapshot into a fresh directory.
fn scenario(script: &str, count: u32) -> (tempfile::TempDir, PathBuf, PathBuf) {
    scenario_with(script, count, &[])
}

/// `scenario` with more arguments for the script after the count.
fn scenario_with(
    script: &str,
    count: u32,
    extra: &[&str],
) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(node());
    command
        .arg(repo_path(&format!("tests/targets/leaks/{script}")))
        .arg(dir.path())
        .arg(count.to_string())
        .args(extra);
    let finished = run_to_end(command);
    assert_eq!(finished.code, 0, "{script}: {}", finished.stderr);
    let before = dir.path().join("before.heapsnapshot");
    let after = dir.path().join("after.heapsnapshot");
    assert!(
        before.exists() && after.exists(),
        "{script} wrote both snapshots"
    );
    (dir, before, after)
}

fn diff(before: &Path, after: &Path) -> DiffReport {
    let finished = RunArgs::diff(before, after).run(&[]);
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    finished.diff_report()
}

/// The holder named `name` (one holder is listed per grown class; which
/// class grew most can vary with what the JIT compiled meanwhile).
fn holder_named<'a>(report: &'a DiffReport, name: &str) -> &'a Holder {
    let holders = &report.holders;
    holders
        .iter()
        .find(|h| h.name == name)
        .unwrap_or_else(|| panic!("no holder named {name}: {holders:#?}"))
}

#[test]
fn names_a_module_scope_array() {
    let (_dir, before, after) = scenario("module-array.mjs", 3000);
    let json = diff(&before, &after);
    let holder = holder_named(&json, "kept");
    assert_eq!(holder.kind, HolderKind::ClosureVariable);
    assert_eq!(holder.holder_class, "Array");
    assert!(
        holder
            .script
            .as_deref()
            .unwrap()
            .ends_with("module-array.mjs")
    );
    assert!(holder.objects >= 3000);
    let grown = &json.classes[0];
    assert!((3000..3010).contains(&grown.new_count), "{grown:#?}");
    assert!(holder.path_text.contains("[context kept]"));
}

#[test]
fn names_a_map_cache() {
    let (_dir, before, after) = scenario("map-cache.mjs", 3000);
    let json = diff(&before, &after);
    let holder = holder_named(&json, "cache");
    assert_eq!(holder.holder_class, "Map");
}

#[test]
fn names_a_global_property_in_commonjs() {
    let (_dir, before, after) = scenario("global-property.cjs", 3000);
    let json = diff(&before, &after);
    let holder = holder_named(&json, "globalThis.sessionStore");
    assert_eq!(holder.kind, HolderKind::GlobalProperty);
}

#[test]
fn names_event_emitter_listeners() {
    let (_dir, before, after) = scenario("emitter.mjs", 3000);
    let json = diff(&before, &after);
    let holder = holder_named(&json, "bus._events.config-changed");
    assert_eq!(holder.kind, HolderKind::EventListenerList, "{holder:#?}");
}

/// The second snapshot is written inside `JSON.stringify`'s replacer,
/// while native code holds the listener list in a handle scope (Node 26's
/// `(Handle scope)`, Node 20's `(Stack roots)`): the path from the user's
/// roots still names `bus._events`.
#[test]
fn names_event_emitter_listeners_held_open_by_native_code_too() {
    let (_dir, before, after) = scenario_with("emitter.mjs", 3000, &["held"]);
    let json = diff(&before, &after);
    let holder = holder_named(&json, "bus._events.config-changed");
    assert_eq!(holder.kind, HolderKind::EventListenerList, "{holder:#?}");
    assert!(
        !holder.path_text.contains("(Handle scope)") && !holder.path_text.contains("(Stack roots)"),
        "{}",
        holder.path_text
    );
}

#[test]
fn names_closures_held_by_timers() {
    let (_dir, before, after) = scenario("timers.mjs", 3000);
    let json = diff(&before, &after);
    let holder = json
        .holders
        .iter()
        .find(|h| h.class == "Timeout")
        .expect("Timeout grew");
    assert_eq!(holder.kind, HolderKind::TimerList, "{holder:#?}");
    assert_eq!(holder.holder_class, "TimersList");
}

#[test]
fn names_variables_replaced_by_chains_that_keep_the_old_value() {
    // Each new link dominates the older ones: the holder's search climbs
    // those chains (a unit test in holder_tests.rs bounds the climb).
    const LINKS: u64 = 20_000;
    let (_dir, before, after) = scenario("chains.mjs", LINKS as u32);
    let json = diff(&before, &after);
    for variable in ["list", "handler"] {
        let holder = holder_named(&json, variable);
        assert_eq!(holder.kind, HolderKind::ClosureVariable, "{holder:#?}");
        assert_eq!(holder.slot.as_deref(), Some(variable), "{holder:#?}");
        assert!(holder.objects >= LINKS, "{holder:#?}");
    }
}

/// The oracle's figures for one snapshot file.
fn oracle(file: &Path) -> serde_json::Value {
    let mut command = Command::new(node());
    command
        .arg(repo_path("tests/oracle/snapshot-oracle.mjs"))
        .arg(file);
    let oracle_run = run_to_end(command);
    assert_eq!(oracle_run.code, 0, "{}", oracle_run.stderr);
    serde_json::from_str(&oracle_run.stdout).unwrap()
}

#[test]
fn grew_by_self_size_is_the_seeds_tally_b_minus_a() {
    let (_dir, before, after) = scenario("module-array.mjs", 2000);
    let json = diff(&before, &after);
    let (a, b) = (oracle(&before), oracle(&after));
    let figure = |tally: &serde_json::Value, key: &str, i: usize| {
        tally.get(key).map_or(0, |t| t[i].as_i64().unwrap())
    };
    // The seed lists the keys of B, B minus A, largest self-size growth first.
    let expected: Vec<(String, i64, i64)> = b["tally"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| {
            let count = figure(&b["tally"], k, 0) - figure(&a["tally"], k, 0);
            let size = figure(&b["tally"], k, 1) - figure(&a["tally"], k, 1);
            (k.clone(), count, size)
        })
        .collect();
    let rows = &json.grew_by_self_size;
    assert!(rows.len() >= 5, "{rows:#?}");
    let largest = expected.iter().map(|e| e.2).max().unwrap();
    assert_eq!(rows[0].self_size_delta, largest);
    for row in rows {
        let key = row.key.as_str();
        let (count, size) = match expected.iter().find(|e| e.0 == key) {
            Some(e) => (e.1, e.2),
            // Only in A: what was freed, as a negative row.
            None => (-figure(&a["tally"], key, 0), -figure(&a["tally"], key, 1)),
        };
        assert_eq!(row.count_delta, count, "{key}");
        assert_eq!(row.self_size_delta, size, "{key}");
    }
    // The records the scenario keeps, spelt as the seed prints them.
    assert!(rows.iter().any(|r| r.key == "object:Object"), "{rows:#?}");
}

#[test]
fn figures_match_an_independent_oracle() {
    let (_dir, _before, after) = scenario("map-cache.mjs", 2000);
    let finished = run_leakcheck(&[
        "inspect",
        after.to_str().unwrap(),
        "--top",
        "40",
        "--json",
        "-",
    ]);
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let ours = finished.inspect_report();
    // The oracle is a script of its own: its output is read as plain JSON.
    let oracle = oracle(&after);
    let number = |value: &serde_json::Value| value.as_u64().expect("a whole number");

    assert_eq!(ours.totals.nodes, number(&oracle["nodes"]));
    assert_eq!(ours.totals.edges, number(&oracle["edges"]));
    assert_eq!(ours.totals.self_size, number(&oracle["self_size"]));
    let oracle_classes = oracle["classes"].as_array().unwrap();
    for class in &ours.classes {
        let name = class.class.as_str();
        let theirs = oracle_classes
            .iter()
            .find(|c| c["class"] == name)
            .unwrap_or_else(|| panic!("oracle lacks {name}"));
        assert_eq!(class.count, number(&theirs["count"]), "{name} count");
        assert_eq!(
            class.self_size,
            number(&theirs["self_size"]),
            "{name} self size"
        );
        assert_eq!(
            class.retained_size,
            number(&theirs["retained_size"]),
            "{name} retained size"
        );
    }
    let by_id = &oracle["retained_by_id"];
    for object in &ours.largest_retainers {
        let id = object.id.to_string();
        assert_eq!(
            object.retained_size,
            number(&by_id[&id]),
            "retained size of @{id}"
        );
    }
}

#[test]
fn a_truncated_snapshot_names_the_byte_where_it_ends() {
    let (dir, before, _after) = scenario("module-array.mjs", 10);
    let bytes = std::fs::read(&before).unwrap();
    let cut = dir.path().join("cut.heapsnapshot");
    let keep = bytes.len() * 2 / 3;
    std::fs::write(&cut, &bytes[..keep]).unwrap();
    let finished = run_leakcheck(&["inspect", cut.to_str().unwrap()]);
    assert_eq!(finished.code, 2);
    assert!(
        finished.stderr.contains(&format!("ends at byte {keep}")),
        "{}",
        finished.stderr
    );
    assert!(finished.stderr.contains("truncated"), "{}", finished.stderr);
}

/// `inspect` reads only the strings it can print (string values stay
/// empty): its report must equal the one from every string, on snapshots
/// Node wrote, whose string values include property names (map keys).
#[test]
fn inspect_reports_the_same_without_string_values() {
    use leakcheck::snapshot::{ParseOptions, inspect_graph, parse_with};
    let (_dir, before, after) = scenario("map-cache.mjs", 3000);
    for file in [&before, &after] {
        let report = |only_shown_strings| {
            let options = ParseOptions {
                only_shown_strings,
                ..ParseOptions::default()
            };
            let reader = std::fs::File::open(file).unwrap();
            let graph = parse_with(reader, None, options).unwrap();
            let strings = graph.strings.len();
            let report = inspect_graph(graph, 50, 2);
            (serde_json::to_string(&report).unwrap(), strings)
        };
        assert_eq!(report(true), report(false), "{}", file.display());
    }
}

/// `leakcheck redact`: a pair rewritten with one key gives `diff` the same
/// holders and paths (map keys and values redacted alike); a file that
/// would overwrite itself is refused; a truncated one names its byte.
#[test]
fn a_redacted_pair_reads_the_same_and_bad_input_is_refused() {
    let (dir, before, after) = scenario("map-cache.mjs", 3000);
    let out = dir.path().join("redacted");
    let finished = run_leakcheck(&[
        "redact",
        before.to_str().unwrap(),
        after.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    assert!(finished.stderr.contains("MB/s"), "{}", finished.stderr);
    let named = |report: DiffReport| -> Vec<(String, String)> {
        report
            .holders
            .iter()
            .map(|h| (h.name.clone(), h.path_text.clone()))
            .collect()
    };
    let redacted = diff(
        &out.join("before.heapsnapshot"),
        &out.join("after.heapsnapshot"),
    );
    let original = diff(&before, &after);
    assert_eq!(named(redacted.clone()), named(original.clone()));
    assert!(!named(original).is_empty());
    assert_eq!(redacted.classes, diff(&before, &after).classes);

    let finished = run_leakcheck(&[
        "redact",
        before.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(finished.code, 2);
    assert!(
        finished.stderr.contains("would overwrite itself"),
        "{}",
        finished.stderr
    );
    let bytes = std::fs::read(&before).unwrap();
    let cut = dir.path().join("cut.heapsnapshot");
    let keep = bytes.len() * 2 / 3;
    std::fs::write(&cut, &bytes[..keep]).unwrap();
    let finished = run_leakcheck(&[
        "redact",
        cut.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(finished.code, 2);
    assert!(
        finished.stderr.contains(&format!("ends at byte {keep}")),
        "{}",
        finished.stderr
    );
}
