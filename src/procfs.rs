//! Who listens on a TCP port, read from /proc (Linux): the socket's inode in
//! /proc/net/tcp{,6}, then the process whose fd points at that inode. This is
//! the method's last step (stop the server by its PID, METHOD.md) without
//! netstat.

use std::collections::HashSet;
use std::fs;

/// A process listening on a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortHolder {
    pub pid: u32,
    /// Its command line, arguments joined by spaces.
    pub command: String,
}

impl std::fmt::Display for PortHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PID {} ({})", self.pid, self.command)
    }
}

/// TCP state code for LISTEN in /proc/net/tcp.
const TCP_LISTEN: &str = "0A";

/// Every listening TCP socket, v4 and v6: its local port and inode.
fn listening_sockets() -> Vec<(u16, u64)> {
    let mut sockets = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 10 || fields[3] != TCP_LISTEN {
                continue;
            }
            let port = fields[1]
                .rsplit(':')
                .next()
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            if let Some(port) = port
                && let Ok(inode) = fields[9].parse::<u64>()
                && inode != 0
            {
                sockets.push((port, inode));
            }
        }
    }
    sockets
}

/// Inodes of the sockets listening on `port`, on any address, v4 or v6.
fn listening_inodes(port: u16) -> HashSet<u64> {
    listening_sockets()
        .into_iter()
        .filter(|(p, _)| *p == port)
        .map(|(_, inode)| inode)
        .collect()
}

/// Ports on which process `pid` listens.
pub fn listening_ports_of(pid: u32) -> Vec<u16> {
    let owned = socket_inodes_of(pid);
    let mut ports = Vec::new();
    for (port, inode) in listening_sockets() {
        if owned.contains(&inode) && !ports.contains(&port) {
            ports.push(port);
        }
    }
    ports
}

fn socket_inodes_of(pid: u32) -> HashSet<u64> {
    let mut inodes = HashSet::new();
    let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return inodes;
    };
    for fd in fds.flatten() {
        if let Ok(link) = fs::read_link(fd.path()) {
            let link = link.to_string_lossy();
            if let Some(inode) = link
                .strip_prefix("socket:[")
                .and_then(|s| s.strip_suffix(']'))
                && let Ok(inode) = inode.parse()
            {
                inodes.insert(inode);
            }
        }
    }
    inodes
}

/// The processes listening on `port` (several when they share the socket,
/// like a parent and a forked worker).
pub fn holders_of(port: u16) -> Vec<PortHolder> {
    let wanted = listening_inodes(port);
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut holders = Vec::new();
    for pid in all_pids() {
        if socket_inodes_of(pid)
            .iter()
            .any(|inode| wanted.contains(inode))
        {
            holders.push(PortHolder {
                pid,
                command: command_line(pid),
            });
        }
    }
    holders.sort_by_key(|h| h.pid);
    holders
}

/// Every process id in /proc.
pub fn all_pids() -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// A process's command line, or `?` when it is gone or unreadable.
pub fn command_line(pid: u32) -> String {
    match fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(raw) if !raw.is_empty() => raw
            .split(|&b| b == 0)
            .filter(|part| !part.is_empty())
            .map(|part| String::from_utf8_lossy(part).into_owned())
            .collect::<Vec<_>>()
            .join(" "),
        _ => "?".to_string(),
    }
}

/// "held by PID 123 (node server.js)", or a hint when /proc does not say.
pub fn describe_holders(port: u16) -> String {
    let holders = holders_of(port);
    if holders.is_empty() {
        return "held by a process this user cannot see (try `ss -ltnp`)".to_string();
    }
    let list: Vec<String> = holders.iter().map(ToString::to_string).collect();
    format!("held by {}", list.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_this_process_listening() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let me = std::process::id();
        let holders = holders_of(port);
        assert!(holders.iter().any(|h| h.pid == me), "{holders:?}");
        assert!(listening_ports_of(me).contains(&port));
        assert!(describe_holders(port).contains(&format!("PID {me}")));
        drop(listener);
        assert!(holders_of(port).is_empty());
    }
}
