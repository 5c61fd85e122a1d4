//! Where a process' resident memory is: rss split by what owns the pages
//! (`probe/smaps.rs` reads them). The off-heap row of the verdict says
//! which part grows, because each points somewhere else: V8's heap to a
//! heap snapshot, malloc's heap to native code (an addon, zlib, a driver),
//! mapped files to code or `mmap`ed data, stacks to threads.

use serde::{Deserialize, Serialize};

/// One reading of rss, split; bytes. The parts sum to the rss that
/// `/proc/PID/smaps` reported at that moment (which can differ by a few
/// pages from `process.memoryUsage().rss`, read a moment apart).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RssParts {
    /// V8's heap: its spaces' committed memory (`heapTotal`), as far as
    /// the anonymous pages hold it.
    pub v8_heap: u64,
    /// What malloc handed out: the `[heap]` segment and glibc's thread
    /// arenas (64 MiB-aligned anonymous mappings).
    pub malloc: u64,
    /// Anonymous memory that is neither: malloc's large blocks (served by
    /// their own `mmap`), Buffers' backing stores of that size, JIT code,
    /// other allocators.
    pub other_anonymous: u64,
    /// Pages of mapped files: the node binary, shared libraries, addons,
    /// files the process `mmap`s.
    pub file_backed: u64,
    /// The main stack and threads' stacks.
    pub stacks: u64,
}

/// One of the parts, as a series the verdict fits (`rss.malloc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RssPart {
    V8Heap,
    Malloc,
    OtherAnonymous,
    FileBacked,
    Stacks,
}

impl RssPart {
    pub const ALL: [RssPart; 5] = [
        RssPart::V8Heap,
        RssPart::Malloc,
        RssPart::OtherAnonymous,
        RssPart::FileBacked,
        RssPart::Stacks,
    ];

    /// The series' name in the JSON.
    pub fn series_name(self) -> &'static str {
        match self {
            RssPart::V8Heap => "rss.v8_heap",
            RssPart::Malloc => "rss.malloc",
            RssPart::OtherAnonymous => "rss.other_anonymous",
            RssPart::FileBacked => "rss.file_backed",
            RssPart::Stacks => "rss.stacks",
        }
    }

    /// What a person calls it, for "2.1 KB per request in malloc'd memory".
    pub fn words(self) -> &'static str {
        match self {
            RssPart::V8Heap => "V8's heap",
            RssPart::Malloc => "malloc'd memory",
            RssPart::OtherAnonymous => "other anonymous memory",
            RssPart::FileBacked => "mapped files",
            RssPart::Stacks => "stacks",
        }
    }

    pub fn from_series_name(name: &str) -> Option<RssPart> {
        RssPart::ALL.into_iter().find(|p| p.series_name() == name)
    }
}

impl RssParts {
    pub fn get(&self, part: RssPart) -> u64 {
        match part {
            RssPart::V8Heap => self.v8_heap,
            RssPart::Malloc => self.malloc,
            RssPart::OtherAnonymous => self.other_anonymous,
            RssPart::FileBacked => self.file_backed,
            RssPart::Stacks => self.stacks,
        }
    }

    pub fn total(&self) -> u64 {
        RssPart::ALL.into_iter().map(|p| self.get(p)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_has_its_own_series_name() {
        for part in RssPart::ALL {
            assert_eq!(RssPart::from_series_name(part.series_name()), Some(part));
        }
        assert_eq!(RssPart::from_series_name("rss"), None);
    }
}
