//! The process's own limits: open files. Each load connection is a socket,
//! and leakcheck also holds the inspector's WebSocket, the target's pipes,
//! /proc reads and the runtime's own descriptors. Running out of them
//! (EMFILE) mid-run made a healthy target look exited, so the soft limit is
//! raised to the hard one at start, and a `-c` the limit cannot hold is
//! refused before anything starts.

/// Descriptors leakcheck needs besides its load connections: the runtime
/// (epoll, eventfds, signal pipes), stdio, the target's three pipes, the
/// inspector socket, /proc and snapshot files, and one reconnect in flight
/// per worker. 64 leaves room; measured use beside the connections is ~20.
pub const RESERVED_DESCRIPTORS: u64 = 64;

/// The RLIMIT_NOFILE pair (soft, hard); `None` when it cannot be read.
fn open_files() -> Option<libc::rlimit> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only the struct passed.
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0).then_some(limit)
}

/// Raises the soft RLIMIT_NOFILE to the hard limit (once, at start);
/// returns the soft limit in force afterwards.
pub fn raise_open_files() -> u64 {
    let Some(mut limit) = open_files() else {
        return u64::MAX;
    };
    // SAFETY: setrlimit reads only the struct passed.
    unsafe {
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit.rlim_cur = limit.rlim_max;
            }
        }
    }
    limit.rlim_cur
}

/// Refuses a connection count the open-file limit (raised at start)
/// cannot hold.
pub fn check_connections(connections: usize) -> anyhow::Result<()> {
    let limit = open_files().map_or(u64::MAX, |l| l.rlim_cur);
    let needed = connections as u64 + RESERVED_DESCRIPTORS;
    if needed > limit {
        anyhow::bail!(
            "-c {connections} needs about {needed} open files, and this process may open {limit} \
             (ulimit -n): lower -c to {} or less, or raise the hard limit (ulimit -Hn)",
            limit.saturating_sub(RESERVED_DESCRIPTORS)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_count_beyond_the_limit_is_refused() {
        let limit = raise_open_files();
        assert!(check_connections(10).is_ok());
        if limit < u64::MAX / 2 {
            let error = check_connections(limit as usize).unwrap_err().to_string();
            assert!(error.contains("ulimit"), "{error}");
        }
    }
}
