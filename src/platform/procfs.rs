//! Who listens on a TCP port, read from /proc (Linux): the socket's inode in
//! /proc/net/tcp{,6}, then the process whose fd points at that inode. This is
//! the method's last step (stop the server by its PID, docs/src/method.md) without
//! netstat.

use std::collections::HashSet;
use std::fs;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

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

/// Every listening TCP socket, v4 and v6: its local address and inode.
fn listening_sockets() -> Vec<(SocketAddr, u64)> {
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
            if let Some(addr) = parse_local_address(fields[1])
                && let Ok(inode) = fields[9].parse::<u64>()
                && inode != 0
            {
                sockets.push((addr, inode));
            }
        }
    }
    sockets
}

/// Inodes of the sockets listening on `port`, on any address, v4 or v6.
fn listening_inodes(port: u16) -> HashSet<u64> {
    listening_sockets()
        .into_iter()
        .filter(|(addr, _)| addr.port() == port)
        .map(|(_, inode)| inode)
        .collect()
}

/// `0100007F:1F90` (IPv4, the address in host byte order, hex) or the
/// 32-hex-digit IPv6 form, as /proc/net/tcp{,6} write a local address.
fn parse_local_address(text: &str) -> Option<SocketAddr> {
    let (ip, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let ip: IpAddr = match ip.len() {
        8 => Ipv4Addr::from(u32::from_str_radix(ip, 16).ok()?.swap_bytes()).into(),
        32 => {
            let mut bytes = [0u8; 16];
            for (word, chunk) in bytes.chunks_mut(4).enumerate() {
                let value = u32::from_str_radix(&ip[word * 8..word * 8 + 8], 16).ok()?;
                chunk.copy_from_slice(&value.swap_bytes().to_be_bytes());
            }
            Ipv6Addr::from(bytes).into()
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// The local addresses on which process `pid` listens.
pub fn listening_addresses_of(pid: u32) -> Vec<SocketAddr> {
    let owned = socket_inodes_of(pid);
    listening_sockets()
        .into_iter()
        .filter(|(_, inode)| owned.contains(inode))
        .map(|(addr, _)| addr)
        .collect()
}

/// Ports on which process `pid` listens.
pub fn listening_ports_of(pid: u32) -> Vec<u16> {
    let mut ports = Vec::new();
    for addr in listening_addresses_of(pid) {
        if !ports.contains(&addr.port()) {
            ports.push(addr.port());
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

/// Bytes of memory the kernel says are available for new work
/// (`MemAvailable` in /proc/meminfo).
pub fn memory_available() -> Option<u64> {
    let meminfo = fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
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

/// The parent of process `pid` (field 4 of /proc/PID/stat, read after
/// the command name's closing parenthesis, which may itself hold spaces).
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = stat_text(pid).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// Whether `pid` descends from `ancestor` (not counting itself).
pub fn descends_from(pid: u32, ancestor: u32) -> bool {
    let mut at = pid;
    // A bound instead of trusting /proc to end at pid 1.
    for _ in 0..64 {
        match parent_of(at) {
            Some(parent) if parent == ancestor => return true,
            Some(parent) if parent > 1 => at = parent,
            _ => return false,
        }
    }
    false
}

/// A process's command line, or `?` when it is gone or unreadable.
pub fn command_line(pid: u32) -> String {
    match cmdline_bytes(pid) {
        raw if !raw.is_empty() => raw
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

/// Resident bytes of a process from `/proc/PID/statm` (its second field,
/// in pages): the cheap rss reading, one short line.
pub fn resident_bytes(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    parse_statm_resident(&text).map(|pages| pages * page_size())
}

/// Resident pages from a `/proc/PID/statm` file's text (its second field).
pub fn parse_statm_resident(text: &str) -> Option<u64> {
    text.split_whitespace().nth(1)?.parse().ok()
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions; it returns -1 on error.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).unwrap_or(4096)
}

// One file of /proc each: the raw readings the rest of leakcheck parses.
// Off Linux each finds nothing (an error, None or empty), which its caller
// reports as a figure not read; the table in `platform/mod.rs` names what
// macOS would read instead.

/// `/proc/PID/status` (rss and its parts, the real uid).
pub fn status_text(pid: u32) -> Option<String> {
    std::fs::read_to_string(status_path(pid)).ok()
}

/// The path of `/proc/PID/status`, for messages that name it.
pub fn status_path(pid: u32) -> String {
    format!("/proc/{pid}/status")
}

/// `/proc/self/status` of leakcheck itself.
pub fn own_status_text() -> Option<String> {
    std::fs::read_to_string("/proc/self/status").ok()
}

/// `/proc/PID/stat` (state, start time); the error says whether it is gone.
pub fn stat_text(pid: u32) -> std::io::Result<String> {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
}

/// The machine's boot time in Unix seconds (`btime` of `/proc/stat`).
pub fn boot_time() -> Option<f64> {
    let boot = std::fs::read_to_string("/proc/stat").ok()?;
    boot.lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()
}

/// The executable of process `pid` (`/proc/PID/exe`).
pub fn exe_of(pid: u32) -> std::io::Result<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/exe"))
}

/// The working directory of process `pid` (`/proc/PID/cwd`).
pub fn cwd_of(pid: u32) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/cwd")).ok()
}

/// The process's cgroup table (`/proc/PID/cgroup`: v2's one line, or v1's
/// whole table).
pub fn cgroup_text(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()
}

/// The process's environment, NUL-separated (`/proc/PID/environ`; this
/// user's processes only).
pub fn environ_of(pid: u32) -> std::io::Result<Vec<u8>> {
    std::fs::read(format!("/proc/{pid}/environ"))
}

/// The process's arguments, NUL-separated (`/proc/PID/cmdline`).
pub fn cmdline_bytes(pid: u32) -> Vec<u8> {
    std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()
}

/// Whether a process `pid` exists (its /proc entry).
pub fn process_exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The kernel's release (`/proc/sys/kernel/osrelease`), trimmed.
pub fn kernel_release() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|k| k.trim().to_string())
}

/// `/proc/PID/smaps` (rss per mapping), read off the async runtime's
/// threads.
pub async fn smaps_text(pid: u32) -> std::io::Result<String> {
    tokio::fs::read_to_string(format!("/proc/{pid}/smaps")).await
}

/// `/proc/PID/status`, read off the async runtime's threads.
pub async fn status_text_async(pid: u32) -> std::io::Result<String> {
    tokio::fs::read_to_string(status_path(pid)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statm_resident_is_the_second_field() {
        assert_eq!(
            super::parse_statm_resident("52343 12000 3000 10 0 20000 0\n"),
            Some(12000)
        );
        assert_eq!(super::parse_statm_resident("52343\n"), None);
    }

    #[test]
    fn finds_this_process_listening() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let me = std::process::id();
        let holders = holders_of(port);
        assert!(holders.iter().any(|h| h.pid == me), "{holders:?}");
        assert!(listening_ports_of(me).contains(&port));
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        assert!(listening_addresses_of(me).contains(&addr));
        assert!(describe_holders(port).contains(&format!("PID {me}")));
        drop(listener);
        assert!(holders_of(port).is_empty());
    }

    #[test]
    fn reads_both_address_forms() {
        assert_eq!(
            parse_local_address("0100007F:1F90"),
            Some("127.0.0.1:8080".parse().unwrap())
        );
        assert_eq!(
            parse_local_address("00000000:2405"),
            Some("0.0.0.0:9221".parse().unwrap())
        );
        assert_eq!(
            parse_local_address("00000000000000000000000001000000:0050"),
            Some("[::1]:80".parse().unwrap())
        );
    }
}
