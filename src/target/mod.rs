//! The process under test: launching it with the inspector on loopback,
//! readiness, ports, and stopping it by PID.

mod launch;
pub mod port;
mod watch;

pub use launch::{INSPECT_FLAG, LaunchSpec, Stopped, Target, TargetError, describe_status};
