//! Naming what keeps the memory, once a route's verdict says it is kept:
//! everything after the verdict lives here.
//!
//! - `route.rs`: the step the loop calls for a route that retains: one
//!   more cycle of the route's own work, sized to the growth measured,
//!   diagnosed, a failure a finding; `fresh.rs` the same in a fresh
//!   process, for a target that died of memory or is past a brake point;
//! - `snapshots/`: two heap snapshots around that cycle and the sampling
//!   heap profile, through the snapshot engine (`crate::snapshot`), to the
//!   holder and the storing line;
//! - `attribute/`: source maps and owners of every frame and holder;
//! - `native/`: off-heap growth in malloc'd memory, recorded by heaptrack
//!   in a fresh process of the target (`native/recorded.rs`);
//! - `allocator.rs`: the allocator A/B that tells fragmentation from a leak.

pub mod after_cap;
pub mod allocator;
pub mod attribute;
mod fresh;
pub mod native;
mod route;
pub mod snapshots;

pub use fresh::diagnose_fresh;
pub use native::recorded::diagnose_natively;
pub use route::{
    CHECK_FOLLOW_UP_SECONDS, DIAGNOSIS_CYCLE_TIME, DiagnosisProps, diagnose_route, follow_up_units,
    wants_diagnosis,
};
