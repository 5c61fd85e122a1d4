//! From readings to meaning, as pure functions over the model: per-series
//! fits (`metric`, over the least squares of `fit`), then one verdict per
//! route from the rows of the method's reading table (`classify`).

pub mod action;
pub mod budget;
mod classify;
pub mod collections;
pub mod exhaustion;
mod findings;
pub mod fit;
pub mod handles;
pub mod isolates;
pub mod metric;
mod not_judged;
pub mod over_time;
pub mod pace;
pub mod page_action;
pub mod peak;
pub mod projection;
mod refresh;
pub mod sequential;
mod slowdown;
#[cfg(test)]
pub(crate) mod test_cycles;
pub mod time_trend;
pub mod watch;

pub use classify::Options;
pub use metric::Noise;
pub use not_judged::not_judged;
pub use refresh::refresh;
