//! Known leaks: the catalogue in `known-leaks/` (one YAML file per entry,
//! reviewed like code) matched against a finished diagnosis. A match tells
//! the team whether the leak is theirs to fix, a bug fixed upstream (and in
//! which version), or a known way of misusing a package.
//!
//! An entry names a package (`node` for Node itself), the version ranges
//! it affects, and the evidence that recognises it: steps of the holder's
//! retainer path, class names, and storing frames. `recognise.rs` holds
//! the rule; this file the entries and their format.

mod recognise;

pub use recognise::recognise_all;

use serde::Deserialize;

/// `(id, text)` of `known-leaks/<id>.yaml`.
macro_rules! entry {
    ($id:literal) => {
        (
            $id,
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/known-leaks/",
                $id,
                ".yaml"
            )),
        )
    };
}

/// Every entry, compiled into the binary. Adding one: write
/// `known-leaks/<id>.yaml`, list it here, and add its test in
/// `tests/it/known.rs` (the book: docs/src/known-leaks.md, "Adding a known leak").
const ENTRIES: [(&str, &str); 17] = [
    entry!("node-timer-to-primitive"),
    entry!("debug-instances"),
    entry!("winston-handle-exceptions"),
    entry!("axios-interceptor-per-request"),
    entry!("jsdom-window-not-closed"),
    entry!("express-session-memory-store"),
    entry!("prom-client-unbounded-labels"),
    entry!("dataloader-shared-cache"),
    entry!("ajv-compile-per-call"),
    entry!("express-middleware-per-request"),
    entry!("koa-middleware-per-request"),
    entry!("rxjs-subscribe-without-unsubscribe"),
    entry!("graphql-tag-dynamic-query"),
    entry!("marked-use-per-render"),
    entry!("nextjs-sandbox-timeouts"),
    entry!("winston-logger-per-request"),
    entry!("socketio-namespace-per-request"),
];

/// One catalogue entry, as its file spells it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub id: String,
    pub title: String,
    pub upstream: String,
    pub url: String,
    pub kind: EntryKind,
    /// `node`, or an npm package name.
    pub package: String,
    /// Version ranges in Cargo's comparator syntax (`>=3.0.0, <4.3.0`);
    /// none: every version (a misuse is one whatever the version).
    #[serde(default)]
    pub affected: Vec<String>,
    #[serde(default)]
    pub fixed_in: Vec<String>,
    #[serde(rename = "match")]
    pub evidence: Evidence,
    pub fix: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    Bug,
    Misuse,
}

/// What recognises the leak; every kind given must hold.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    /// Names that must all appear on the holder's retainer path (an edge's
    /// name or a node's), or be the holder's own name.
    #[serde(default)]
    pub path: Vec<String>,
    /// At least one of these classes holds or grew (the holder's class, a
    /// node on its path, a grown class).
    #[serde(default)]
    pub classes: Vec<String>,
    /// At least one allocation site's script contains one of these
    /// (`winston/lib/winston/`) or its function is named so.
    #[serde(default)]
    pub frames: Vec<String>,
}

impl Evidence {
    fn is_empty(&self) -> bool {
        self.path.is_empty() && self.classes.is_empty() && self.frames.is_empty()
    }
}

/// The catalogue, parsed. Entries are checked by this crate's tests, so a
/// malformed one is a build that does not ship; here it is skipped.
pub fn catalogue() -> Vec<Entry> {
    ENTRIES
        .iter()
        .filter_map(|(_, text)| parse_entry(text).ok())
        .collect()
}

fn parse_entry(text: &str) -> anyhow::Result<Entry> {
    let entry: Entry = serde_saphyr::from_str(text)?;
    if entry.evidence.is_empty() {
        anyhow::bail!("`match` names no path, class or frame: it would match every leak");
    }
    for range in &entry.affected {
        semver::VersionReq::parse(range)
            .map_err(|e| anyhow::anyhow!("affected range `{range}`: {e}"))?;
    }
    for version in &entry.fixed_in {
        semver::Version::parse(version)
            .map_err(|e| anyhow::anyhow!("fixed_in `{version}`: {e}"))?;
    }
    if entry.kind == EntryKind::Bug && entry.fixed_in.is_empty() && !entry.affected.is_empty() {
        anyhow::bail!("a bug with affected ranges names the versions that fix it (`fixed_in`)");
    }
    Ok(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_parses_and_is_named_after_its_file() {
        for (id, text) in ENTRIES {
            let entry = parse_entry(text).unwrap_or_else(|e| panic!("known-leaks/{id}.yaml: {e}"));
            assert_eq!(
                entry.id, id,
                "known-leaks/{id}.yaml names itself {}",
                entry.id
            );
        }
        assert_eq!(catalogue().len(), ENTRIES.len());
    }

    #[test]
    fn every_file_in_the_folder_is_listed() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("known-leaks");
        for file in std::fs::read_dir(dir).unwrap() {
            let name = file.unwrap().file_name().to_string_lossy().into_owned();
            let id = name
                .strip_suffix(".yaml")
                .expect("only .yaml files in known-leaks/");
            assert!(
                ENTRIES.iter().any(|(listed, _)| *listed == id),
                "known-leaks/{name} is not listed in src/known/mod.rs ENTRIES"
            );
        }
    }

    #[test]
    fn an_entry_that_would_match_everything_is_refused() {
        let text =
            "id: x\ntitle: t\nupstream: u\nurl: u\nkind: misuse\npackage: p\nmatch: {}\nfix: f\n";
        let error = parse_entry(text).unwrap_err().to_string();
        assert!(error.contains("would match every leak"), "{error}");
        let unfixed = "id: x\ntitle: t\nupstream: u\nurl: u\nkind: bug\npackage: p\n\
                       affected: ['<2.0.0']\nmatch: {path: [a]}\nfix: f\n";
        assert!(parse_entry(unfixed).is_err());
    }
}
