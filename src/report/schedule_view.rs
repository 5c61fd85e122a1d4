//! How a `--cycles auto` route was decided, in one line every report
//! format prints beside the verdict.

use crate::model::{RouteResult, SequentialStop};

/// "decided after 15000 requests (3 cycles of 5000): growth clear of …",
/// or "not decided after …" for a route cut short.
pub fn decided_line(route: &RouteResult, unit: &str) -> Option<String> {
    let seq = route.sequential.as_ref()?;
    let head = match seq.stopped {
        SequentialStop::Undecided => "not decided",
        SequentialStop::Failed => "stopped",
        _ => "decided",
    };
    Some(format!(
        "{head} after {} {unit}s in {} cycle{} (--cycles auto, stopped: {}): {}",
        seq.decided_after_requests,
        seq.cycles,
        if seq.cycles == 1 { "" } else { "s" },
        seq.stopped.name(),
        seq.reason
    ))
}
