//! Why a load run could not start or finish.

use std::net::SocketAddr;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("nothing accepts connections on {0}: start the server first, or check the URL's port")]
    Refused(SocketAddr),
    #[error("cannot connect to {addr}")]
    Connect {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("the load generator thread failed")]
    Thread(#[source] std::io::Error),
    #[error("the load generator stopped unexpectedly")]
    Stopped(#[from] tokio::task::JoinError),
    #[error("the load generator thread panicked")]
    Panicked,
    #[error("a request cannot be prepared: {0}")]
    Request(#[from] super::request::PrepareError),
}
