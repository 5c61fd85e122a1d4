//! The probe for any process, in any language: resident memory from
//! /proc/PID/status. It cannot force a collection, so its readings include
//! garbage; the verdict says so. The anonymous and file-backed parts of rss
//! are kept as counters (`rss_anon`, `rss_file`, in bytes): a leak grows the
//! anonymous part.

use async_trait::async_trait;

use super::{Probe, ProbeError};
use crate::model::{ProbeKind, Sample};

pub struct ProcProbe {
    pub pid: u32,
}

/// Reads `VmRSS`, `RssAnon`, `RssFile` and `RssShmem` (kB) from a status file's text.
pub fn parse_status(text: &str) -> Option<Sample> {
    let field = |name: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(name))?;
        let kb: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        kb.checked_mul(1024)
    };
    let mut sample = Sample {
        rss: field("VmRSS:")?,
        ..Sample::default()
    };
    for (name, counter) in [
        ("RssAnon:", "rss_anon"),
        ("RssFile:", "rss_file"),
        ("RssShmem:", "rss_shmem"),
    ] {
        if let Some(bytes) = field(name) {
            sample
                .counters
                .insert(counter.to_string(), Some(bytes as f64));
        }
    }
    Some(sample)
}

#[async_trait]
impl Probe for ProcProbe {
    fn kind(&self) -> ProbeKind {
        ProbeKind::Proc
    }

    fn can_collect(&self) -> bool {
        false
    }

    async fn pid(&mut self) -> Option<u32> {
        Some(self.pid)
    }

    async fn collect_garbage(&mut self) -> Result<(), ProbeError> {
        Ok(())
    }

    async fn sample(&mut self) -> Result<Sample, ProbeError> {
        let path = crate::platform::procfs::status_path(self.pid);
        let text = match crate::platform::procfs::status_text_async(self.pid).await {
            Ok(text) => text,
            // ENOENT (and ESRCH while the entry is torn down) is an exit;
            // anything else (EMFILE, EACCES) says nothing about the process.
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || e.raw_os_error() == Some(libc::ESRCH) =>
            {
                return Err(ProbeError::ProcessGone {
                    pid: self.pid,
                    path,
                });
            }
            Err(source) => return Err(ProbeError::ProcUnreadable { path, source }),
        };
        parse_status(&text)
            .ok_or_else(|| ProbeError::Malformed(format!("{path} has no VmRSS line")))
    }

    async fn settled_sample(&mut self) -> Result<Sample, ProbeError> {
        self.sample().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rss_and_its_parts() {
        let text = "Name:\tpython3\nVmRSS:\t   20480 kB\nRssAnon:\t    8192 kB\nRssFile:\t   12288 kB\nRssShmem:\t       0 kB\n";
        let sample = parse_status(text).unwrap();
        assert_eq!(sample.rss, 20480 * 1024);
        assert_eq!(sample.counters["rss_anon"], Some(8192.0 * 1024.0));
        assert_eq!(sample.heap_used, 0);
    }

    #[test]
    fn absurd_figures_are_refused_not_overflowed() {
        // Found by fuzzing: kB times 1024 overflowed.
        assert!(parse_status("VmRSS:\t55003556057557040 kB\n").is_none());
    }

    #[test]
    fn this_process_has_a_status() {
        let text = std::fs::read_to_string("/proc/self/status").unwrap();
        assert!(parse_status(&text).unwrap().rss > 0);
    }
}
