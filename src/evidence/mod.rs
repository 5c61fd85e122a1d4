//! `--evidence DIR`: what maintainers ask for ("heap snapshots taken after
//! a forced GC, and a reproduction") in a form that can be attached to a
//! public issue. The two diagnosis snapshots of each diagnosed route are
//! rewritten by the engine with every string value replaced by its length
//! and a hash (`snapshot::Redactor`); the JSON and HTML reports go beside
//! them with the target's command line redacted; `manifest.json` lists
//! every file and says what was and was not redacted.
//!
//! The unredacted snapshots are written where the diagnosis puts them
//! (`--snapshots DIR`, or a private folder of the system's temp directory,
//! `raw_snapshots_dir`); the latter is emptied once the bundle is written,
//! so nothing unredacted is left behind or inside the bundle.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;

use crate::model::RunResult;
use crate::report::Exporter;
use crate::snapshot::{Redacted, Redactor};

/// Where the diagnosis writes its snapshots when only `--evidence` asked
/// for them: private to this process.
pub fn raw_snapshots_dir() -> PathBuf {
    std::env::temp_dir().join(format!("leakcheck-evidence-{}", std::process::id()))
}

#[derive(Debug, Serialize)]
struct Manifest {
    leakcheck_version: String,
    created_at_unix_s: u64,
    /// How each snapshot was rewritten, and what was left as it was.
    redaction: &'static str,
    not_redacted: &'static str,
    files: Vec<BundleFile>,
}

#[derive(Debug, Serialize)]
struct BundleFile {
    name: String,
    bytes: u64,
    /// For a snapshot: its route and which of the pair it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    snapshot_of: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    strings: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    strings_kept: Option<u64>,
}

const REDACTION: &str = "Every string value in the heap snapshots is replaced by \
    `<redacted N chars #hash>` (its length in characters and a 64-bit SipHash keyed with a \
    random key that is not kept: equal strings read the same within this bundle, and a \
    guess cannot be checked). So are property keys that look like data (random characters, \
    URLs, anything with spaces). The target's command line in the reports has secret-looking \
    values replaced by ***.";
const NOT_REDACTED: &str = "Names of classes, functions, variables and properties; numbers; \
    object sizes and the shape of the heap graph; the routes' paths as given to leakcheck; \
    source lines quoted in the reports (the app's and its dependencies' code).";

/// Writes the bundle for `result` into `dir`; returns what it holds, for
/// the progress line. The caller forgets the raw snapshots afterwards,
/// whether or not this succeeded (`forget_raw_snapshots`).
pub fn write(result: &RunResult, dir: &Path) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--evidence {} cannot be created", dir.display()))?;
    let redactor = Redactor::default();
    let mut bundled = result.clone();
    let mut files = Vec::new();
    for route in &mut bundled.routes {
        let Some(diagnosis) = route.diagnosis.as_mut() else {
            continue;
        };
        let label = crate::private_file::file_label(&route.route);
        let mut names = Vec::new();
        for (which, raw) in ["before", "after"].iter().zip(&diagnosis.snapshot_files) {
            let name = format!("{label}-{which}.heapsnapshot");
            let done = redactor
                .redact(Path::new(raw), &dir.join(&name))
                .with_context(|| format!("redacting {raw}"))?;
            files.push(snapshot_file(&name, &route.route, which, done));
            names.push(name);
        }
        diagnosis.snapshot_files = names;
    }
    bundled.target.command = crate::redact::arguments(&bundled.target.command);
    let reports: [(&str, &dyn Exporter); 2] = [
        ("result.json", &crate::report::JsonExporter),
        ("report.html", &crate::report::HtmlExporter),
    ];
    for (name, exporter) in reports {
        let text = exporter.render(&bundled)?;
        std::fs::write(dir.join(name), &text)?;
        files.push(plain_file(name, text.len() as u64));
    }
    let manifest = Manifest {
        leakcheck_version: env!("CARGO_PKG_VERSION").to_string(),
        created_at_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        redaction: REDACTION,
        not_redacted: NOT_REDACTED,
        files,
    };
    std::fs::write(
        dir.join("manifest.json"),
        crate::report::pretty_json(&manifest)?,
    )?;
    Ok(manifest.files.iter().map(|f| f.name.clone()).collect())
}

fn snapshot_file(name: &str, route: &str, which: &str, done: Redacted) -> BundleFile {
    BundleFile {
        name: name.to_string(),
        bytes: done.bytes_out,
        snapshot_of: Some(format!("{route} ({which} the diagnosis cycle)")),
        strings: Some(done.strings),
        strings_kept: Some(done.kept),
    }
}

fn plain_file(name: &str, bytes: u64) -> BundleFile {
    BundleFile {
        name: name.to_string(),
        bytes,
        snapshot_of: None,
        strings: None,
        strings_kept: None,
    }
}

/// Removes the unredacted snapshots written only for the bundle.
pub fn forget_raw_snapshots(result: &RunResult) {
    let raw = raw_snapshots_dir();
    for route in &result.routes {
        for file in route.diagnosis.iter().flat_map(|d| &d.snapshot_files) {
            if Path::new(file).starts_with(&raw) {
                let _ = std::fs::remove_file(file);
            }
        }
    }
    let _ = std::fs::remove_dir(&raw);
}
