//! Starting a target under heaptrack (Debian's `heaptrack` package), the
//! way its own `heaptrack` script does: the target gets `LD_PRELOAD` of
//! `libheaptrack_preload.so` and writes its raw record into a FIFO
//! (`DUMP_HEAPTRACK_OUTPUT`); `heaptrack_interpret` reads the FIFO while
//! the target runs, symbolises the stacks and writes the record
//! `trace.rs` reads. Interpreting as it goes keeps the wait after the
//! target stops short, and the record on disk is the small interpreted one.
//!
//! heaptrack's preload removes itself from the environment of the
//! processes the target starts, so only the first process is recorded:
//! the command must start `node` itself (`commands/run/native.rs` checks).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};

/// Where heaptrack's parts are, relative to the `heaptrack` script (its own
/// `LIB_REL_PATH` and `LIBEXEC_REL_PATH`).
const PRELOAD: &str = "../lib/heaptrack/libheaptrack_preload.so";
const INTERPRETER: &str = "../lib/heaptrack/libexec/heaptrack_interpret";

#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    #[error(
        "heaptrack is not installed: install Debian's or Ubuntu's `heaptrack` package \
         (apt-get install heaptrack) to name the native code that keeps the memory"
    )]
    Missing,
    #[error("heaptrack is installed without {}: reinstall the `heaptrack` package", .0.display())]
    Incomplete(PathBuf),
    #[error(
        "heaptrack is installed for {theirs}, and leakcheck and its target run on {ours}: \
         {} cannot be preloaded into them; install the {ours} `heaptrack` package \
         (on arm64: the distribution's arm64 build; under emulation, inside the emulated system)",
        preload.display()
    )]
    OtherArchitecture {
        preload: PathBuf,
        theirs: &'static str,
        ours: &'static str,
    },
    #[error("cannot prepare heaptrack's record in {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("heaptrack_interpret did not finish within {0:?} after the target stopped")]
    Stalled(Duration),
}

/// An installed heaptrack.
#[derive(Debug, Clone)]
pub struct Recorder {
    preload: PathBuf,
    interpreter: PathBuf,
}

impl Recorder {
    /// Finds heaptrack in PATH.
    pub fn find() -> Result<Recorder, RecorderError> {
        let script = find_in_path("heaptrack").ok_or(RecorderError::Missing)?;
        let script = std::fs::canonicalize(&script).unwrap_or(script);
        let bin = script.parent().unwrap_or(Path::new("/usr/bin"));
        let part = |relative: &str| -> Result<PathBuf, RecorderError> {
            let path = bin.join(relative);
            let path = std::fs::canonicalize(&path).map_err(|_| RecorderError::Incomplete(path))?;
            Ok(path)
        };
        let preload = part(PRELOAD)?;
        check_architecture(&preload)?;
        Ok(Recorder {
            preload,
            interpreter: part(INTERPRETER)?,
        })
    }

    /// `heaptrack 1.4.0`, from the script's `--version`.
    pub async fn version(&self) -> String {
        let output = Command::new("heaptrack").arg("--version").output().await;
        output
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "heaptrack".to_string())
    }

    /// Opens a record in `dir`: the FIFO and the interpreter reading it.
    /// The target must then start with `Recording::env`.
    pub fn start(&self, dir: &Path) -> Result<Recording, RecorderError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| RecorderError::Io { path, source }
        };
        let fifo = dir.join("heaptrack.fifo");
        let output = dir.join("heaptrack.record");
        make_fifo(&fifo).map_err(io(&fifo))?;
        let record = std::fs::File::create(&output).map_err(io(&output))?;
        // The shell opens the FIFO for the interpreter: that blocks until
        // the target opens its end, which must not block leakcheck.
        let interpreter = Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" < \"$1\"")
            .arg(&self.interpreter)
            .arg(&fifo)
            .stdin(Stdio::null())
            .stdout(record)
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(io(&self.interpreter))?;
        Ok(Recording {
            env: vec![
                ("LD_PRELOAD".into(), self.preload.display().to_string()),
                ("DUMP_HEAPTRACK_OUTPUT".into(), fifo.display().to_string()),
            ],
            output,
            interpreter,
            started: Instant::now(),
        })
    }
}

/// A record being written.
pub struct Recording {
    /// For the target's environment.
    pub env: Vec<(String, String)>,
    output: PathBuf,
    interpreter: Child,
    /// About when the target's recorder started its clock: the record's
    /// times (`c MS`) count from the preload's start in the target, a few
    /// milliseconds after this.
    pub started: Instant,
}

impl Recording {
    /// Milliseconds of the record's clock at `at`.
    pub fn ms_at(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.started).as_millis() as u64
    }

    /// Waits for the interpreter to read the last of the record, once the
    /// target has stopped; the record's path.
    pub async fn finish(mut self, limit: Duration) -> Result<PathBuf, RecorderError> {
        match tokio::time::timeout(limit, self.interpreter.wait()).await {
            Ok(_) => Ok(self.output),
            Err(_) => {
                let _ = self.interpreter.kill().await;
                Err(RecorderError::Stalled(limit))
            }
        }
    }
}

fn make_fifo(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("a path with a NUL byte"))?;
    // SAFETY: a valid NUL-terminated path; mkfifo only reads it.
    if unsafe { libc::mkfifo(name.as_ptr(), 0o600) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

pub fn find_in_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// A preload library of another CPU than leakcheck's (an x86_64 heaptrack
/// on the PATH of an arm64 leakcheck under emulation, or in a multi-arch
/// image) would fail inside the target's dynamic loader with a message
/// about ELF classes; said here instead, before the target starts.
fn check_architecture(preload: &Path) -> Result<(), RecorderError> {
    let mut header = [0u8; 20];
    let read = std::fs::File::open(preload).and_then(|mut file| {
        use std::io::Read;
        file.read_exact(&mut header)
    });
    if read.is_err() || &header[..4] != b"\x7fELF" {
        return Ok(());
    }
    // e_machine, little-endian on both CPUs leakcheck is built for.
    let theirs = match u16::from_le_bytes([header[18], header[19]]) {
        0x3e => "x86_64",
        0xb7 => "aarch64",
        _ => return Ok(()),
    };
    let ours = std::env::consts::ARCH;
    if theirs == ours {
        return Ok(());
    }
    Err(RecorderError::OtherArchitecture {
        preload: preload.to_path_buf(),
        theirs,
        ours,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elf_for(machine: u16) -> tempfile::NamedTempFile {
        let mut header = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0];
        header.resize(18, 0);
        header.extend_from_slice(&machine.to_le_bytes());
        header.resize(64, 0);
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), header).unwrap();
        file
    }

    #[test]
    fn a_preload_library_of_another_cpu_is_named_before_the_target_starts() {
        let (ours, other) = match std::env::consts::ARCH {
            "x86_64" => (0x3e, 0xb7),
            _ => (0xb7, 0x3e),
        };
        assert!(check_architecture(elf_for(ours).path()).is_ok());
        let error = check_architecture(elf_for(other).path()).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("heaptrack is installed for"), "{message}");
        assert!(message.contains(std::env::consts::ARCH), "{message}");
        // Not an ELF file at all: left to the loader, as before.
        let text = tempfile::NamedTempFile::new().unwrap();
        assert!(check_architecture(text.path()).is_ok());
    }
}
