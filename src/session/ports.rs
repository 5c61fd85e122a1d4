//! The URL's port before launch (refused when busy, naming its holder) and
//! after the target stopped (confirmed free).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::bail;

use crate::net::accepts_connections;
use crate::platform::procfs;

/// How long the port may stay busy after the target exited.
const PORT_RELEASE: Duration = Duration::from_secs(3);

pub async fn refuse_busy_port(addr: SocketAddr) -> anyhow::Result<()> {
    if accepts_connections(addr).await {
        bail!(
            "port {} on {} is already in use, {}: stop that process, or give --url the port your \
             server will listen on",
            addr.port(),
            addr.ip(),
            procfs::describe_holders(addr.port())
        );
    }
    Ok(())
}

pub async fn wait_port_free(addr: SocketAddr) -> bool {
    let started = Instant::now();
    while started.elapsed() < PORT_RELEASE {
        if !accepts_connections(addr).await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}
