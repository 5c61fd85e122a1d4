//! The GitHub Action (`action.yml`): every input reaches its step as an
//! `INPUT_*` variable, and the steps' own commands run as the runner would
//! run them (`GITHUB_ACTION_PATH`, `RUNNER_TEMP`, `GITHUB_PATH`,
//! `GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT` set) against the demo: the
//! install packs this commit and installs it offline, the check fails the
//! step on the demo's `/leak` and writes the summary and the reports, and a
//! second check compared with the first's result passes.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::npm::run_lines;
use crate::util::*;

const INPUTS: [&str; 9] = [
    "url",
    "command",
    "shard",
    "merge",
    "routes",
    "scenario",
    "max-retained",
    "baseline",
    "args",
];

/// The runner's files for one job, in `dir`.
struct Runner<'a> {
    dir: &'a Path,
}

impl Runner<'_> {
    fn file(&self, name: &str) -> std::path::PathBuf {
        self.dir.join(name)
    }

    /// Runs one step's `run:` line with the runner's variables and `inputs`.
    fn step(&self, line: &str, path: &str, inputs: &[(&str, String)]) -> Finished {
        let mut command = Command::new("bash");
        command
            .arg("-c")
            .arg(line)
            .current_dir(repo_path("."))
            .env("PATH", path)
            .env("GITHUB_ACTION_PATH", repo_path("."))
            .env("RUNNER_TEMP", self.file("temp"))
            .env("GITHUB_PATH", self.file("github_path"))
            .env("GITHUB_STEP_SUMMARY", self.file("summary.md"))
            .env("GITHUB_OUTPUT", self.file("output"))
            .env("LEAKCHECK_PACK_BINARY", env!("CARGO_BIN_EXE_leakcheck"))
            .stdin(Stdio::null());
        for (name, value) in inputs {
            command.env(name, value);
        }
        run_to_end(command)
    }
}

#[test]
fn the_action_installs_this_commit_and_fails_the_step_on_a_leak() {
    let action = std::fs::read_to_string(repo_path("action.yml")).unwrap();
    assert!(action.contains("using: composite"), "a composite action");
    for input in INPUTS.iter().chain(&["version"]) {
        let variable = format!("INPUT_{}", input.to_uppercase().replace('-', "_"));
        let mapping = format!("{variable}: ${{{{ inputs.{input} }}}}");
        assert!(
            action.contains(&mapping),
            "{input} reaches its step as {mapping}"
        );
    }
    assert!(action.contains("upload-artifact"), "the reports are kept");
    let lines = run_lines(&action);
    let [install, check] = lines.as_slice() else {
        panic!("two run steps: {lines:?}");
    };
    if Command::new("npm").arg("--version").output().is_err() {
        assert!(!in_ci(), "CI=true and npm is not installed");
        eprintln!("action test skipped: npm is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let runner = Runner { dir: dir.path() };
    let path = std::env::var("PATH").unwrap();
    let installed = runner.step(install, &path, &[("INPUT_VERSION", String::new())]);
    assert_eq!(installed.code, 0, "{}", installed.stderr);
    assert!(
        installed.stdout.contains(env!("CARGO_PKG_VERSION")),
        "{}",
        installed.stdout
    );
    // Later steps find leakcheck on the PATH the install step added.
    let added = std::fs::read_to_string(runner.file("github_path")).unwrap();
    let path = format!("{}:{path}", added.trim());

    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let command = shell_words(&demo_command(port));
    let inputs = |routes: &str, baseline: String| {
        vec![
            ("INPUT_URL", url.clone()),
            ("INPUT_COMMAND", command.clone()),
            ("INPUT_ROUTES", routes.to_string()),
            ("INPUT_SCENARIO", String::new()),
            ("INPUT_MAX_RETAINED", String::new()),
            ("INPUT_BASELINE", baseline),
            ("INPUT_ARGS", "--no-diagnose".to_string()),
        ]
    };
    let missing = runner.file("no-such-release.json").display().to_string();
    let leaking = runner.step(check, &path, &inputs("/churn\n/leak", missing));
    assert_eq!(leaking.code, 1, "{}", leaking.stderr);
    assert!(
        leaking.stdout.contains("::notice::baseline"),
        "{}",
        leaking.stdout
    );
    let report = runner.file("temp/leakcheck-report");
    for name in ["leakcheck.json", "leakcheck.html", "leakcheck.md"] {
        assert!(
            report.join(name).exists(),
            "{name} is kept for the artifact"
        );
    }
    let output = std::fs::read_to_string(runner.file("output")).unwrap();
    assert!(output.contains("exit-code=1"), "{output}");
    let release = runner.file("release.json");
    std::fs::copy(report.join("leakcheck.json"), &release).unwrap();

    let compared = runner.step(
        check,
        &path,
        &inputs("/churn", release.display().to_string()),
    );
    assert_eq!(compared.code, 0, "{}", compared.stderr);
    let summary = std::fs::read_to_string(runner.file("summary.md")).unwrap();
    assert!(
        summary.contains("### leakcheck: 1 route keeps memory"),
        "{summary}"
    );
    assert!(summary.contains("#### Compared with"), "{summary}");

    // A matrix of two shards, then the merge job over their results.
    let shards = runner.file("shards");
    std::fs::create_dir(&shards).unwrap();
    for shard in ["1/2", "2/2"] {
        let mut shard_inputs = inputs("/churn\n/leak", String::new());
        shard_inputs.push(("INPUT_SHARD", shard.to_string()));
        let checked = runner.step(check, &path, &shard_inputs);
        assert!([0, 1].contains(&checked.code), "{}", checked.stderr);
        let name = format!("shard-{}.json", &shard[..1]);
        std::fs::copy(report.join("leakcheck.json"), shards.join(name)).unwrap();
    }
    std::fs::write(runner.file("summary.md"), "").unwrap();
    let merged = runner.step(
        check,
        &path,
        &[("INPUT_MERGE", shards.display().to_string())],
    );
    assert_eq!(merged.code, 1, "the merged run leaks: {}", merged.stderr);
    let summary = std::fs::read_to_string(runner.file("summary.md")).unwrap();
    assert!(summary.contains("/leak"), "{summary}");
    assert!(summary.contains("/churn"), "{summary}");
    assert!(port_is_free(port));
}

/// A command as shell words (the action's `command` input is one).
fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ")
}
