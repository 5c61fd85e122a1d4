//! The redacted evidence bundle (`--evidence DIR`) and `leakcheck redact`:
//! secrets a client sends (a bearer token, a session cookie, a card number
//! in a body) reach the target's heap, and none of them may leave through
//! any file of the bundle or the issue draft; the redacted snapshots stay
//! valid JSON and give `inspect` and `diff` the same holder and path.

use std::path::Path;

use crate::util::*;

/// Random-looking, as real secrets are (a name-like key would be kept).
const SECRETS: [&str; 3] = [
    "tok_4f9Xq2Lz8Wm1Rb7Kd3Vy",
    "ck9QwE3rT7yU1iO5pA2sD8fG",
    "pan_7H3jK9lQ2wE5rT8yU1iO",
];

fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

fn holds(path: &Path, secret: &str) -> bool {
    let bytes = std::fs::read(path).unwrap();
    bytes.windows(secret.len()).any(|w| w == secret.as_bytes())
}

/// `diff`'s first holders as (name, class, path), for comparing two pairs.
fn holders(before: &Path, after: &Path) -> Vec<(String, String, String)> {
    let finished = RunArgs::diff(before, after).run(&[]);
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    finished
        .diff_report()
        .holders
        .iter()
        .take(5)
        .map(|h| (h.name.clone(), h.class.clone(), h.path_text.clone()))
        .collect()
}

#[test]
fn no_planted_secret_leaves_through_the_bundle_and_the_holder_reads_the_same() {
    let out = tempfile::tempdir().unwrap();
    let (raw, bundle, drafts) = (
        out.path().join("raw"),
        out.path().join("bundle"),
        out.path().join("drafts"),
    );
    let port = free_port();
    let bearer = format!("Authorization: Bearer {}", SECRETS[0]);
    let cookie = format!("Cookie: sid={}", SECRETS[1]);
    let body = format!(r#"{{"card":"{}"}}"#, SECRETS[2]);
    let finished = RunArgs::new(port)
        .routes(&["/save"])
        .cycles(3)
        .requests("1500")
        .args(&["-m", "POST", "-H", &bearer, "-H", &cookie, "-b", &body])
        .args(&["--snapshots", raw.to_str().unwrap()])
        .args(&["--evidence", bundle.to_str().unwrap()])
        .args(&["--issue-draft", drafts.to_str().unwrap()])
        .run(&target_command("secrets-server.cjs", port));
    assert_eq!(finished.code, 1, "{}", finished.stderr);

    // The secrets did reach the heap: the unredacted pair holds each.
    let raw_files = files_under(&raw);
    assert_eq!(raw_files.len(), 2);
    for secret in SECRETS {
        assert!(
            raw_files.iter().any(|f| holds(f, secret)),
            "{secret} never reached the heap"
        );
    }
    let mut shared = files_under(&bundle);
    shared.extend(files_under(&drafts));
    assert_eq!(shared.len(), 6, "{shared:?}");
    for file in &shared {
        for secret in SECRETS {
            assert!(!holds(file, secret), "{secret} is in {}", file.display());
        }
    }

    let snapshot = |dir: &Path, which: &str| dir.join(format!("save-{which}.heapsnapshot"));
    let (before, after) = (snapshot(&bundle, "before"), snapshot(&bundle, "after"));
    // Still one valid JSON document, as DevTools reads it.
    let parsed = std::process::Command::new(node())
        .args([
            "-e",
            "JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'))",
        ])
        .arg(&after)
        .status()
        .unwrap();
    assert!(parsed.success(), "the redacted snapshot is not valid JSON");
    assert_eq!(
        holders(&before, &after),
        holders(&snapshot(&raw, "before"), &snapshot(&raw, "after"))
    );
    let summary = |path: &Path| {
        let finished = leakcheck()
            .args(["inspect", "--json", "-"])
            .arg(path)
            .output()
            .unwrap();
        let mut report: serde_json::Value = serde_json::from_slice(&finished.stdout).unwrap();
        report["totals"]["file_bytes"] = serde_json::Value::Null;
        report
    };
    assert_eq!(summary(&after), summary(&snapshot(&raw, "after")));

    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("manifest.json")).unwrap())
            .unwrap();
    let listed = manifest["files"].as_array().unwrap();
    assert_eq!(listed.len(), 4, "{manifest}");
    let draft = std::fs::read_to_string(drafts.join("issue-save.md")).unwrap();
    assert!(draft.contains("**Do not file this upstream**"), "{draft}");
    assert!(draft.contains("-H 'Authorization: ***'"), "{draft}");
}
