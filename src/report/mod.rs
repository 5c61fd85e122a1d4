//! Rendering a `RunResult`. One renderer per format behind `Exporter`;
//! the progress display lives in `progress`.

mod json;
pub mod load;
pub mod progress;
mod terminal;

pub use json::JsonExporter;
pub use terminal::TerminalExporter;

use crate::model::RunResult;

/// Turns a result into one output format.
pub trait Exporter {
    fn render(&self, result: &RunResult) -> anyhow::Result<String>;
}

/// Writes `text` to `path`, or to stdout for `-`.
pub fn write_output(path: &str, text: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    if path == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
        Ok(())
    } else {
        std::fs::write(path, text)
            .with_context(|| format!("cannot write {path}; check the directory exists"))
    }
}
