//! Issue drafts: for each diagnosed leak, the report a maintainer asks for,
//! in Markdown, ready to review and file: versions (the package, Node, the
//! OS), what was run and the leakcheck command that reproduces the
//! measurement, the bytes kept per unit with the readings, the retainer
//! path, the line that stores it, and the request or action that leaks.
//!
//! Whose leak it is decides the draft's first words: a dependency's or
//! Node's leak is addressed to its maintainers (with the known issue, when
//! the catalogue recognised one); the app's own leak says not to file it.
//! `--issue-draft DIR` writes one per diagnosed route; without it, a draft
//! is written beside `--html` when the leak is not the app's.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::model::{Diagnosis, Owner, RouteResult, RunResult};

/// One draft: the route, whose leak it is, and the Markdown.
pub struct Draft {
    pub route: String,
    /// The package (`node` for Node itself); `None` when the app holds it.
    pub upstream: Option<String>,
    pub file_name: String,
    pub text: String,
}

/// Drafts for every route whose leak was diagnosed.
pub fn drafts(result: &RunResult) -> Vec<Draft> {
    result
        .routes
        .iter()
        .filter(|r| r.verdict.as_ref().is_some_and(|v| v.kind.is_leak()))
        .filter_map(|route| {
            let diagnosis = route.diagnosis.as_ref()?;
            let owner = leak_owner(diagnosis);
            let upstream = match &owner {
                Some(Owner::Dependency { name, .. }) => Some(name.clone()),
                Some(Owner::Node) => Some("node".to_string()),
                _ => None,
            };
            Some(Draft {
                route: route.route.clone(),
                upstream,
                file_name: format!("issue-{}.md", crate::private_file::file_label(&route.route)),
                text: render(result, route, diagnosis, owner.as_ref()),
            })
        })
        .collect()
}

/// Writes the drafts where asked: all of them into `--issue-draft DIR`, or
/// those addressed upstream beside `--html FILE`. Returns the paths.
pub fn write(
    result: &RunResult,
    dir: Option<&Path>,
    html: Option<&Path>,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for draft in drafts(result) {
        let path = match (dir, html) {
            (Some(dir), _) => dir.join(&draft.file_name),
            (None, Some(html)) if draft.upstream.is_some() => html.with_file_name(format!(
                "{}.{}",
                html.file_stem().unwrap_or_default().to_string_lossy(),
                draft.file_name
            )),
            _ => continue,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, &draft.text)?;
        written.push(path);
    }
    Ok(written)
}

/// Who holds the leak: the recognised package, else the holder's owner,
/// else the owner of the line that stores it.
fn leak_owner(diagnosis: &Diagnosis) -> Option<Owner> {
    if let Some(known) = &diagnosis.known_leak {
        return Some(match known.package.as_str() {
            "node" => Owner::Node,
            name => Owner::Dependency {
                name: name.to_string(),
                version: known.version.clone(),
            },
        });
    }
    let holder = diagnosis.holders.first();
    holder
        .and_then(|h| h.owner.clone())
        .or_else(|| diagnosis.storing_site().and_then(|s| s.owner.clone()))
}

fn render(
    result: &RunResult,
    route: &RouteResult,
    diagnosis: &Diagnosis,
    owner: Option<&Owner>,
) -> String {
    let unit = result.settings.unit.name();
    let verdict = route.verdict.as_ref();
    let figure = verdict.map_or(String::new(), |v| {
        super::series_view::figure_text(&v.figure)
    });
    let holder = diagnosis.holders.first();
    let holder_name = holder.map_or("an unnamed holder".to_string(), |h| format!("`{}`", h.name));
    let mut out = String::new();
    let whose = owner.map_or("the app".to_string(), Owner::describe);
    let _ = writeln!(
        out,
        "# Memory leak: {holder_name} keeps {figure} per {unit} ({whose})\n"
    );
    let _ = writeln!(out, "{}\n", addressed_to(owner, diagnosis));
    versions(&mut out, result, owner);
    let _ = writeln!(out, "## What was run\n");
    let request = match result.settings.method.as_str() {
        "page" => format!("the page action `{}`", route.route),
        method => format!("`{method} {}`", route.route),
    };
    let _ = writeln!(
        out,
        "{} against the target `{}`, with a full garbage collection forced through the \
         inspector after each cycle. The {unit} that leaks: {request}.\n",
        result.settings.schedule(),
        shell_line(&result.target.command)
    );
    if let Some(invocation) = &result.settings.invocation {
        let _ = writeln!(
            out,
            "To reproduce the measurement with leakcheck (secrets hidden as `***`):\n\n```sh\n{invocation}\n```\n"
        );
    }
    measurement(&mut out, route, verdict, unit);
    retainers(&mut out, diagnosis, owner);
    let _ = writeln!(
        out,
        "---\nDrafted by leakcheck {}. Heap snapshots can be attached without their data: run \
         again with `--evidence DIR` for a redacted bundle.",
        env!("CARGO_PKG_VERSION")
    );
    out
}

fn addressed_to(owner: Option<&Owner>, diagnosis: &Diagnosis) -> String {
    if let Some(known) = &diagnosis.known_leak {
        return format!(
            "This matches a known {}: [{}]({}) ({}). {}",
            if known.kind == "bug" { "bug" } else { "misuse" },
            known.upstream,
            known.url,
            known.title,
            if known.kind == "bug" {
                "Upgrading is the fix; file a new issue only if the fixed version still leaks."
            } else {
                "The package works as documented: change how it is used rather than filing."
            }
        );
    }
    match owner {
        Some(Owner::Dependency { name, .. }) => format!(
            "The retained objects are held inside the dependency `{name}`. Before filing, check \
             that the app does not hand it a new object per request that it is meant to reuse \
             or close (a listener, a client, a logger)."
        ),
        Some(Owner::Node) => "The retained objects are held inside Node's own JavaScript. \
            Before filing at nodejs/node, try the latest release of this Node line."
            .to_string(),
        _ => "**Do not file this upstream**: the holder is in the app's own code. Fix it there \
            (the storing line is below)."
            .to_string(),
    }
}

fn versions(out: &mut String, result: &RunResult, owner: Option<&Owner>) {
    let _ = writeln!(out, "## Versions\n");
    if let Some(Owner::Dependency { name, version }) = owner {
        let _ = writeln!(out, "- {name}: {}", version.as_deref().unwrap_or("unknown"));
    }
    let runtime = result.settings.runtime();
    let _ = writeln!(
        out,
        "- {runtime}: {}",
        result.target.node_version.as_deref().unwrap_or("unknown")
    );
    let _ = writeln!(out, "- OS: {}", os_description());
    let _ = writeln!(out, "- leakcheck: {}\n", result.leakcheck_version);
}

fn measurement(
    out: &mut String,
    route: &RouteResult,
    verdict: Option<&crate::model::Verdict>,
    unit: &str,
) {
    let _ = writeln!(out, "## Measurement\n");
    if let Some(verdict) = verdict {
        let _ = writeln!(out, "{}\n", verdict.summary);
    }
    let _ = writeln!(
        out,
        "| cycle | {unit}s | heapUsed after GC | rss after GC |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|");
    if let Some(baseline) = &route.baseline {
        let _ = writeln!(
            out,
            "| baseline | 0 | {} | {} |",
            crate::units::mb(baseline.heap_used as f64),
            crate::units::mb(baseline.rss as f64)
        );
    }
    for cycle in &route.cycles {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            cycle.cycle,
            cycle.requests,
            crate::units::mb(cycle.after_gc.heap_used as f64),
            crate::units::mb(cycle.after_gc.rss as f64)
        );
    }
    out.push('\n');
}

fn retainers(out: &mut String, diagnosis: &Diagnosis, owner: Option<&Owner>) {
    let holder = diagnosis.holders.first();
    if let Some(holder) = holder {
        let _ = writeln!(
            out,
            "## Retainer path\n\n{} new `{}` objects ({}) are held by `{}`:\n\n```\n{}\n```\n",
            holder.objects,
            holder.class,
            crate::units::mb(holder.retained_bytes.max(holder.new_bytes) as f64),
            holder.name,
            holder.path_text
        );
    }
    stored_line(out, diagnosis, owner);
    if !diagnosis.allocation_sites.is_empty() {
        let _ = writeln!(out, "Allocation sites whose objects survived collection:\n");
        for site in diagnosis.allocation_sites.iter().take(5) {
            let owner = site
                .owner
                .as_ref()
                .map_or(String::new(), |o| format!(", {}", o.describe()));
            let _ = writeln!(
                out,
                "- `{}` at `{}:{}` ({} KB sampled{owner})",
                site.function,
                site.url,
                site.line,
                crate::units::kb(site.bytes)
            );
        }
        out.push('\n');
    }
}

/// The line that stores what grows: the one the diagnosis named, else the
/// busiest allocation site inside the package that holds the leak (a
/// dependency's store is rarely assigned under the holder's own name),
/// its text read from the file.
fn stored_line(out: &mut String, diagnosis: &Diagnosis, owner: Option<&Owner>) {
    let named = diagnosis.storing_site();
    let (site, line, text, how) = match named {
        Some(site) => (
            site,
            site.holder_line.unwrap_or(site.line),
            site.holder_line_text.clone(),
            "",
        ),
        None => {
            let Some(site) = diagnosis
                .allocation_sites
                .iter()
                .filter(|s| owner.is_some() && s.owner.as_ref() == owner)
                .max_by_key(|s| s.bytes)
            else {
                return;
            };
            let path = site.url.strip_prefix("file://").unwrap_or(&site.url);
            let text = std::fs::read_to_string(path).ok().and_then(|source| {
                let index = (site.line as usize).checked_sub(1)?;
                source.lines().nth(index).map(str::to_string)
            });
            (
                site,
                site.line,
                text,
                " (the function of the package that allocated most of what stays)",
            )
        }
    };
    let owner = site
        .owner
        .as_ref()
        .map_or(String::new(), |o| format!(" ({})", o.describe()));
    let _ = writeln!(
        out,
        "## Where it is stored\n\n`{}:{line}`{owner}{how}:\n\n```js\n{}\n```\n",
        site.url,
        text.as_deref().unwrap_or("").trim()
    );
}

/// The OS as /etc/os-release and the kernel name it (on the machine that
/// writes the draft, which is the one that measured but for `report`).
fn os_description() -> String {
    let pretty = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        });
    let kernel = crate::platform::procfs::kernel_release().unwrap_or_default();
    format!(
        "{}, Linux {kernel} ({})",
        pretty.unwrap_or_else(|| "Linux".into()),
        std::env::consts::ARCH
    )
}

/// Words joined for a shell: quoted when they hold anything but plain
/// characters.
pub fn shell_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,@%+".contains(&b));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
