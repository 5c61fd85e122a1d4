//! The memory limit of the cgroup a process runs in (a container's), from
//! /proc/PID/cgroup and /sys/fs/cgroup: Linux's, behind the platform seam.
//!
//! cgroup v2 (`0::/path` in /proc/PID/cgroup): the limit in force is the
//! smallest `memory.max` from the process's group up to the root, since a
//! parent's limit covers its children; `max` means none. cgroup v1 (a
//! `memory` controller line): `memory.limit_in_bytes`, where a value near
//! 2^63 means none. The kernel's OOM kills of the group are counted in
//! `memory.events` (`oom_kill N`, v2). Off Linux no process has a cgroup
//! file, and every reading here is None.

use std::path::{Path, PathBuf};

/// The cgroup v2 and v1 mount points.
const CGROUP_V2: &str = "/sys/fs/cgroup";
const CGROUP_V1_MEMORY: &str = "/sys/fs/cgroup/memory";
/// A v1 limit at or above this is "no limit" (the kernel writes
/// PAGE_COUNTER_MAX, 2^63 rounded to pages).
const V1_UNLIMITED: u64 = 1 << 60;

/// Where a process's cgroup lives, from the text of /proc/PID/cgroup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CgroupPath {
    V2(String),
    V1Memory(String),
}

pub fn parse_proc_cgroup(text: &str) -> Option<CgroupPath> {
    let mut v1 = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if id == "0" && controllers.is_empty() {
            return Some(CgroupPath::V2(path.to_string()));
        }
        if controllers.split(',').any(|c| c == "memory") {
            v1 = Some(CgroupPath::V1Memory(path.to_string()));
        }
    }
    v1
}

/// A `memory.max` or `memory.limit_in_bytes` value: `None` for no limit.
pub fn parse_limit(text: &str) -> Option<u64> {
    let value: u64 = text.trim().parse().ok()?;
    (value < V1_UNLIMITED).then_some(value)
}

/// The OOM kills counted in a `memory.events` file's text.
pub fn parse_oom_kills(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|n| n.trim().parse().ok())
}

/// The directory of a process's memory cgroup.
fn cgroup_dir(pid: u32) -> Option<(PathBuf, bool)> {
    let text = super::procfs::cgroup_text(pid)?;
    match parse_proc_cgroup(&text)? {
        CgroupPath::V2(path) => Some((join(CGROUP_V2, &path), true)),
        CgroupPath::V1Memory(path) => Some((join(CGROUP_V1_MEMORY, &path), false)),
    }
}

fn join(root: &str, path: &str) -> PathBuf {
    Path::new(root).join(path.trim_start_matches('/'))
}

/// The memory limit in force for a process's cgroup, if one is set.
pub fn cgroup_memory_max(pid: u32) -> Option<u64> {
    let (dir, v2) = cgroup_dir(pid)?;
    if !v2 {
        let text = std::fs::read_to_string(dir.join("memory.limit_in_bytes")).ok()?;
        return parse_limit(&text);
    }
    let root = Path::new(CGROUP_V2);
    let mut tightest: Option<u64> = None;
    let mut at = Some(dir.as_path());
    while let Some(dir) = at.filter(|d| d.starts_with(root) && *d != root) {
        if let Ok(text) = std::fs::read_to_string(dir.join("memory.max"))
            && let Some(limit) = parse_limit(&text)
        {
            tightest = Some(tightest.map_or(limit, |t| t.min(limit)));
        }
        at = dir.parent();
    }
    tightest
}

/// The OOM kills the kernel counted in a process's cgroup (v2), to tell a
/// SIGKILL by the OOM killer from one sent by a person.
pub fn oom_kills(pid: u32) -> Option<u64> {
    let (dir, v2) = cgroup_dir(pid)?;
    if !v2 {
        return None;
    }
    parse_oom_kills(&std::fs::read_to_string(dir.join("memory.events")).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_v2_and_v1_cgroup_lines() {
        assert_eq!(
            parse_proc_cgroup("0::/user.slice/app.scope\n"),
            Some(CgroupPath::V2("/user.slice/app.scope".into()))
        );
        let v1 = "12:cpu,cpuacct:/docker/abc\n9:memory:/docker/abc\n1:name=systemd:/docker/abc\n";
        assert_eq!(
            parse_proc_cgroup(v1),
            Some(CgroupPath::V1Memory("/docker/abc".into()))
        );
        assert_eq!(parse_proc_cgroup("garbage"), None);
    }

    #[test]
    fn max_and_near_2_63_are_no_limit() {
        assert_eq!(parse_limit("max\n"), None);
        assert_eq!(parse_limit("9223372036854771712\n"), None);
        assert_eq!(parse_limit("536870912\n"), Some(512 << 20));
    }

    #[test]
    fn counts_oom_kills() {
        let events = "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n";
        assert_eq!(parse_oom_kills(events), Some(2));
        assert_eq!(parse_oom_kills("low 0\n"), None);
    }

    #[test]
    fn this_process_has_a_readable_cgroup_or_none() {
        // Whatever the machine, reading never panics, and a limit is
        // above a megabyte when there is one.
        if let Some(limit) = cgroup_memory_max(std::process::id()) {
            assert!(limit > 1 << 20, "{limit}");
        }
    }
}
