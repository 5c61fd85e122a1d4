//! Streaming a heap snapshot out of the target: `HeapProfiler.takeHeapSnapshot`
//! answers only after V8 has sent the whole file as
//! `HeapProfiler.addHeapSnapshotChunk` events, which are written as they
//! arrive so the snapshot is never held whole in leakcheck's memory.
//! Bun (WebKit's protocol) has no such command: it writes a snapshot in
//! V8's format to a private file when asked by evaluation, which is then
//! read in the same chunks.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Dialect, Inspector, InspectorError};

/// V8 stops the target while it writes; a snapshot of several hundred MB
/// took 23 s here, so the bound is generous.
pub const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(600);

#[derive(Debug, thiserror::Error)]
pub enum SnapshotTransferError {
    #[error(transparent)]
    Inspector(#[from] InspectorError),
    #[error("cannot write the snapshot")]
    Write(#[from] std::io::Error),
}

/// Takes a snapshot and hands each chunk to `on_chunk` as it arrives (to
/// feed a parser on another thread, or a file); returns the bytes passed.
pub async fn stream_snapshot_chunks(
    inspector: &Inspector,
    mut on_chunk: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> Result<u64, SnapshotTransferError> {
    if inspector.dialect == Dialect::WebKit {
        return written_by_bun(inspector, on_chunk).await;
    }
    let mut events = inspector.subscribe();
    let params = json!({ "reportProgress": false, "captureNumericValue": false });
    let call = inspector.call_within("HeapProfiler.takeHeapSnapshot", params, SNAPSHOT_TIMEOUT);
    let mut call = std::pin::pin!(call);
    let mut passed = 0u64;
    let mut take = |event: super::Event, passed: &mut u64| -> std::io::Result<()> {
        if event.method == "HeapProfiler.addHeapSnapshotChunk" {
            let chunk = event
                .params
                .get("chunk")
                .and_then(Value::as_str)
                .unwrap_or("");
            *passed += chunk.len() as u64;
            on_chunk(chunk.as_bytes())?;
        }
        Ok(())
    };
    loop {
        tokio::select! {
            biased;
            event = events.recv() => match event {
                Some(event) => take(event, &mut passed)?,
                None => return Err(InspectorError::Disconnected.into()),
            },
            answer = &mut call => {
                answer?;
                while let Ok(event) = events.try_recv() {
                    take(event, &mut passed)?;
                }
                return Ok(passed);
            }
        }
    }
}

/// How much of a snapshot file Bun wrote is handed on at a time: the size
/// of V8's own chunks is of this order.
const FILE_CHUNK: usize = 1 << 20;

/// Bun's snapshot in V8's format: `Bun.generateHeapSnapshot("v8")` written
/// by the target into a private folder of ours (the target runs on this
/// machine: the inspector is loopback only), read back, and removed.
async fn written_by_bun(
    inspector: &Inspector,
    mut on_chunk: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> Result<u64, SnapshotTransferError> {
    let folder = tempfile::Builder::new()
        .prefix("leakcheck-bun-snapshot")
        .tempdir()?;
    let path = folder.path().join("bun.heapsnapshot");
    let quoted = serde_json::to_string(&path.display().to_string()).unwrap_or_default();
    let expression = format!("Bun.write({quoted}, Bun.generateHeapSnapshot('v8')).then(n => n)");
    inspector
        .evaluate_promise_within(&expression, SNAPSHOT_TIMEOUT)
        .await?;
    let mut file = std::fs::File::open(&path)?;
    let mut buffer = vec![0u8; FILE_CHUNK];
    let mut passed = 0u64;
    loop {
        let n = std::io::Read::read(&mut file, &mut buffer)?;
        if n == 0 {
            return Ok(passed);
        }
        passed += n as u64;
        on_chunk(&buffer[..n])?;
    }
}

/// A `Read` over chunks sent from another thread: lets the synchronous
/// snapshot parser consume a snapshot while the inspector still sends it.
pub struct ChunkReader {
    chunks: std::sync::mpsc::Receiver<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
}

impl ChunkReader {
    pub fn new(chunks: std::sync::mpsc::Receiver<Vec<u8>>) -> ChunkReader {
        ChunkReader {
            chunks,
            current: Vec::new(),
            at: 0,
        }
    }
}

impl std::io::Read for ChunkReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.current.len() {
            match self.chunks.recv() {
                Ok(chunk) => {
                    self.current = chunk;
                    self.at = 0;
                }
                // The sender is gone: the snapshot is complete (or aborted,
                // which the parser reports as a truncation).
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.current.len() - self.at);
        out[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}
