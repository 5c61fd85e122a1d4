//! The command a target is started with: as given (Node's flags are added
//! by `launch.rs`), or for Deno and Bun with their inspector flags and the
//! served counter's preload in a private folder (`crate::runtime::launch`).

use crate::runtime::launch::PrepareError;

/// Why a Deno or Bun command could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum LaunchAsError {
    #[error(transparent)]
    Runtime(#[from] PrepareError),
    #[error("cannot write the served counter's preload for the target")]
    Preload(#[source] std::io::Error),
}

/// The command as it is started: as given, or with Deno's or Bun's
/// inspector flags and the served counter's preload (`crate::runtime`).
pub(super) struct LaunchedAs {
    pub(super) program: String,
    pub(super) args: Vec<String>,
    pub(super) runtime: crate::runtime::Runtime,
    pub(super) path: Option<String>,
    pub(super) note: Option<String>,
    pub(super) scratch: Option<tempfile::TempDir>,
}

impl LaunchedAs {
    pub(super) fn given(program: &str, args: &[String]) -> LaunchedAs {
        LaunchedAs {
            program: program.to_string(),
            args: args.to_vec(),
            runtime: crate::runtime::Runtime::Node,
            path: None,
            note: None,
            scratch: None,
        }
    }

    /// `command` ready for its runtime; `node_flags` and `node_options`
    /// are what a Node target would get (Deno takes the V8 ones).
    pub(super) fn runtime_of(
        command: &[String],
        node_flags: &[String],
        node_options: &str,
    ) -> Result<Self, LaunchAsError> {
        let (program, args) = command.split_first().expect("a command has a program");
        use crate::runtime::launch::{Extras, prepare};
        let cwd = std::env::current_dir().unwrap_or_default();
        if prepare(command, &cwd, &Extras::default())?.is_none() {
            return Ok(LaunchedAs::given(program, args));
        }
        let scratch = tempfile::Builder::new()
            .prefix("leakcheck-runtime")
            .tempdir()
            .map_err(LaunchAsError::Preload)?;
        let preload = scratch.path().join(crate::runtime::SERVED_PRELOAD_FILE);
        std::fs::write(&preload, crate::runtime::SERVED_PRELOAD).map_err(LaunchAsError::Preload)?;
        // Deno takes V8's flags (the heap limit, the native recorder's)
        // by a flag of its own, not from NODE_OPTIONS.
        let mut v8_flags: Vec<String> = node_options
            .split_whitespace()
            .filter(|flag| flag.starts_with("--max-old-space-size"))
            .map(String::from)
            .collect();
        v8_flags.extend(node_flags.iter().cloned());
        let extras = Extras {
            preload: Some(preload),
            v8_flags,
        };
        let prepared = prepare(command, &cwd, &extras)?
            .expect("the same command was a runtime's a moment ago");
        let (program, args) = prepared
            .command
            .split_first()
            .expect("a prepared command has a program");
        Ok(LaunchedAs {
            program: program.clone(),
            args: args.to_vec(),
            runtime: prepared.runtime,
            path: prepared.path,
            note: prepared.note,
            scratch: Some(scratch),
        })
    }
}
