//! The npm route: `scripts/npm-pack.sh` packs the launcher package and the
//! platform package (with the binary under test), a fresh project installs
//! the tarballs offline, and `npx leakcheck`, the JS API inside `node
//! --test`, the launcher's errors and the CI recipe's command lines all run
//! for real against the demo. Skipped, saying so, only where npm is absent.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::*;

/// A project with the packed tarballs installed, or `None` without npm.
struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Project {
    fn install() -> Option<Project> {
        if Command::new("npm").arg("--version").output().is_err() {
            // CI installs npm: there a missing one is a broken setup, not a skip.
            assert!(!in_ci(), "CI=true and npm is not installed");
            eprintln!("npm tests skipped: npm is not installed");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let packs = dir.path().join("packs");
        let status = Command::new("bash")
            .arg(repo_path("scripts/npm-pack.sh"))
            .arg(&packs)
            .env("LEAKCHECK_PACK_BINARY", env!("CARGO_BIN_EXE_leakcheck"))
            .status()
            .unwrap();
        assert!(status.success(), "npm-pack.sh failed");
        let root = dir.path().join("project");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(
            root.join("package.json"),
            r#"{"name":"try-leakcheck","version":"1.0.0","private":true,"type":"module"}"#,
        )
        .unwrap();
        let version = env!("CARGO_PKG_VERSION");
        let installed = Command::new("npm")
            .args(NPM_OFFLINE_INSTALL)
            .arg(packs.join(format!("leakcheck-linux-x64-{version}.tgz")))
            .arg(packs.join(format!("leakcheck-{version}.tgz")))
            .current_dir(&root)
            .status()
            .unwrap();
        assert!(installed.success(), "npm install --offline failed");
        Some(Project { _dir: dir, root })
    }

    fn npx(&self, args: &[&str]) -> Command {
        let mut command = Command::new("npx");
        command
            .arg("--offline")
            .arg("leakcheck")
            .args(args)
            .current_dir(&self.root);
        command
    }
}

fn finish(mut command: Command) -> Finished {
    command.stdin(Stdio::null());
    run_to_end(command)
}

#[test]
fn npx_leakcheck_runs_the_check_and_says_what_is_wrong_otherwise() {
    let Some(project) = Project::install() else {
        return;
    };
    let version = finish(project.npx(&["--version"]));
    assert_eq!(version.code, 0, "{}", version.stderr);
    assert!(
        version.stdout.contains(env!("CARGO_PKG_VERSION")),
        "{}",
        version.stdout
    );
    // The man pages and completions ship in the main package.
    let package = project.root.join("node_modules/leakcheck");
    for file in [
        "man/leakcheck.1",
        "man/leakcheck-run.1",
        "completions/leakcheck.bash",
    ] {
        let text = std::fs::read_to_string(package.join(file)).unwrap_or_default();
        assert!(
            text.contains("leakcheck"),
            "{file} is missing from the package"
        );
    }

    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let demo = demo_command(port);
    let mut args = vec![
        "run",
        "--url",
        &url,
        "--route",
        "/leak",
        "-a",
        "2000",
        "--no-diagnose",
        "-q",
        "--",
    ];
    args.extend(demo.iter().map(String::as_str));
    let run = finish(project.npx(&args));
    assert_eq!(
        run.code, 1,
        "a leak exits 1 through the launcher: {}",
        run.stderr
    );
    assert!(port_is_free(port));

    // The launcher's three one-sentence errors.
    let not_executable = project.root.join("not-executable");
    std::fs::write(&not_executable, "").unwrap();
    let mut command = project.npx(&["--version"]);
    command.env("LEAKCHECK_BINARY", &not_executable);
    let failed = finish(command);
    assert_eq!(failed.code, 2);
    assert!(
        failed.stderr.contains("is not an executable file"),
        "{}",
        failed.stderr
    );
    let mut command = project.npx(&["--version"]);
    command.env("LEAKCHECK_PLATFORM_OVERRIDE", "FreeBSD-amd64");
    let failed = finish(command);
    assert_eq!(failed.code, 2);
    assert!(
        failed
            .stderr
            .contains("no binary is published for FreeBSD-amd64"),
        "{}",
        failed.stderr
    );
    std::fs::remove_dir_all(project.root.join("node_modules/@leakcheck")).unwrap();
    let failed = finish(project.npx(&["--version"]));
    assert_eq!(failed.code, 2);
    assert!(
        failed
            .stderr
            .contains("the package @leakcheck/linux-x64 is not installed"),
        "{}",
        failed.stderr
    );
}

const API_TEST: &str = r#"
import { test } from 'node:test';
import assert from 'node:assert';
import { check, assertNoLeak } from 'leakcheck';

const command = (port) => [process.env.DEMO_NODE, process.env.DEMO_SCRIPT, String(port)];

test('a route that keeps nothing passes', async () => {
  const port = Number(process.env.CHURN_PORT);
  const result = await check({ url: `http://127.0.0.1:${port}`, routes: ['/churn'], requests: 4000,
    resolution: '160B', command: command(port), quiet: true, diagnose: false });
  assert.equal(result.routes[0].verdict.kind, 'no-retention');
  assertNoLeak(result);
});

test('a leak fails with its holder in the message', async () => {
  const port = Number(process.env.LEAK_PORT);
  const result = await check({ url: `http://127.0.0.1:${port}`, routes: ['/leak'], requests: 3000,
    command: command(port), quiet: true });
  assert.equal(result.routes[0].verdict.leak, true);
  assert.throws(() => assertNoLeak(result), (error) =>
    error instanceof assert.AssertionError && /keptRequests/.test(error.message) && /retention/.test(error.message));
});

test('exit 2 rejects with the partial result', async () => {
  const port = Number(process.env.MISSING_PORT);
  await assert.rejects(
    check({ url: `http://127.0.0.1:${port}`, routes: ['/missing'], requests: 100, cycles: 1,
      command: command(port), quiet: true }),
    (error) => error.exitCode === 2 && error.result?.routes?.[0]?.verdict?.kind === 'inconclusive');
});

test('options are checked: unknown names with the closest known one, wrong types', async () => {
  const url = 'http://127.0.0.1:9';
  await assert.rejects(check({ url, diagnoze: false }), (e) => e instanceof TypeError && /did you mean "diagnose"/.test(e.message));
  await assert.rejects(check({ url, loadCommand: 'k6 run' }), (e) => e instanceof TypeError && /did you mean "loadCmd"/.test(e.message));
  await assert.rejects(check({ url, command: 'node server.mjs' }), (e) => e instanceof TypeError && /options.command must be an array of strings/.test(e.message));
  await assert.rejects(check({ url, routes: { a: 1 } }), (e) => e instanceof TypeError && /options.routes must be a string or an array/.test(e.message));
  await assert.rejects(check({ url, maxRetainedPerRequest: 64 }), (e) => e instanceof TypeError && /unknown option/.test(e.message));
});
"#;

#[test]
fn the_js_api_works_inside_node_test() {
    let Some(project) = Project::install() else {
        return;
    };
    let file = project.root.join("leak.test.mjs");
    std::fs::write(&file, API_TEST).unwrap();
    let mut command = Command::new(node());
    // TAP, named: Node 26's default reporter is `spec` even into a pipe.
    command
        .args(["--test", "--test-reporter=tap"])
        .arg(&file)
        .current_dir(&project.root)
        .env("DEMO_NODE", node())
        .env("DEMO_SCRIPT", repo_path("examples/demo-server.mjs"))
        .env("CHURN_PORT", free_port().to_string())
        .env("LEAK_PORT", free_port().to_string())
        .env("MISSING_PORT", free_port().to_string());
    let finished = finish(command);
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    assert!(finished.stdout.contains("# pass 4"), "{}", finished.stdout);
}

/// The same checks of functions under `node --test` and under Vitest: a
/// closure of the test file itself that keeps every call's object, a
/// module's unbounded cache (both rejected with their holder named), and
/// a clean parser (resolved).
const FUNCTION_TESTS: &str = r#"
import { test, expect } from 'RUNNER';
import { checkFunction } from 'leakcheck';

const functions = process.env.FUNCTIONS;
const kept = [];
function remember() { kept.push({ body: 'k'.repeat(300) }); }

test('a closure of this file', async () => {
  const error = await checkFunction(remember).then(() => null, (e) => e);
  expect(error?.message ?? '').toMatch(/Held by `kept`/);
}, 120000);

test('a module export that leaks', async () => {
  const error = await checkFunction({ module: `${functions}/lru.mjs`, export: 'cached' }).then(() => null, (e) => e);
  expect(error?.message ?? '').toMatch(/Held by `cache`/);
}, 120000);

test('a clean module export', async () => {
  const result = await checkFunction({ module: `${functions}/parser.cjs`, export: 'parse' });
  expect(result.routes[0].verdict.kind).toBe('no-retention');
}, 120000);
"#;

/// `expect` for node:test, which has none.
const NODE_EXPECT: &str = r#"
import assert from 'node:assert';
export const expect = (value) => ({
  toMatch: (re) => assert.match(value, re),
  toBe: (other) => assert.equal(value, other),
});
"#;

#[test]
fn check_function_works_under_node_test_and_vitest() {
    let Some(project) = Project::install() else {
        return;
    };
    let functions = repo_path("tests/targets/functions");
    // node:test, with a three-line expect.
    std::fs::write(project.root.join("expect.mjs"), NODE_EXPECT).unwrap();
    let node_file = project.root.join("fn.test.mjs");
    let node_source = FUNCTION_TESTS
        .replace(
            "import { test, expect } from 'RUNNER';",
            "import { test } from 'node:test';\nimport { expect } from './expect.mjs';",
        )
        .replace(", 120000);", ");");
    std::fs::write(&node_file, node_source).unwrap();
    let mut command = Command::new(node());
    command
        .args(["--test", "--test-reporter=tap"])
        .arg(&node_file)
        .current_dir(&project.root)
        .env("FUNCTIONS", &functions)
        .env("LEAKCHECK_NODE", node());
    let finished = finish(command);
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    assert!(finished.stdout.contains("# pass 3"), "{}", finished.stdout);

    // Vitest, from npm.
    let installed = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "vitest@3",
        ])
        .current_dir(&project.root)
        .status()
        .unwrap();
    assert!(installed.success(), "npm install vitest failed");
    let vitest_file = project.root.join("fn.vitest.test.mjs");
    std::fs::write(&vitest_file, FUNCTION_TESTS.replace("RUNNER", "vitest")).unwrap();
    let mut command = Command::new(node());
    command
        .arg(project.root.join("node_modules/vitest/vitest.mjs"))
        .args(["run", "fn.vitest.test.mjs"])
        .current_dir(&project.root)
        .env("FUNCTIONS", &functions)
        .env("LEAKCHECK_NODE", node())
        .env("CI", "true");
    let finished = finish(command);
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    assert!(finished.stdout.contains("3 passed"), "{}", finished.stdout);
}

/// The `run:` blocks of a GitHub Actions workflow, as shell lines.
pub(crate) fn run_lines(workflow: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut block: Option<usize> = None;
    for line in workflow.lines() {
        let indent = line.len() - line.trim_start().len();
        if let Some(at) = block {
            if line.trim().is_empty() || indent > at {
                if !line.trim().is_empty() {
                    lines.push(line.trim().to_string());
                }
                continue;
            }
            block = None;
        }
        let trimmed = line.trim_start().trim_start_matches("- ");
        if let Some(rest) = trimmed.strip_prefix("run:") {
            match rest.trim() {
                "|" => block = Some(indent),
                command => lines.push(command.to_string()),
            }
        }
    }
    lines
}

#[test]
fn the_ci_recipe_parses_and_its_commands_run_against_the_demo() {
    let workflow = std::fs::read_to_string(repo_path("examples/ci/github-actions.yml")).unwrap();
    for key in [
        "on:",
        "jobs:",
        "runs-on:",
        "steps:",
        "GITHUB_STEP_SUMMARY",
        "upload-artifact",
    ] {
        assert!(workflow.contains(key), "the recipe has {key}");
    }
    let commands: Vec<String> = run_lines(&workflow)
        .into_iter()
        .filter(|l| l.starts_with("npx leakcheck"))
        .collect();
    assert_eq!(commands.len(), 2, "{commands:?}");
    let Some(project) = Project::install() else {
        return;
    };
    let work = project.root.as_path();
    std::fs::create_dir(work.join("release")).unwrap();
    let summary = work.join("summary.md");
    let port = free_port();
    for (index, line) in commands.iter().enumerate() {
        let line = line
            .replace("127.0.0.1:3000", &format!("127.0.0.1:{port}"))
            .replace("node server.mjs 3000", &demo_command(port).join(" "));
        let mut command = Command::new("bash");
        command
            .arg("-c")
            .arg(&line)
            .current_dir(work)
            .env("GITHUB_STEP_SUMMARY", &summary);
        let finished = finish(command);
        // The check finds the demo's /leak (exit 1 fails the job); the
        // comparison with an identical release finds no regression (exit 0).
        let expected = if index == 0 { 1 } else { 0 };
        assert_eq!(finished.code, expected, "{line}\n{}", finished.stderr);
        if index == 0 {
            assert!(Path::new(&work.join("leakcheck.html")).exists());
            std::fs::copy(
                work.join("leakcheck.json"),
                work.join("release/leakcheck.json"),
            )
            .unwrap();
        }
    }
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert!(
        markdown.contains("### leakcheck: 1 route keeps memory"),
        "{markdown}"
    );
    assert!(
        markdown.contains("#### Compared with `release/leakcheck.json`"),
        "{markdown}"
    );
    assert!(port_is_free(port));
}
