//! The process under test: launching it with the inspector on loopback,
//! readiness, and stopping it by PID. Reading /proc is `crate::procfs`.

mod launch;
mod watch;
mod watchdog;

pub use launch::{
    INSPECT_FLAG, LaunchSpec, Target, TargetError, describe_status, exit_status_of, inspector_port,
};
