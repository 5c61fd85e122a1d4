//! The watch's NDJSON checkpoint: one JSON object per line, appended and
//! flushed as each arrives, so a watch that is killed (SIGKILL, the
//! machine rebooting) leaves every reading it took on disk:
//!
//! - `{"type":"start", ...}`: the process, its Node version, its limits;
//! - `{"type":"reading", ...}`: one per reading (`observer::Reading`);
//! - `{"type":"status", ...}`: the verdict so far, after each new batch;
//! - `{"type":"end", ...}`: the verdict, projection and evidence.
//!
//! `jq -c 'select(.type=="reading") | [.at_ms, .heap_used]'` gives the
//! series.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

pub struct Checkpoint {
    file: File,
    pub path: PathBuf,
}

impl Checkpoint {
    /// Opens `path` for appending (created when missing).
    pub fn open(path: &Path) -> anyhow::Result<Checkpoint> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| {
                anyhow::anyhow!(
                    "--checkpoint {} cannot be written ({e}): give a writable file",
                    path.display()
                )
            })?;
        Ok(Checkpoint {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Appends `{"type": kind, ...fields}` as one line and flushes it.
    pub fn append(&mut self, kind: &str, fields: &impl Serialize) -> std::io::Result<()> {
        let mut value = serde_json::to_value(fields).map_err(std::io::Error::other)?;
        let line = match value.as_object_mut() {
            Some(object) => {
                object.insert("type".into(), json!(kind));
                value
            }
            None => json!({ "type": kind, "value": value }),
        };
        let mut text = serde_json::to_vec(&line).map_err(std::io::Error::other)?;
        text.push(b'\n');
        // One write per line: a reader never sees half of one.
        self.file.write_all(&text)?;
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_is_a_whole_object_with_its_type_first_seen_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watch.ndjson");
        let mut checkpoint = Checkpoint::open(&path).unwrap();
        checkpoint.append("start", &json!({"pid": 42})).unwrap();
        checkpoint
            .append("reading", &json!({"seq": 1, "heap_used": 9}))
            .unwrap();
        // Written through before the writer is dropped.
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["type"], "start");
        assert_eq!(lines[1]["heap_used"], 9);
    }
}
