//! Finding the Node processes a fleet watch takes, in /proc: the `--pid`s
//! given and their Node descendants (a cluster's primary forks its
//! workers, PM2's daemon its instances), or with `--all` every Node
//! process this user may signal, narrowed by `--match` (a substring of the
//! command line, as `pgrep -f` without the regular expression) and
//! `--cgroup-of` (the same container or systemd unit).
//!
//! And the one thing that stops several processes being attached at once:
//! SIGUSR1 opens a process's inspector on its debug port, 9229 unless the
//! process was started with `--inspect-port` (or `NODE_OPTIONS`). Two
//! processes on 9229 cannot both listen, so a process whose port another
//! one holds is named with that holder and the fix (`--inspect-port=0`,
//! which opens no port until the signal, then an ephemeral one).

use std::collections::BTreeSet;

use crate::platform::procfs;
use crate::settings::Selection;

/// Node's debug port when nothing sets another.
const DEFAULT_DEBUG_PORT: u16 = 9229;

/// The processes `selection` names now: children before their parents
/// (then by pid). Order matters for a cluster: a primary whose inspector
/// opens opens its workers' too (node:cluster forwards the activation),
/// so a worker attached after its primary would find its inspector open,
/// and leakcheck, not having opened it, would leave it listening.
pub fn select(selection: &Selection) -> Vec<u32> {
    let mut found = found_by(selection);
    found.sort_by_key(|&pid| (std::cmp::Reverse(depth(pid)), pid));
    found
}

/// How many ancestors `pid` has (bounded, as `descends_from`).
fn depth(pid: u32) -> u32 {
    let mut at = pid;
    let mut depth = 0;
    while let Some(parent) = procfs::parent_of(at).filter(|&p| p > 1 && depth < 64) {
        at = parent;
        depth += 1;
    }
    depth
}

fn found_by(selection: &Selection) -> Vec<u32> {
    let mut found = BTreeSet::new();
    for &pid in &selection.pids {
        if is_alive(pid) {
            found.insert(pid);
            found.extend(node_descendants(pid));
        }
    }
    if selection.all {
        let cgroup = selection.cgroup_of.and_then(cgroup_of);
        let me = std::process::id();
        for pid in procfs::all_pids() {
            if pid == me || !is_node(pid) || !may_signal(pid) {
                continue;
            }
            if let Some(pattern) = &selection.pattern
                && !procfs::command_line(pid).contains(pattern.as_str())
            {
                continue;
            }
            if cgroup.is_some() && cgroup_of(pid) != cgroup {
                continue;
            }
            found.insert(pid);
        }
    }
    found.into_iter().collect()
}

/// Node processes below Node process `pid` (children, their children…):
/// none below a process that is not Node (an init, a shell).
pub fn node_descendants(pid: u32) -> Vec<u32> {
    if !is_node(pid) {
        return Vec::new();
    }
    procfs::all_pids()
        .into_iter()
        .filter(|&p| p != pid && is_node(p) && procfs::descends_from(p, pid))
        .collect()
}

pub fn is_alive(pid: u32) -> bool {
    !crate::process::exited(pid)
}

/// A Node executable: its binary is named `node` (or `nodejs`, Debian's
/// old name). A process that renamed itself (`process.title`) keeps its
/// executable.
fn is_node(pid: u32) -> bool {
    let Ok(exe) = procfs::exe_of(pid) else {
        return false;
    };
    exe.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|name| matches!(name, "node" | "nodejs"))
}

/// Whether this user may send the process SIGUSR1: the same real user,
/// or root.
fn may_signal(pid: u32) -> bool {
    // SAFETY: getuid(2) has no preconditions.
    let me = unsafe { libc::getuid() };
    me == 0 || uid_of(pid) == Some(me)
}

fn uid_of(pid: u32) -> Option<u32> {
    let status = procfs::status_text(pid)?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The process's cgroup (v2's one line, or v1's whole table).
fn cgroup_of(pid: u32) -> Option<String> {
    procfs::cgroup_text(pid)
}

/// The port SIGUSR1 will open `pid`'s inspector on: its `--inspect-port`
/// or `--inspect[-brk]=[HOST:]PORT`, in its arguments or `NODE_OPTIONS`.
/// `Some(0)` is an ephemeral port, never in conflict.
pub fn debug_port(pid: u32) -> u16 {
    let mut words: Vec<String> = procfs::command_line(pid)
        .split(' ')
        .map(str::to_string)
        .collect();
    if let Ok(environ) = procfs::environ_of(pid) {
        for entry in environ.split(|&b| b == 0) {
            if let Some(options) = entry.strip_prefix(b"NODE_OPTIONS=") {
                let options = String::from_utf8_lossy(options);
                words.extend(options.split_whitespace().map(str::to_string));
            }
        }
    }
    port_in(&words).unwrap_or(DEFAULT_DEBUG_PORT)
}

/// The last debug port the flags set (Node lets the last one win).
fn port_in(words: &[String]) -> Option<u16> {
    let mut port = None;
    for word in words {
        let value = [
            "--inspect-port=",
            "--debug-port=",
            "--inspect=",
            "--inspect-brk=",
        ]
        .iter()
        .find_map(|flag| word.strip_prefix(flag));
        if let Some(value) = value
            && let Ok(p) = value.rsplit(':').next().unwrap_or(value).parse()
        {
            port = Some(p);
        }
    }
    port
}

/// Why `pid` cannot be attached now, if another process holds the port
/// its inspector would open on.
pub fn port_conflict(pid: u32) -> Option<String> {
    let port = debug_port(pid);
    if port == 0 || procfs::listening_ports_of(pid).contains(&port) {
        return None;
    }
    let holders = procfs::holders_of(port);
    let other = holders.iter().find(|h| h.pid != pid)?;
    Some(format!(
        "its inspector would open on port {port}, which {other} holds: start the processes \
         with --inspect-port=0 (in NODE_OPTIONS: no port is opened until leakcheck's signal, \
         then an ephemeral one), and each can be watched at once"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn the_last_debug_flag_sets_the_port() {
        assert_eq!(port_in(&words("node server.js")), None);
        assert_eq!(port_in(&words("node --inspect-port=0 a.js")), Some(0));
        assert_eq!(
            port_in(&words("node --inspect=127.0.0.1:9333 a.js")),
            Some(9333)
        );
        assert_eq!(
            port_in(&words("node --inspect=9300 --inspect-port=9301 a.js")),
            Some(9301)
        );
        assert_eq!(port_in(&words("node --inspect a.js")), None);
    }

    #[test]
    fn this_test_process_is_alive_and_not_node() {
        let me = std::process::id();
        assert!(is_alive(me));
        assert!(!is_node(me));
        assert!(may_signal(me));
        assert!(!is_alive(u32::MAX - 1));
    }
}
