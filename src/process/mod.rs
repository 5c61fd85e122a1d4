//! The process under test: launching it with the inspector on loopback,
//! readiness, and stopping it by PID. Reading /proc is `crate::platform::procfs`.

mod cluster_ports;
mod launch;
mod launched_as;
mod launcher;
pub mod sweep;
mod watch;
mod watchdog;

pub use cluster_ports::PRELOAD as CLUSTER_PORTS_PRELOAD;
pub use launch::{
    INSPECT_FLAG, LaunchSpec, Target, TargetError, describe_status, exit_status_of, inspector_port,
    runs_node_directly,
};
pub use watch::exited;
