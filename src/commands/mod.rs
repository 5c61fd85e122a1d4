//! One module per subcommand; each takes its props and returns how it ended.

pub mod attach;
pub mod heap;
pub mod load;
pub mod report;
pub mod run;
pub mod sample;
pub mod snapshot;

/// Resolves on the first Ctrl-C or SIGTERM: both mean "stop the target,
/// keep what was measured".
pub async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async {
            match term.as_mut() {
                Some(term) => { term.recv().await; }
                None => std::future::pending::<()>().await,
            }
        } => {}
    }
}
