//! The HTTP/1.1 load generator: exact request counts or durations over
//! keep-alive connections, an optional constant arrival rate, latencies in an
//! HDR histogram, and every error and non-2xx response counted.
//!
//! `LoadPlan` says what to send; `LoadRun::start` sends it on its own thread
//! and `LoadRun::finish` returns the `LoadReport`.

mod connection;
mod cookies;
mod engine;
mod error;
mod plan;
mod request;
pub mod scenario;
mod shared;
mod stats;
pub mod template;
mod vu;
mod worker;

pub use engine::LoadRun;
pub use error::LoadError;
pub use plan::{LoadPlan, Stop};
pub use request::{PrepareError, PreparedRequest, RequestError, RequestSpec, framing_header};
pub use scenario::Scenario;
pub use shared::LoadProgress;
pub use stats::ErrorKind;
