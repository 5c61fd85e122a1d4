//! What each subcommand was asked to do, as plain values grouped by
//! concern: the command layer resolves the command line into these once
//! (`commands/resolve/`), and everything after reads them. No clap type
//! reaches this module, so another front end (the npm API's flags, a
//! protocol server) builds the same settings.

mod attach;
mod bisect;
mod function;
mod heap;
mod load_command;
mod output;
mod page;
mod run;
mod watch;

pub use attach::{Attach, SampleProps, SnapshotProps};
pub use bisect::{BisectProps, BisectRange, Install};
pub use function::FnProps;
pub use heap::{DiffProps, InspectProps};
pub use load_command::LoadProps;
pub use output::{ReportProps, ReportSource};
pub use page::{PageProps, PageScenario};
pub use run::{
    DiscoverySettings, LoadSettings, MethodSettings, RequestProps, RoutesProps, RunSettings,
    SoakProps, TargetSettings,
};
pub use watch::{MetricsProps, Selection, WatchProps, WatchTarget};
