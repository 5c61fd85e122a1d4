//! The integration tests, one binary: real `node` targets on 127.0.0.1 and
//! the real `leakcheck` binary, split by topic. `util` holds what they
//! share (the argument builder, the typed result, process guards).

mod docs_util;
mod page_util;
mod util;

mod action;
mod arm64;
mod attach;
mod attribution;
mod bisect;
mod deadlines;
mod diagnose;
mod docs;
mod evidence;
mod faults;
mod frameworks;
mod function;
mod handles;
mod hostile;
mod known;
mod layering;
mod load;
mod mcp;
mod memory;
mod native;
mod nextjs;
mod npm;
mod page;
mod page_actions;
mod page_collections;
mod parsers_never_panic;
mod report_views;
mod reports;
mod routes;
mod run_demo;
mod run_faults;
mod runtimes;
mod sequential;
mod shards;
mod snapshots;
mod soak;
mod static_binary;
mod time_growth;
mod too_little;
mod traffic;
mod verdicts;
mod watch;
mod watch_fleet;
