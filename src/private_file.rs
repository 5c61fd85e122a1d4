//! Files that hold a heap: snapshots carry request headers, tokens and
//! secrets, so only the owner may read them, and writing one must never
//! touch another file.
//!
//! A `PrivateFile` is written under a fresh name in the target's directory
//! (created with `O_EXCL | O_NOFOLLOW` and mode 0600, so neither a planted
//! symlink nor an existing file is followed, truncated or chmodded) and
//! renamed over the target when complete. `rename` replaces a symlink at
//! the target path itself, never what it points to; a snapshot cut short
//! leaves no half-written file under the final name.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub struct PrivateFile {
    file: File,
    temporary: PathBuf,
    destination: PathBuf,
    persisted: bool,
}

impl PrivateFile {
    /// Creates the temporary file beside `destination`.
    pub fn create(destination: &Path) -> io::Result<PrivateFile> {
        let dir = match destination.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = destination
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?
            .to_string_lossy();
        // A few tries: another leakcheck may write beside this one.
        let mut last = None;
        for attempt in 0..8u32 {
            let temporary = dir.join(format!(".{name}.{}.{attempt}.partial", std::process::id()));
            let opened = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&temporary);
            match opened {
                Ok(file) => {
                    return Ok(PrivateFile {
                        file,
                        temporary,
                        destination: destination.to_path_buf(),
                        persisted: false,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
    }

    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }

    /// Flushes the file to disk and gives it its final name.
    pub fn persist(mut self) -> io::Result<PathBuf> {
        self.file.sync_all()?;
        std::fs::rename(&self.temporary, &self.destination)?;
        self.persisted = true;
        Ok(self.destination.clone())
    }
}

impl Drop for PrivateFile {
    /// A file never persisted (an error, Ctrl-C) is removed.
    fn drop(&mut self) {
        if !self.persisted {
            let _ = std::fs::remove_file(&self.temporary);
        }
    }
}

/// Creates `dir` with mode 0700 if it does not exist; refuses a path that
/// exists and is not a directory.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists and is not a directory", dir.display()),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir),
        Err(e) => Err(e),
    }
}

/// `/leak?x=1` → `leak_x_1`, for the names of snapshot and log files.
pub fn file_label(route: &str) -> String {
    let label: String = route
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let label = label.trim_matches('_').to_string();
    if label.is_empty() {
        "root".to_string()
    } else {
        label
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_symlink_at_the_destination_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "keep me").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        let link = dir.path().join("link.heapsnapshot");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let mut file = PrivateFile::create(&link).unwrap();
        file.file().write_all(b"{}").unwrap();
        file.persist().unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        let mode = std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "the symlink's target keeps its mode");
        let written = std::fs::symlink_metadata(&link).unwrap();
        assert!(written.is_file(), "the link itself was replaced");
        assert_eq!(written.permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn an_unfinished_file_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut.heapsnapshot");
        drop(PrivateFile::create(&path).unwrap());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_private_dir_is_0700_and_a_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let snapshots = dir.path().join("snaps");
        private_dir(&snapshots).unwrap();
        let mode = std::fs::metadata(&snapshots).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let file = dir.path().join("plain");
        std::fs::write(&file, "").unwrap();
        assert!(private_dir(&file).is_err());
    }
}
