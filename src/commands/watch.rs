//! `leakcheck watch`: attach to a live process (or start one), judge it
//! under its own traffic until `-d`, a decision or Ctrl-C, leave it as it
//! was, and report. The watching itself is `crate::watch`; this is the
//! frame around it, as for `run`.

use super::frame::{Frame, RunEnd};
use crate::model::{RunResult, Settings, TargetInfo, WatchSettings};
use crate::process::Target;
use crate::settings::{WatchProps, WatchTarget};
use crate::watch::Watch;
use crate::watch::fleet::Fleet;

/// How long a launched command whose watch failed has to show it is
/// exiting before it is stopped.
const DYING_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

pub async fn run(props: WatchProps) -> anyhow::Result<RunEnd> {
    let frame = Frame::open(
        &props.output,
        props.snapshots.as_deref(),
        props.quiet,
        false,
    )?;
    let mut result = new_result(&props);
    if let WatchTarget::Fleet(selection) = &props.target {
        let mut fleet = Fleet::default();
        let work = fleet.run(&props, selection, &mut result, &frame.progress);
        let measured = frame.guard(work, None).await;
        frame.progress.end_live();
        fleet
            .finish(&mut result, &frame.progress, measured.is_err())
            .await;
        frame.record(&mut result, measured, None, None);
        return frame.close(result);
    }
    let (faults, mut fault) = tokio::sync::watch::channel(None::<String>);
    let mut launched: Option<Target> = None;
    let mut watch = Watch::default();
    let server = match &props.metrics {
        Some(metrics) => {
            let board = crate::watch::metrics::Board::default();
            watch.board = Some(board.clone());
            Some(crate::watch::endpoint::start(metrics, &board, &frame.progress).await?)
        }
        None => None,
    };
    let work = watch.run(&props, &mut launched, faults, &mut result, &frame.progress);
    let measured = frame.guard(work, Some(&mut fault)).await;
    frame.progress.end_live();
    let interrupted = measured.is_err();
    watch
        .finish(&props, &mut result, &frame.progress, interrupted)
        .await;
    let failed = matches!(measured, Ok(Err(_)));
    if failed && launched.is_some() {
        // A watch that failed early may have failed because its command is
        // dying; Node prints what killed it only after the session closed
        // (`finish` closed it). A moment for that, so that the command is
        // found exited with its error rather than stopped before it spoke.
        let _ = tokio::time::timeout(DYING_GRACE, fault.wait_for(Option::is_some)).await;
    }
    if let Some(server) = server {
        server.abort();
    }
    let stopped = frame.stop(launched.as_mut(), "the watched command").await;
    frame.record(&mut result, measured, launched.as_ref(), stopped);
    frame.close(result)
}

fn new_result(props: &WatchProps) -> RunResult {
    let command = match &props.target {
        WatchTarget::Launch { command, .. } => command.clone(),
        _ => Vec::new(),
    };
    RunResult::starting(
        TargetInfo {
            command,
            ..TargetInfo::default()
        },
        Settings {
            method: "watch".into(),
            watch: Some(WatchSettings {
                duration_s: props.duration.map(|d| d.as_secs_f64()),
                until_decided: props.until_decided,
                force_gc_every_s: props.force_gc_every.map(|d| d.as_secs_f64()),
                max_pause_ms: props.max_pause.as_secs_f64() * 1000.0,
                sample_interval_bytes: props.sample_interval,
            }),
            ..Settings::default()
        },
    )
}
