//! rss split by owner, from `/proc/PID/smaps`: each mapping's header line
//! (`start-end perms offset dev inode path`) and its `Rss:` line.
//!
//! The kernel does not say which anonymous pages malloc owns and which V8
//! does, so the split reads the mappings' shapes:
//! - `[heap]` is the brk segment, malloc's main arena.
//! - glibc gives each thread arena its own `HEAP_MAX` reservation (64 MiB
//!   on 64-bit: twice the largest mmap threshold of 32 MiB), aligned to
//!   its size, committed from the start as it grows (`rw-p`) with the rest
//!   reserved (`---p`). A mapping that starts 64 MiB-aligned and whose
//!   committed and reserved parts span exactly 64 MiB is one. V8's pages
//!   are 256 KiB and its reservations larger, so they do not fit.
//! - A thread's stack is a `rw-p` mapping right above a one-page `---p`
//!   guard (glibc's default guard), and `[stack]` is the main one.
//! - Anything with a path is a mapped file (and `[vdso]`, `[vvar]`).
//!
//! V8's heap is anonymous too and the rest of it is known from the
//! inspector (`heapTotal`, its spaces' committed memory), so the split
//! takes it out of what is left (`RssParts::split`).

use crate::model::RssParts;

/// glibc's `HEAP_MAX_SIZE` on 64-bit: `2 * DEFAULT_MMAP_THRESHOLD_MAX`
/// (2 × 4 × 1 MiB × sizeof(long)).
const ARENA_SPAN: u64 = 64 * 1024 * 1024;
/// glibc's default stack guard: one page.
const GUARD_PAGE: u64 = 4096;

/// The anonymous and file-backed memory of one smaps reading, before V8's
/// share is known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MappedMemory {
    pub malloc: u64,
    pub stacks: u64,
    pub file_backed: u64,
    /// Anonymous memory that is neither malloc's nor a stack: V8's heap is here.
    pub anonymous: u64,
}

struct Mapping<'a> {
    start: u64,
    end: u64,
    perms: &'a str,
    path: &'a str,
    rss: u64,
}

/// Reads the mappings of an smaps text; `None` when it has none.
pub fn parse(text: &str) -> Option<MappedMemory> {
    let mappings = mappings(text);
    if mappings.is_empty() {
        return None;
    }
    let mut memory = MappedMemory::default();
    for (i, m) in mappings.iter().enumerate() {
        let next = mappings.get(i + 1);
        let previous = i.checked_sub(1).map(|p| &mappings[p]);
        let bucket = if m.path == "[heap]" || is_arena(m, next) {
            &mut memory.malloc
        } else if m.path.starts_with("[stack") || is_thread_stack(m, previous) {
            &mut memory.stacks
        } else if m.path.is_empty() {
            &mut memory.anonymous
        } else {
            &mut memory.file_backed
        };
        *bucket += m.rss;
    }
    Some(memory)
}

fn is_arena(m: &Mapping, next: Option<&Mapping>) -> bool {
    if !m.path.is_empty() || m.perms != "rw-p" || !m.start.is_multiple_of(ARENA_SPAN) {
        return false;
    }
    let committed = m.end - m.start;
    let reserved = next
        .filter(|n| n.start == m.end && n.perms == "---p" && n.path.is_empty())
        .map_or(0, |n| n.end - n.start);
    committed + reserved == ARENA_SPAN
}

fn is_thread_stack(m: &Mapping, previous: Option<&Mapping>) -> bool {
    m.path.is_empty()
        && m.perms == "rw-p"
        && previous
            .is_some_and(|p| p.end == m.start && p.perms == "---p" && p.end - p.start == GUARD_PAGE)
}

fn mappings(text: &str) -> Vec<Mapping<'_>> {
    let mut out: Vec<Mapping> = Vec::new();
    for line in text.lines() {
        if let Some(kb) = line.strip_prefix("Rss:") {
            let kb: u64 = kb.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
            if let Some(last) = out.last_mut() {
                last.rss = kb.saturating_mul(1024);
            }
        } else if let Some(mapping) = header(line) {
            out.push(mapping);
        }
    }
    out
}

/// `7fb6f8000000-7fb6f810c000 rw-p 00000000 00:00 0   [heap]`; field
/// lines (`Rss:  4 kB`) have no `-` range and are not headers.
fn header(line: &str) -> Option<Mapping<'_>> {
    let mut fields = line.splitn(6, ' ');
    let (start, end) = fields.next()?.split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    let perms = fields.next()?;
    if perms.len() != 4 || end < start {
        return None;
    }
    let _offset = fields.next()?;
    let _device = fields.next()?;
    let _inode = fields.next()?;
    let path = fields.next().unwrap_or("").trim();
    Some(Mapping {
        start,
        end,
        perms,
        path,
        rss: 0,
    })
}

impl RssParts {
    /// Takes V8's heap (`heap_total`, committed) out of the anonymous
    /// memory that is not malloc's; what V8 commits beyond it is untouched
    /// and not resident.
    pub fn split(mapped: MappedMemory, heap_total: u64) -> RssParts {
        let v8_heap = heap_total.min(mapped.anonymous);
        RssParts {
            v8_heap,
            malloc: mapped.malloc,
            other_anonymous: mapped.anonymous - v8_heap,
            file_backed: mapped.file_backed,
            stacks: mapped.stacks,
        }
    }
}

/// Reads `/proc/PID/smaps` and splits it; `None` when it cannot be read
/// (another user's process, a target in another pid namespace, gone).
pub async fn read(pid: u32, heap_total: u64) -> Option<RssParts> {
    let text = crate::platform::procfs::smaps_text(pid).await.ok()?;
    Some(RssParts::split(parse(&text)?, heap_total))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
00400000-00401000 r-xp 00000000 fe:00 123    /usr/bin/node
Rss:                   4 kB
38d1e000-3bf43000 rw-p 00000000 00:00 0      [heap]
Rss:               51228 kB
1985d1c0000-1985d200000 rw-p 00000000 00:00 0 
Rss:                 256 kB
7fb6f8000000-7fb6f810c000 rw-p 00000000 00:00 0 
Rss:                 412 kB
7fb6f810c000-7fb6fc000000 ---p 00000000 00:00 0 
Rss:                   0 kB
7fb70effe000-7fb70efff000 ---p 00000000 00:00 0 
Rss:                   0 kB
7fb70efff000-7fb70f7ff000 rw-p 00000000 00:00 0 
Rss:                   8 kB
7fb734000000-7fb734100000 rw-p 00000000 00:00 0 
Rss:                  20 kB
7fb734100000-7fb734200000 ---p 00000000 00:00 0 
Rss:                   0 kB
7ffd1c000000-7ffd1c021000 rw-p 00000000 00:00 0      [stack]
Rss:                 132 kB
";

    #[test]
    fn mappings_are_split_by_their_shape() {
        let memory = parse(SMAPS).unwrap();
        // [heap] and the 64 MiB arena.
        assert_eq!(memory.malloc, (51228 + 412) * 1024);
        // The guarded thread stack and [stack].
        assert_eq!(memory.stacks, (8 + 132) * 1024);
        assert_eq!(memory.file_backed, 4 * 1024);
        // A V8 page, and an aligned mapping that does not span 64 MiB.
        assert_eq!(memory.anonymous, (256 + 20) * 1024);
    }

    #[test]
    fn v8_heap_comes_out_of_the_anonymous_rest() {
        let mapped = MappedMemory {
            malloc: 10,
            stacks: 1,
            file_backed: 5,
            anonymous: 100,
        };
        let parts = RssParts::split(mapped, 60);
        assert_eq!((parts.v8_heap, parts.other_anonymous), (60, 40));
        assert_eq!(parts.total(), 116);
        // A heap committed beyond what is resident takes all of it, no more.
        assert_eq!(RssParts::split(mapped, 500).other_anonymous, 0);
    }

    #[test]
    fn text_without_mappings_is_none() {
        assert_eq!(parse(""), None);
        assert_eq!(parse("Rss: 4 kB\nnot a header\n"), None);
    }

    #[test]
    fn this_process_splits_into_what_status_reports() {
        let text = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let memory = parse(&text).unwrap();
        assert!(memory.file_backed > 0);
        assert!(memory.stacks > 0);
    }
}
