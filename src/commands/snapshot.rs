//! `leakcheck snapshot`: stream a heap snapshot from a running Node process
//! straight to a file created with mode 0600.

use std::time::Instant;

use serde_json::json;

use crate::cli::SnapshotProps;
use std::io::Write;

use crate::inspector::snapshot::{create_private_file, stream_snapshot_chunks};

use super::attach::connect_inspector;

pub async fn run(props: SnapshotProps) -> anyhow::Result<()> {
    let inspector = connect_inspector(&props.attach, props.allow_remote_inspector).await?;
    if props.gc {
        inspector
            .call("HeapProfiler.collectGarbage", json!({}))
            .await?;
    }
    let mut file = create_private_file(&props.output)
        .await
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", props.output.display()))?
        .into_std()
        .await;
    eprintln!("taking a heap snapshot: the target is paused while V8 writes it");
    let started = Instant::now();
    let bytes = stream_snapshot_chunks(&inspector, |chunk| file.write_all(chunk)).await?;
    file.flush()?;
    crate::report::to_stdout(&format!(
        "{}: {:.1} MB in {:.2} s\n",
        props.output.display(),
        bytes as f64 / crate::units::MB,
        started.elapsed().as_secs_f64()
    ))?;
    Ok(())
}
