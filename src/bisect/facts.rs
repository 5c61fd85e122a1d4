//! What the answer says beyond its name: the leak as the first bad
//! candidate's check diagnosed it, what that commit changed (and which of
//! its files the diagnosis names), or where a version's changes are
//! described.

use std::path::Path;
use std::process::Command;

use super::candidates::git;
use crate::model::{BisectDiagnosis, BisectKind, CommitFacts, ReleaseFacts, RunResult};

/// The leaking route's holder, path and storing line.
pub fn diagnosis(result: &RunResult) -> Option<BisectDiagnosis> {
    let route = result
        .routes
        .iter()
        .find(|r| r.verdict.as_ref().is_some_and(|v| v.kind.is_leak()))?;
    let verdict = route.verdict.as_ref()?;
    // The step ran in a scratch worktree: its files are named as in the
    // repository.
    let relative = |text: &str| match result.target.cwd.as_deref() {
        Some(cwd) => text
            .replace(&format!("file://{cwd}/"), "")
            .replace(&format!("{cwd}/"), ""),
        None => text.to_string(),
    };
    let mut found = BisectDiagnosis {
        route: route.route.clone(),
        action: relative(&verdict.action),
        ..BisectDiagnosis::default()
    };
    if let Some(diagnosis) = &route.diagnosis {
        if let Some(holder) = diagnosis.holders.first() {
            found.holder = Some(holder.name.clone());
            found.path = Some(relative(&path_text(holder)));
        }
        let stored = crate::verdict::action::stored_at(diagnosis);
        found.stored_at = stored
            .strip_prefix(" It is stored at ")
            .map(relative)
            .filter(|s| !s.is_empty());
    }
    Some(found)
}

/// The retainer path as the reports print it.
fn path_text(holder: &crate::model::Holder) -> String {
    if !holder.path_text.is_empty() {
        return holder.path_text.clone();
    }
    holder
        .path
        .iter()
        .map(|step| format!("[{}] {}", step.edge_name, step.node_name))
        .collect::<Vec<_>>()
        .join(" → ")
}

/// The first bad commit: its author, date, diff stat against the last
/// clean commit, and the files it touched that the diagnosis names.
pub fn commit(
    repo: &Path,
    before: &str,
    first: &str,
    diagnosis: Option<&BisectDiagnosis>,
) -> Option<CommitFacts> {
    let show = git(
        repo,
        &["show", "-s", "--format=%H%x09%s%x09%an%x09%aI", first],
    )
    .ok()?;
    let mut parts = show.splitn(4, '\t');
    let mut next = || parts.next().unwrap_or("").to_string();
    let (hash, subject, author, date) = (next(), next(), next(), next());
    let range = format!("{before}..{first}");
    let diff_stat = git(repo, &["diff", "--stat", &range]).unwrap_or_default();
    let touched = git(repo, &["diff", "--name-only", &range]).unwrap_or_default();
    let named = diagnosis
        .map(|d| {
            [
                d.path.as_deref(),
                d.stored_at.as_deref(),
                Some(d.action.as_str()),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("\n")
        })
        .unwrap_or_default();
    let touched_in_diagnosis = touched
        .lines()
        .filter(|file| {
            let name = Path::new(file)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or(file);
            named.contains(file) || named.contains(name)
        })
        .map(str::to_string)
        .collect();
    Some(CommitFacts {
        hash,
        subject,
        author,
        date,
        diff_stat,
        touched_in_diagnosis,
    })
}

/// Where a version's changes are described: the registry's page, and the
/// GitHub releases of the repository the registry names.
pub fn release(kind: BisectKind, subject: &str, version: &str) -> ReleaseFacts {
    if kind == BisectKind::Node {
        return ReleaseFacts {
            version: version.to_string(),
            registry_url: format!("https://nodejs.org/en/blog/release/v{version}"),
            changelog_url: Some(format!(
                "https://github.com/nodejs/node/releases/tag/v{version}"
            )),
        };
    }
    let repository = Command::new("npm")
        .args(["view", &format!("{subject}@{version}"), "repository.url"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    ReleaseFacts {
        version: version.to_string(),
        registry_url: format!("https://www.npmjs.com/package/{subject}/v/{version}"),
        changelog_url: repository.as_deref().and_then(github_releases),
    }
}

/// `git+https://github.com/debug-js/debug.git` →
/// `https://github.com/debug-js/debug/releases`.
fn github_releases(url: &str) -> Option<String> {
    let at = url.find("github.com")?;
    let path = url[at + "github.com".len()..].trim_start_matches([':', '/']);
    let path = path.trim_end_matches('/').trim_end_matches(".git");
    let mut segments = path.split('/');
    let (owner, repo) = (segments.next()?, segments.next()?);
    Some(format!("https://github.com/{owner}/{repo}/releases"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_github_repository_gives_its_releases() {
        assert_eq!(
            github_releases("git+https://github.com/debug-js/debug.git").as_deref(),
            Some("https://github.com/debug-js/debug/releases")
        );
        assert_eq!(
            github_releases("git@github.com:owner/repo.git").as_deref(),
            Some("https://github.com/owner/repo/releases")
        );
        assert_eq!(github_releases("https://gitlab.com/a/b"), None);
    }
}
