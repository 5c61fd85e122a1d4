//! The rule that recognises a catalogue entry in a diagnosis.
//!
//! 1. The entry's package is involved: for `node`, the target runs Node
//!    (not a browser page); for an npm package, the package owns the
//!    holder or an allocation site, or it is installed in the target's
//!    working directory.
//! 2. Its evidence holds: every path name is on the holder's path, one of
//!    its classes holds or grew, one of its frames stored what grew.
//! 3. The version the target runs is in an affected range. A version the
//!    entry calls fixed is not claimed, however well the rest matches; an
//!    unreadable version is claimed with a word to check it.

use std::path::Path;

use super::{Entry, EntryKind, catalogue};
use crate::model::{Diagnosis, KnownLeak, Owner, RunResult};

/// What the rule needs to know of the target besides its diagnosis.
struct TargetFacts<'a> {
    /// `process.version` (`v20.15.0`); absent for a browser page.
    node_version: Option<&'a str>,
    /// The target's working directory, where its `node_modules` are.
    cwd: Option<&'a Path>,
}

/// Marks every diagnosed route of a result that matches an entry, and
/// puts the match first in its verdict's action. Safe to run again on a
/// result read back (`leakcheck report`): a marked route is left alone.
pub fn recognise_all(result: &mut RunResult) {
    let browser = result.settings.runtime() == "browser";
    let node_version = result.target.node_version.clone().filter(|_| !browser);
    let cwd = result.target.cwd.clone();
    let facts = TargetFacts {
        node_version: node_version.as_deref(),
        cwd: cwd.as_deref().map(Path::new),
    };
    let entries = catalogue();
    for route in &mut result.routes {
        let Some(diagnosis) = route.diagnosis.as_mut() else {
            continue;
        };
        if diagnosis.known_leak.is_some() {
            continue;
        }
        let Some(known) = recognise_among(&entries, diagnosis, &facts) else {
            continue;
        };
        // The holder's generic advice ("bound it") is wrong for code the
        // team does not own; the holder is still named, for the search.
        if let Some(verdict) = route.verdict.as_mut() {
            let held = diagnosis
                .holders
                .first()
                .map(|h| {
                    format!(
                        " Held by `{}`{}.",
                        h.name,
                        crate::verdict::action::place_of(h)
                    )
                })
                .unwrap_or_default();
            // A misuse is fixed in the team's code: say where it is.
            let yours = crate::verdict::action::in_your_code(diagnosis);
            verdict.action = format!("{}{held}{yours}", sentence(&known));
        }
        diagnosis.known_leak = Some(known);
    }
}

fn recognise_among(
    entries: &[Entry],
    diagnosis: &Diagnosis,
    facts: &TargetFacts,
) -> Option<KnownLeak> {
    entries.iter().find_map(|entry| {
        let version = involved(entry, diagnosis, facts)?;
        if !evidence_holds(entry, diagnosis) || !affects(entry, version.as_deref()) {
            return None;
        }
        Some(KnownLeak {
            id: entry.id.clone(),
            title: entry.title.clone(),
            upstream: entry.upstream.clone(),
            url: entry.url.clone(),
            kind: match entry.kind {
                EntryKind::Bug => "bug",
                EntryKind::Misuse => "misuse",
            }
            .into(),
            package: entry.package.clone(),
            version,
            fixed_in: entry.fixed_in.clone(),
            fix: entry.fix.clone(),
        })
    })
}

/// `Some(version)` when the entry's package takes part in the target (the
/// version `None` when it cannot be read); `None` when it does not.
fn involved(entry: &Entry, diagnosis: &Diagnosis, facts: &TargetFacts) -> Option<Option<String>> {
    if entry.package == "node" {
        let version = facts.node_version?;
        return Some(Some(version.trim_start_matches('v').to_string()));
    }
    let owners = diagnosis
        .holders
        .iter()
        .filter_map(|h| h.owner.as_ref())
        .chain(
            diagnosis
                .allocation_sites
                .iter()
                .filter_map(|s| s.owner.as_ref()),
        );
    let mut seen = false;
    for owner in owners {
        if let Owner::Dependency { name, version } = owner
            && *name == entry.package
        {
            seen = true;
            if version.is_some() {
                return Some(version.clone());
            }
        }
    }
    // Node resolves a package from the requiring file's folder up: the
    // app's scripts first, then the working directory.
    let app_scripts = diagnosis
        .holders
        .iter()
        .filter(|h| h.owner == Some(Owner::App))
        .filter_map(|h| h.script.as_deref())
        .chain(
            diagnosis
                .allocation_sites
                .iter()
                .filter(|s| s.owner == Some(Owner::App))
                .map(|s| s.url.as_str()),
        )
        .filter_map(|url| Path::new(url.strip_prefix("file://").unwrap_or(url)).parent());
    let installed = app_scripts
        .chain(facts.cwd)
        .find_map(|dir| installed_version(dir, &entry.package));
    match installed {
        Some(version) => Some(Some(version)),
        None => seen.then_some(None),
    }
}

/// The version of `package` as Node would resolve it from `dir`: the
/// nearest `node_modules/<package>/package.json` up the tree.
fn installed_version(dir: &Path, package: &str) -> Option<String> {
    dir.ancestors().find_map(|at| {
        crate::diagnosis::attribute::read_version(&at.join("node_modules").join(package))
    })
}

fn evidence_holds(entry: &Entry, diagnosis: &Diagnosis) -> bool {
    let evidence = &entry.evidence;
    let on_path = |name: &str| {
        diagnosis.holders.iter().any(|h| {
            h.name == name
                || h.name.split('.').any(|part| part == name)
                || h.path
                    .iter()
                    .any(|step| step.edge_name == name || step.node_name == name)
        })
    };
    let path = evidence.path.iter().all(|name| on_path(name));
    let classes = evidence.classes.is_empty()
        || evidence.classes.iter().any(|class| {
            on_path(class)
                || diagnosis
                    .holders
                    .iter()
                    .any(|h| h.class == *class || h.holder_class == *class)
                || diagnosis
                    .classes
                    .iter()
                    .any(|c| c.class == *class && c.delta_count > 0)
        });
    let frames = evidence.frames.is_empty()
        || evidence.frames.iter().any(|frame| {
            diagnosis
                .allocation_sites
                .iter()
                .any(|s| s.url.contains(frame.as_str()) || s.function == *frame)
        });
    path && classes && frames
}

/// Whether `version` is in one of the entry's affected ranges; an entry
/// without ranges affects every version, and an unknown version is given
/// the benefit of the doubt (the sentence asks to check it).
fn affects(entry: &Entry, version: Option<&str>) -> bool {
    if entry.affected.is_empty() {
        return true;
    }
    let Some(version) = version.and_then(|v| semver::Version::parse(v).ok()) else {
        return true;
    };
    entry
        .affected
        .iter()
        .filter_map(|r| semver::VersionReq::parse(r).ok())
        .any(|range| range.matches(&version))
}

/// The first sentence of the verdict's action for a recognised leak.
fn sentence(known: &KnownLeak) -> String {
    let who = match known.package.as_str() {
        "node" => "Node".to_string(),
        name => name.to_string(),
    };
    if known.kind == "misuse" {
        return format!(
            "Known misuse of {who} ({}): {}. Fix: {}.",
            known.upstream, known.title, known.fix
        );
    }
    let fixed = fixed_for(&known.fixed_in, known.version.as_deref());
    let runs = match &known.version {
        Some(version) => format!("this target runs {version}: upgrade {who}"),
        None => format!("check the version of {who} this target runs"),
    };
    format!(
        "Known leak: {}, fixed in {who} {fixed}; {runs}. Until then: {}.",
        known.upstream, known.fix
    )
}

/// The fixed release to name: the first above `version` on its own major
/// line, else the first above it, else all of them.
fn fixed_for(fixed_in: &[String], version: Option<&str>) -> String {
    let parse = |v: &str| semver::Version::parse(v.trim_start_matches('v')).ok();
    let mut fixed: Vec<semver::Version> = fixed_in.iter().filter_map(|v| parse(v)).collect();
    fixed.sort();
    if let Some(current) = version.and_then(parse) {
        let above = |f: &&semver::Version| **f > current;
        if let Some(same_line) = fixed
            .iter()
            .filter(above)
            .find(|f| f.major == current.major)
        {
            return same_line.to_string();
        }
        if let Some(next) = fixed.iter().find(above) {
            return next.to_string();
        }
    }
    let all: Vec<String> = fixed.iter().map(ToString::to_string).collect();
    all.join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recognise(diagnosis: &Diagnosis, facts: &TargetFacts) -> Option<KnownLeak> {
        recognise_among(&catalogue(), diagnosis, facts)
    }
    use crate::model::{AllocationSite, Holder, PathStep};

    fn step(edge: &str, node: &str) -> PathStep {
        PathStep {
            edge_type: "property".into(),
            edge_name: edge.into(),
            node_type: "object".into(),
            node_name: node.into(),
            node_id: 1,
        }
    }

    fn timers_diagnosis() -> Diagnosis {
        Diagnosis {
            holders: vec![Holder {
                name: "knownTimersById".into(),
                owner: Some(Owner::Node),
                path: vec![
                    step("setInterval", "setInterval"),
                    step("knownTimersById", "Object"),
                ],
                ..Holder::default()
            }],
            ..Diagnosis::default()
        }
    }

    fn on(version: &str) -> TargetFacts<'_> {
        TargetFacts {
            node_version: Some(version),
            cwd: None,
        }
    }

    #[test]
    fn an_affected_node_is_named_with_the_fix_on_its_own_line() {
        let known = recognise(&timers_diagnosis(), &on("v20.15.0")).expect("matched");
        assert_eq!(known.upstream, "nodejs/node#53335");
        let text = sentence(&known);
        assert!(
            text.contains("fixed in Node 20.16.0; this target runs 20.15.0: upgrade Node"),
            "{text}"
        );
        let on_22 = sentence(&recognise(&timers_diagnosis(), &on("v22.3.0")).unwrap());
        assert!(on_22.contains("fixed in Node 22.4.0;"), "{on_22}");
    }

    #[test]
    fn a_fixed_version_is_not_claimed() {
        for fixed in ["v20.16.0", "v22.4.0", "v24.1.0", "v26.0.0"] {
            assert_eq!(recognise(&timers_diagnosis(), &on(fixed)), None, "{fixed}");
        }
        let page = TargetFacts {
            node_version: None,
            cwd: None,
        };
        assert_eq!(recognise(&timers_diagnosis(), &page), None);
    }

    #[test]
    fn every_path_name_must_be_on_the_path() {
        let diagnosis = Diagnosis {
            holders: vec![Holder {
                name: "instances".into(),
                path: vec![step("exports", "createDebug"), step("instances", "Array")],
                ..Holder::default()
            }],
            allocation_sites: vec![AllocationSite {
                url: "/srv/node_modules/debug/src/common.js".into(),
                owner: Some(Owner::Dependency {
                    name: "debug".into(),
                    version: Some("4.1.1".into()),
                }),
                ..AllocationSite::default()
            }],
            ..Diagnosis::default()
        };
        let facts = TargetFacts {
            node_version: Some("v24.0.0"),
            cwd: None,
        };
        let known = recognise(&diagnosis, &facts).expect("debug 4.1.1 matched");
        assert_eq!(known.id, "debug-instances");
        assert!(sentence(&known).contains("fixed in debug 4.3.0; this target runs 4.1.1"));
        let mut other_path = diagnosis.clone();
        other_path.holders[0].path.remove(0);
        assert_eq!(recognise(&other_path, &facts), None);
    }
}
