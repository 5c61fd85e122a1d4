//! Where a report goes: a file, or standard output for `-`. The CLI turns
//! its text into an `OutputTarget` once; nothing below compares with "-".
//!
//! Standard output may be a pipe whose reader has gone (`… | head -1`):
//! writes then fail with `BrokenPipe`, which `lib::run` takes as a quiet
//! end, as ripgrep does, rather than a crash.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

/// Where a run's reports go, and the release result they are compared
/// with, as plain values (the CLI fills it).
#[derive(Debug, Clone, Default)]
pub struct OutputProps {
    pub json: Option<OutputTarget>,
    pub html: Option<OutputTarget>,
    pub markdown: Option<OutputTarget>,
    pub baseline: Option<String>,
    /// A fraction (0.2 for 20 %).
    pub tolerance: f64,
    /// `--issue-draft DIR`.
    pub issue_draft: Option<PathBuf>,
    /// `--evidence DIR`.
    pub evidence: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputTarget {
    Stdout,
    File(PathBuf),
}

impl OutputTarget {
    /// `-` is standard output; anything else a file path. Used as clap's
    /// value parser, so it never fails.
    pub fn parse(text: &str) -> Result<OutputTarget, std::convert::Infallible> {
        Ok(if text == "-" {
            OutputTarget::Stdout
        } else {
            OutputTarget::File(PathBuf::from(text))
        })
    }

    pub fn is_stdout(&self) -> bool {
        *self == OutputTarget::Stdout
    }

    /// Checks, before a run, that `write` will succeed at its end: a file
    /// that can be created or appended to (a file created here for the
    /// check is removed again), not a directory, in a directory that exists.
    pub fn check_writable(&self, flag: &str) -> anyhow::Result<()> {
        let OutputTarget::File(path) = self else {
            return Ok(());
        };
        if path.is_dir() {
            anyhow::bail!(
                "{flag} {} is a directory: give a file name in it",
                path.display()
            );
        }
        let existed = path.exists();
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .with_context(|| {
                format!(
                    "{flag} {} cannot be written; check the directory exists and is writable \
                     (checked before the run, so no measurement is lost)",
                    path.display()
                )
            })?;
        if !existed {
            let _ = std::fs::remove_file(path);
        }
        Ok(())
    }

    /// Writes `text` whole.
    pub fn write(&self, text: &str) -> anyhow::Result<()> {
        match self {
            OutputTarget::Stdout => to_stdout(text),
            OutputTarget::File(path) => std::fs::write(path, text).with_context(|| {
                format!(
                    "cannot write {}; check the directory exists",
                    path.display()
                )
            }),
        }
    }
}

impl std::fmt::Display for OutputTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OutputTarget::Stdout => f.write_str("standard output"),
            OutputTarget::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// Writes to standard output and flushes; a closed pipe comes back as an
/// error (`print!` would panic).
pub fn to_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Writes to standard error, ignoring a closed stream: progress and
/// summaries there are for a person, and losing them must not stop a run.
pub fn to_stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Whether an error is standard output's reader going away.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
