//! Where a `--load-cmd` cycle's output goes: a file of its own in a
//! private folder (mode 0700, a random name: never a predictable
//! `/tmp/leakcheck-PID` another user could create first), opened with
//! `O_NOFOLLOW` and `O_EXCL` (a planted symlink is refused, not followed),
//! capped at `MAX_LOG_BYTES`, and its last lines kept for the report. The
//! folder is removed after the run unless `--driver-logs DIR` names one
//! to keep.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// The most a driver's log keeps: a k6 or autocannon summary is a few KB;
/// a driver that prints per request would otherwise fill the disk.
pub const MAX_LOG_BYTES: u64 = 4 * 1024 * 1024;
/// Lines of the end of the output kept in the report.
pub const TAIL_LINES: usize = 20;

/// The folder of the run's driver logs.
#[derive(Debug, Clone)]
pub enum LogDir {
    /// `--driver-logs DIR`: kept after the run.
    Kept(PathBuf),
    /// A private temporary folder, removed when the last holder drops it.
    Temporary(Arc<tempfile::TempDir>),
}

impl LogDir {
    /// A fresh private folder in the system's temporary directory.
    pub fn temporary() -> std::io::Result<LogDir> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix("leakcheck-load-cmd-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?;
        Ok(LogDir::Temporary(Arc::new(dir)))
    }

    pub fn path(&self) -> &Path {
        match self {
            LogDir::Kept(path) => path,
            LogDir::Temporary(dir) => dir.path(),
        }
    }

    pub fn is_kept(&self) -> bool {
        matches!(self, LogDir::Kept(_))
    }
}

/// One cycle's log being written.
#[derive(Clone)]
pub struct DriverLog {
    inner: Arc<Mutex<Capped>>,
}

struct Capped {
    file: std::fs::File,
    written: u64,
    dropped: u64,
    tail: std::collections::VecDeque<String>,
}

impl DriverLog {
    /// Creates `path`, refusing one that exists or is a symlink.
    pub fn create(path: &Path) -> std::io::Result<DriverLog> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)?;
        Ok(DriverLog {
            inner: Arc::new(Mutex::new(Capped {
                file,
                written: 0,
                dropped: 0,
                tail: std::collections::VecDeque::with_capacity(TAIL_LINES),
            })),
        })
    }

    /// Copies a stream of the driver (stdout or stderr) into the log, line
    /// by line, until it ends.
    pub async fn copy(self, stream: impl AsyncRead + Unpin) {
        let mut lines = BufReader::new(stream).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            self.line(&line);
        }
    }

    fn line(&self, line: &str) {
        let mut log = self.inner.lock().expect("log lock");
        let bytes = line.len() as u64 + 1;
        if log.written + bytes <= MAX_LOG_BYTES {
            // A full disk loses log lines, never the run.
            let _ = writeln!(log.file, "{line}");
            log.written += bytes;
        } else {
            log.dropped += bytes;
        }
        if log.tail.len() == TAIL_LINES {
            log.tail.pop_front();
        }
        log.tail.push_back(line.to_string());
    }

    /// The last lines, with a note when the cap cut the file short.
    pub fn finish(&self) -> Vec<String> {
        let mut log = self.inner.lock().expect("log lock");
        if log.dropped > 0 {
            let note = format!(
                "[leakcheck: the log stopped at {} MB; {} more bytes were not written]",
                MAX_LOG_BYTES >> 20,
                log.dropped
            );
            let _ = writeln!(log.file, "{note}");
            log.tail.push_back(note);
        }
        log.tail.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_planted_symlink_and_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let planted = dir.path().join("load-cmd-x-cycle1.log");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        assert!(DriverLog::create(&planted).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert!(
            DriverLog::create(&victim).is_err(),
            "an existing file is not reused"
        );
    }

    #[test]
    fn keeps_the_last_lines_and_caps_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let log = DriverLog::create(&path).unwrap();
        let long = "x".repeat(1024 * 1024);
        for i in 0..6 {
            log.line(&format!("{i} {long}"));
        }
        log.line("last");
        let tail = log.finish();
        assert_eq!(tail[tail.len() - 2], "last");
        assert!(tail.last().unwrap().contains("the log stopped at 4 MB"));
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size <= MAX_LOG_BYTES + 200, "{size}");
    }

    #[test]
    fn a_temporary_folder_is_private_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = LogDir::temporary().unwrap();
        let path = dir.path().to_path_buf();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(!dir.is_kept());
        drop(dir);
        assert!(!path.exists());
    }
}
