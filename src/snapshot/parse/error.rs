//! Why a heap snapshot could not be read, and the limits the parser
//! holds every file to.

/// Why a heap snapshot could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotParseError {
    #[error("cannot read the snapshot")]
    Io(#[source] std::io::Error),
    #[error("malformed snapshot at byte {offset}: expected {expected}")]
    Syntax { offset: u64, expected: String },
    #[error(
        "the snapshot ends at byte {offset} while {expected} was expected: the file is truncated \
         (was it copied while still being written?)"
    )]
    Truncated { offset: u64, expected: String },
    #[error("not a usable V8 heap snapshot: {0}")]
    Format(String),
}

/// A value that does not fit the graph's 32-bit columns.
pub(super) fn too_big(field: &str) -> SnapshotParseError {
    SnapshotParseError::Format(format!("a {field} value does not fit in 32 bits"))
}

/// Nodes a snapshot may hold: the dominator tree keeps a flag in the top
/// bit of a node number. (2^31 nodes would be over 50 GB of columns.)
pub(super) const MAX_NODES: u64 = 1 << 31;
