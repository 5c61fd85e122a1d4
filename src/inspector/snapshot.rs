//! Streaming a heap snapshot out of the target: `HeapProfiler.takeHeapSnapshot`
//! answers only after V8 has sent the whole file as
//! `HeapProfiler.addHeapSnapshotChunk` events, which are written as they
//! arrive so the snapshot is never held whole in leakcheck's memory.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::{Inspector, InspectorError};

/// V8 stops the target while it writes; a snapshot of several hundred MB
/// took 23 s here, so the bound is generous.
pub const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(600);

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error(transparent)]
    Inspector(#[from] InspectorError),
    #[error("cannot write the snapshot")]
    Write(#[from] std::io::Error),
}

/// Takes a snapshot and writes its chunks to `sink`; returns the bytes written.
pub async fn stream_snapshot<W: AsyncWrite + Unpin>(
    inspector: &Inspector,
    sink: &mut W,
) -> Result<u64, SnapshotError> {
    let mut events = inspector.subscribe();
    let params = json!({ "reportProgress": false, "captureNumericValue": false });
    let call = inspector.call_within("HeapProfiler.takeHeapSnapshot", params, SNAPSHOT_TIMEOUT);
    let mut call = std::pin::pin!(call);
    let mut written = 0u64;
    loop {
        tokio::select! {
            biased;
            event = events.recv() => match event {
                Some(event) => written += write_chunk(&event.method, &event.params, sink).await?,
                None => return Err(InspectorError::Disconnected.into()),
            },
            answer = &mut call => {
                answer?;
                // Every chunk was routed before the answer: drain what is queued.
                while let Ok(event) = events.try_recv() {
                    written += write_chunk(&event.method, &event.params, sink).await?;
                }
                sink.flush().await?;
                return Ok(written);
            }
        }
    }
}

async fn write_chunk<W: AsyncWrite + Unpin>(
    method: &str,
    params: &Value,
    sink: &mut W,
) -> std::io::Result<u64> {
    if method != "HeapProfiler.addHeapSnapshotChunk" {
        return Ok(0);
    }
    let chunk = params.get("chunk").and_then(Value::as_str).unwrap_or("");
    sink.write_all(chunk.as_bytes()).await?;
    Ok(chunk.len() as u64)
}

/// Opens `path` for a snapshot with mode 0600: heaps hold request headers,
/// tokens and secrets, so only the owner may read them.
pub async fn create_private_file(path: &Path) -> std::io::Result<tokio::fs::File> {
    let mut options = tokio::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true).mode(0o600);
    let file = options.open(path).await?;
    // An existing file keeps its old mode through O_TRUNC; set it anyway.
    use std::os::unix::fs::PermissionsExt;
    tokio::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).await?;
    Ok(file)
}
