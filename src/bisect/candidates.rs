//! The ordered candidates of a bisect, from the end that reads like the
//! start to the other: the commits between `--good` and `--bad` (first
//! parents, oldest first), or the published versions of a package or of
//! Node in a range (by semver, prereleases left out unless an end is one).

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

/// One commit or version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// A commit's full hash, or a version.
    pub id: String,
    /// A commit's subject, or the version.
    pub label: String,
}

/// The output of `git ARGS` in `repo`, or an error that names the command.
pub fn git(repo: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .current_dir(repo)
        .args(args)
        .output()
        .context("cannot run git: is it installed?")?;
    if !out.status.success() {
        bail!(
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

/// The commits from `good` to `bad`, both included, along `bad`'s first
/// parents.
pub fn commits(repo: &Path, good: &str, bad: &str) -> anyhow::Result<Vec<Candidate>> {
    let hash = |what: &str, rev: &str| {
        git(
            repo,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{commit}}"),
            ],
        )
        .with_context(|| {
            format!(
                "{what} {rev} is not a commit of the repository in {}",
                repo.display()
            )
        })
    };
    let good = hash("--good", good)?;
    let bad = hash("--bad", bad)?;
    if git(repo, &["merge-base", "--is-ancestor", &good, &bad]).is_err() {
        bail!("--good {good} is not an ancestor of --bad {bad}: give an older commit as --good");
    }
    let subject = |rev: &str| git(repo, &["log", "-1", "--format=%s", rev]);
    let mut out = vec![Candidate {
        label: subject(&good)?,
        id: good.clone(),
    }];
    let log = git(
        repo,
        &[
            "log",
            "--reverse",
            "--first-parent",
            "--ancestry-path",
            "--format=%H%x09%s",
            &format!("{good}..{bad}"),
        ],
    )?;
    for line in log.lines() {
        let (id, label) = line.split_once('\t').unwrap_or((line, ""));
        out.push(Candidate {
            id: id.to_string(),
            label: label.to_string(),
        });
    }
    if out.len() < 2 {
        bail!("--good and --bad name the same commit: there is nothing between them");
    }
    Ok(out)
}

/// Every published version of `name` from `from` to `to` (both included,
/// in semver order), as the registry the project in `app` uses lists them.
pub fn versions(app: &Path, name: &str, from: &str, to: &str) -> anyhow::Result<Vec<Candidate>> {
    let listed = published(app, name)?;
    in_range(&listed, from, to).with_context(|| format!("{name}'s published versions"))
}

/// `npm view NAME versions --json` in `app` (so its `.npmrc` applies).
pub fn published(app: &Path, name: &str) -> anyhow::Result<Vec<String>> {
    let out = Command::new("npm")
        .current_dir(app)
        .args(["view", name, "versions", "--json"])
        .output()
        .context("cannot run npm: is Node installed?")?;
    if !out.status.success() {
        bail!(
            "`npm view {name} versions` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let value: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("npm view did not answer JSON")?;
    Ok(match value {
        serde_json::Value::Array(all) => all
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        serde_json::Value::String(one) => vec![one],
        _ => Vec::new(),
    })
}

/// The versions of `listed` from `from` to `to`, sorted; prereleases only
/// when an end is one.
pub fn in_range(listed: &[String], from: &str, to: &str) -> anyhow::Result<Vec<Candidate>> {
    let parse = |v: &str| {
        semver::Version::parse(v.trim_start_matches('v'))
            .with_context(|| format!("{v:?} is not a version (MAJOR.MINOR.PATCH)"))
    };
    let (low, high) = (parse(from)?, parse(to)?);
    let (low, high) = if low <= high {
        (low, high)
    } else {
        (high, low)
    };
    let with_pre = !low.pre.is_empty() || !high.pre.is_empty();
    let mut found: Vec<semver::Version> = listed
        .iter()
        .filter_map(|v| semver::Version::parse(v).ok())
        .filter(|v| *v >= low && *v <= high && (with_pre || v.pre.is_empty()))
        .collect();
    found.sort();
    found.dedup();
    for end in [&low, &high] {
        if !found.contains(end) {
            bail!("{end} is not a published version");
        }
    }
    Ok(found
        .into_iter()
        .map(|v| Candidate {
            id: v.to_string(),
            label: v.to_string(),
        })
        .collect())
}

/// The version of `name` the app in `app` has installed.
pub fn installed_version(app: &Path, name: &str) -> Option<String> {
    let text =
        std::fs::read_to_string(app.join("node_modules").join(name).join("package.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["version"].as_str().map(str::to_string)
}

/// The first stable version of `to`'s major among `listed`: the default
/// start of a package's range.
pub fn first_of_major(listed: &[String], to: &str) -> Option<String> {
    let to = semver::Version::parse(to).ok()?;
    listed
        .iter()
        .filter_map(|v| semver::Version::parse(v).ok())
        .filter(|v| v.major == to.major && v.pre.is_empty() && *v <= to)
        .min()
        .map(|v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(all: &[&str]) -> Vec<String> {
        all.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_range_is_sorted_and_leaves_prereleases_out() {
        let all = listed(&["3.0.0", "2.6.9", "3.1.0-beta.1", "3.1.0", "4.0.0", "3.0.1"]);
        let ids: Vec<String> = in_range(&all, "2.6.9", "3.1.0")
            .unwrap()
            .into_iter()
            .map(|c| c.id)
            .collect();
        assert_eq!(ids, ["2.6.9", "3.0.0", "3.0.1", "3.1.0"]);
        let reversed: Vec<String> = in_range(&all, "3.1.0", "2.6.9")
            .unwrap()
            .into_iter()
            .map(|c| c.id)
            .collect();
        assert_eq!(reversed.len(), 4);
        let missing = in_range(&all, "2.6.9", "3.2.0").unwrap_err();
        assert!(
            missing
                .to_string()
                .contains("3.2.0 is not a published version"),
            "{missing}"
        );
        assert_eq!(first_of_major(&all, "3.1.0").as_deref(), Some("3.0.0"));
    }
}
