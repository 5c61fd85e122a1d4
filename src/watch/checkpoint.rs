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

use super::observer::Reading;

/// A checkpoint is rotated past this size: the file becomes `FILE.1`
/// (replacing the one before) and a new one starts, so a watch of weeks
/// keeps at most twice this on disk. 64 MiB holds about 200 000 readings,
/// days of a busy process.
const ROTATE_AT: u64 = 64 << 20;

pub struct Checkpoint {
    file: File,
    pub path: PathBuf,
    /// Bytes in the current file.
    written: u64,
    rotate_at: u64,
    /// The start line, written again at the top of each rotated file so
    /// that every file says whose readings it holds.
    start: Option<Vec<u8>>,
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
        let written = file.metadata().map_or(0, |m| m.len());
        Ok(Checkpoint {
            file,
            path: path.to_path_buf(),
            written,
            rotate_at: ROTATE_AT,
            start: None,
        })
    }

    /// Moves a full file aside to `FILE.1` and starts a new one.
    fn rotate(&mut self) -> std::io::Result<()> {
        let mut aside = self.path.clone().into_os_string();
        aside.push(".1");
        std::fs::rename(&self.path, &aside)?;
        self.file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        self.written = 0;
        if let Some(start) = &self.start {
            self.file.write_all(start)?;
            self.written = start.len() as u64;
        }
        Ok(())
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
        if kind == "start" {
            self.start = Some(text.clone());
        } else if self.written > 0 && self.written + text.len() as u64 > self.rotate_at {
            self.rotate()?;
        }
        // One write per line: a reader never sees half of one.
        self.file.write_all(&text)?;
        self.written += text.len() as u64;
        self.file.flush()
    }
}

/// The readings an earlier watch of process `pid` left in the checkpoint
/// at `path` (and its rotated `.1`), within `window` of `now_unix_s`, in
/// order: a restarted watch continues the series. Not another process's
/// (the start line names the pid, and a reused pid started later).
pub fn earlier_readings(
    path: &Path,
    pid: u32,
    window: Option<std::time::Duration>,
    now_unix_s: f64,
) -> Vec<Reading> {
    let mut aside = path.to_path_buf().into_os_string();
    aside.push(".1");
    let mut readings = Vec::new();
    let mut ours = false;
    for file in [PathBuf::from(aside), path.to_path_buf()] {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for line in text.lines() {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            match value["type"].as_str() {
                Some("start") => {
                    ours = value["pid"].as_u64() == Some(u64::from(pid));
                    if !ours {
                        readings.clear();
                    }
                }
                Some("reading") if ours => {
                    if let Ok(reading) = serde_json::from_value::<Reading>(value) {
                        readings.push(reading);
                    }
                }
                _ => {}
            }
        }
    }
    // Readings from before the process started were another process's,
    // whose pid this one reuses.
    if let Some(started) = process_started_unix(pid) {
        readings.retain(|r| r.at_ms / 1000.0 >= started - 1.0);
    }
    if let Some(window) = window {
        let from_ms = (now_unix_s - window.as_secs_f64()) * 1000.0;
        readings.retain(|r| r.at_ms >= from_ms);
    }
    readings
}

/// When process `pid` started, in Unix seconds: /proc/stat's boot time
/// plus field 22 of /proc/PID/stat (clock ticks after boot).
fn process_started_unix(pid: u32) -> Option<f64> {
    let stat = crate::platform::procfs::stat_text(pid).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    // Fields after the name start at 3 (state); starttime is field 22.
    let ticks: f64 = after_name.split_whitespace().nth(19)?.parse().ok()?;
    let btime = crate::platform::procfs::boot_time()?;
    // SAFETY: sysconf(3) has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (per_second > 0.0).then(|| btime + ticks / per_second)
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

    fn reading(seq: u64, at_ms: f64) -> serde_json::Value {
        json!({"seq": seq, "at_ms": at_ms, "heap_used": 100 + seq, "heap_total": 0,
               "external": 0, "array_buffers": 0, "rss": 0, "pause_ms": 1.0,
               "forced": false, "served": null})
    }

    #[test]
    fn a_full_file_is_rotated_aside_and_a_restart_reads_both_within_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watch.ndjson");
        let me = std::process::id();
        let mut checkpoint = Checkpoint::open(&path).unwrap();
        checkpoint.rotate_at = 700;
        checkpoint.append("start", &json!({"pid": me})).unwrap();
        let t0 = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        for seq in 1..=6 {
            checkpoint
                .append("reading", &reading(seq, (t0 + seq as f64) * 1000.0))
                .unwrap();
        }
        assert!(dir.path().join("watch.ndjson.1").exists());
        assert!(std::fs::metadata(&path).unwrap().len() <= 700);
        let all = earlier_readings(&path, me, None, t0 + 10.0);
        let seqs: Vec<u64> = all.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, [1, 2, 3, 4, 5, 6]);
        // The last 3.5 s before t0 + 7 s: readings 4, 5, 6.
        let window = std::time::Duration::from_millis(3500);
        assert_eq!(earlier_readings(&path, me, Some(window), t0 + 7.0).len(), 3);
        // Another process's checkpoint is not continued, nor readings from
        // before this process started (a reused pid's).
        assert!(earlier_readings(&path, me + 1, None, t0 + 10.0).is_empty());
        let mut old = Checkpoint::open(&dir.path().join("old.ndjson")).unwrap();
        old.append("start", &json!({"pid": me})).unwrap();
        old.append("reading", &reading(1, 1000.0)).unwrap();
        assert!(earlier_readings(&old.path, me, None, t0).is_empty());
    }
}
