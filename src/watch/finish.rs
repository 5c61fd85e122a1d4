//! The end of a watch, however it came (`-d`, a decision, Ctrl-C, the
//! process gone): the last readings, the evidence (the sites; a snapshot
//! only when not interrupted), leaving the target as it was found, and the
//! checkpoint's last line.

use serde_json::json;

use super::{FINISH_STEP, Watch, connect, evidence, route_of};
use crate::model::RunResult;
use crate::report::progress::Progress;
use crate::settings::WatchProps;

impl Watch {
    /// After the watch, however it ended: the last readings, the evidence
    /// (a snapshot only when not interrupted), leaving the target, and
    /// the checkpoint's last line.
    pub async fn finish(
        &mut self,
        props: &WatchProps,
        result: &mut RunResult,
        progress: &Progress,
        interrupted: bool,
    ) {
        let Some(attached) = self.attached.as_ref() else {
            return;
        };
        let inspector = attached.inspector.clone();
        let alive = matches!(
            tokio::time::timeout(FINISH_STEP, self.drain_into(props, result)).await,
            Ok(Ok(()))
        );
        // After Ctrl-C nothing more is forced: the profiles so far decide.
        if alive && !interrupted {
            self.profile(props, progress).await;
            // The profile's collection is a reading too.
            let _ = tokio::time::timeout(FINISH_STEP, self.drain_into(props, result)).await;
        }
        let route = route_of(result);
        if alive {
            if let Some(sampler) = &self.sampler {
                let naming = evidence::name_sites(&inspector, sampler, route);
                if tokio::time::timeout(FINISH_STEP, naming).await.is_err() {
                    progress.say("the allocation sites were not named: the target did not answer");
                }
            }
            if props.snapshot {
                let dir = props.snapshots.clone().unwrap_or_else(|| {
                    let checkpoint = self.checkpoint.as_ref().map(|c| c.path.clone());
                    checkpoint
                        .and_then(|p| p.parent().map(std::path::Path::to_path_buf))
                        .unwrap_or_default()
                });
                let taken = evidence::snapshot_within_headroom(
                    &inspector,
                    route,
                    &dir,
                    interrupted,
                    progress,
                )
                .await;
                if let Some(watch) = route.watch.as_mut() {
                    watch.snapshot = Some(taken);
                }
            }
        }
        let attached = self.attached.as_ref().expect("checked above");
        let detached = match alive {
            true => connect::leave(attached, self.observer.as_ref(), self.sampler.as_ref()).await,
            false => crate::model::Detached {
                left: vec!["the process stopped answering before leakcheck could leave it".into()],
                ..Default::default()
            },
        };
        if !detached.left.is_empty() {
            progress.say(&format!("warning: {}", detached.left.join("; ")));
        }
        if let Some(watch) = route.watch.as_mut() {
            watch.detached = detached;
        }
        if let Some(checkpoint) = self.checkpoint.as_mut() {
            let _ = checkpoint.append(
                "end",
                &json!({ "verdict": route.verdict, "watch": route.watch,
                         "allocation_sites": route.diagnosis.as_ref().map(|d| &d.allocation_sites) }),
            );
        }
        // The session closes last, before the frame stops a launched
        // command: Node that is exiting waits for its debugger to go before
        // it prints the error that ended it, which the report then shows.
        self.sampler = None;
        self.observer = None;
        self.attached = None;
    }
}
