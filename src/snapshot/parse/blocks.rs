//! The `nodes` and `edges` arrays scanned on every core, still in one
//! streaming pass.
//!
//! The reading thread copies the array's text in blocks of `BLOCK` bytes,
//! each cut after its last comma so that no number is split (the rest
//! starts the next block), and counts the block's commas: so it knows,
//! before any worker parses a block, the index of the block's first number,
//! which says the field each number is. It hands each block to a worker
//! with its stretch of every column (`slots.rs`); workers turn the text
//! into numbers and store them there, side by side, with no lock. So the
//! input is still read once, front to back, as it arrives (a snapshot
//! streamed over the inspector is never held whole), and the columns are
//! the ones a number-by-number scanner fills: `blocks_tests.rs` compares
//! them with the one-pass reference (`Scanner::uint_array`) wherever the
//! blocks cut. With one thread (`-j 1`) the reading thread parses each
//! block itself as soon as it is cut.
//!
//! A worker parses its block's whole records straight into their columns
//! while the text is as V8 writes it (`fused.rs`); what is left (the
//! numbers before the first whole record, anything irregular and all after
//! it, the block's last bytes) goes in pieces of a sixteenth of a block,
//! each in two passes (text into numbers, numbers into their columns), so
//! the numbers between the passes stay in the core's cache.
//!
//! Columns reserved from the header's counts take the whole array in one
//! stretch. When they are full (a stream of unknown size, a header that
//! undercounts), the blocks in flight are finished, the columns grow, and
//! a new stretch starts.
//!
//! Memory beyond the columns is the blocks in flight: at most
//! `IN_FLIGHT_PER_WORKER` per worker, each `BLOCK` bytes of text plus its
//! numbers (about twice that), about 12 MB on two workers.
//!
//! Hand-written, like `scan.rs`: the per-number work is what the whole
//! engine's speed rests on.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::mpsc;

use super::block_text::BlockText;
use super::error::SnapshotParseError;
use super::fused;
use super::numbers::{Piece, scan_numbers};
use super::records::{Columns, Records};
use super::scan::Scanner;
use super::slots::{Room, Slots, commit};

/// Bytes of array text per block: large next to the per-block cost
/// (a channel message, carving its slots), small next to any snapshot
/// worth splitting.
pub(super) const BLOCK: usize = 1 << 20;
/// Pieces a block is parsed in: a piece's numbers (64 KiB of text in a
/// 1 MiB block, about 16 000 numbers of 8 bytes) stay in the core's own
/// cache between the two passes over them, where a whole block's (2 MB)
/// did not: the nodes and edges phases 8–11 % faster (BENCHMARKS.md).
const PIECES_PER_BLOCK: usize = 16;
/// Blocks queued or being parsed per worker: two keep a worker busy while
/// the reading thread reads the next.
const IN_FLIGHT_PER_WORKER: usize = 2;

/// One block of an array's text and where it sits.
struct Block {
    bytes: BlockText,
    /// Absolute offset of `bytes[0]` in the input, for errors.
    offset: u64,
    /// The block's place in the array: 0, 1, 2…
    seq: u64,
    /// The array's `]` follows the block: its last number ends there.
    last: bool,
    /// Numbers in the block, if its text is well formed: its commas (and
    /// one more after the last comma of the array).
    count: usize,
}

/// A block, the index of its first number, and where its numbers go.
struct Job<'a> {
    block: Block,
    first: u64,
    slots: Slots<'a>,
}

impl<'a> Job<'a> {
    /// The job of `block`, the next after `numbers` numbers: its slots
    /// carved from `room` (and `numbers` moved past it), or the block back
    /// when the room is full.
    fn place(
        block: Block,
        room: &mut Room<'a>,
        layout: &Records,
        numbers: &mut u64,
    ) -> Result<Job<'a>, Block> {
        let Some(slots) = room.carve(layout, *numbers, block.count) else {
            return Err(block);
        };
        let first = *numbers;
        *numbers += block.count as u64;
        Ok(Job {
            block,
            first,
            slots,
        })
    }
}

/// What a worker made of a block: its buffer back, for the next block.
type Parsed = Result<BlockText, SnapshotParseError>;

/// How a stretch of the columns ended.
enum Stretch {
    /// The array's `]` was reached.
    Done,
    /// The columns are full; this block is the first that did not fit.
    Full(Block),
}

/// Scans `[n, n, …]` into columns on `workers` threads (one: on this
/// thread, with no other). The scanner must be just before the `[`.
/// Returns the columns and the count of numbers.
pub(super) fn scan_array<R: Read>(
    scan: &mut Scanner<R>,
    layout: &Records,
    reserve_records: usize,
    workers: usize,
    block_size: usize,
) -> Result<(Columns, u64), SnapshotParseError> {
    scan.expect(b'[')?;
    let mut columns = Columns::with_capacity(layout, reserve_records);
    let mut cutter = Cutter {
        carry: Vec::new(),
        seq: 0,
        block_size,
    };
    let mut numbers = 0u64;
    let mut waiting = None;
    loop {
        let mut room = Room::new(&mut columns);
        let end = if workers > 1 {
            fill_stretch(
                scan,
                layout,
                &mut room,
                &mut cutter,
                waiting.take(),
                &mut numbers,
                workers,
            )?
        } else {
            fill_stretch_here(
                scan,
                layout,
                &mut room,
                &mut cutter,
                waiting.take(),
                &mut numbers,
            )?
        };
        let carved = room.carved();
        // SAFETY: the stretch ended Ok: every block given slots was parsed
        // (by a worker, or here) without error, so all were written.
        unsafe { commit(&mut columns, carved) };
        match end {
            Stretch::Done => return Ok((columns, numbers)),
            Stretch::Full(block) => {
                // Double the columns, and at least room for this block.
                let records = (numbers / layout.width() as u64) as usize;
                let needed = block.count.div_ceil(layout.width()) + 1;
                columns.reserve_records(layout, records.max(needed));
                waiting = Some(block);
            }
        }
    }
}

/// Parses blocks into `room` until the array ends or the room is full.
fn fill_stretch<'a, R: Read>(
    scan: &mut Scanner<R>,
    layout: &Records,
    room: &mut Room<'a>,
    cutter: &mut Cutter,
    mut waiting: Option<Block>,
    numbers: &mut u64,
    workers: usize,
) -> Result<Stretch, SnapshotParseError> {
    let workers = workers.max(1);
    let piece_size = (cutter.block_size / PIECES_PER_BLOCK).max(1);
    std::thread::scope(|scope| {
        let mut feed = Feed {
            senders: Vec::with_capacity(workers),
            results: Vec::with_capacity(workers),
            pending: VecDeque::new(),
            next: 0,
            spare: Vec::new(),
        };
        for _ in 0..workers {
            let (job_tx, job_rx) = mpsc::sync_channel::<Job<'a>>(IN_FLIGHT_PER_WORKER);
            let (done_tx, done_rx) = mpsc::sync_channel::<Parsed>(IN_FLIGHT_PER_WORKER);
            scope.spawn(move || {
                let mut numbers = Vec::new();
                for job in job_rx {
                    if done_tx
                        .send(parse_block(job, layout, piece_size, &mut numbers))
                        .is_err()
                    {
                        return;
                    }
                }
            });
            feed.senders.push(job_tx);
            feed.results.push(done_rx);
        }
        // Dropping `feed` on the way out ends the workers; the scope joins them.
        loop {
            let block = match waiting.take() {
                Some(block) => block,
                None => match cutter.next(scan, feed.spare.pop().unwrap_or_default()) {
                    Ok(block) => block,
                    // An earlier block's error comes first, as it would in one pass.
                    Err(e) => return feed.drain().and(Err(e)),
                },
            };
            let job = match Job::place(block, room, layout, numbers) {
                Ok(job) => job,
                Err(block) => {
                    feed.drain()?;
                    return Ok(Stretch::Full(block));
                }
            };
            let last = job.block.last;
            feed.send(job)?;
            if last {
                feed.drain()?;
                return Ok(Stretch::Done);
            }
        }
    })
}

/// `fill_stretch` on the calling thread alone: the same blocks, parsed
/// as they are cut (`-j 1`, and the earlier snapshot of a small `diff`,
/// read beside the later one).
fn fill_stretch_here<'a, R: Read>(
    scan: &mut Scanner<R>,
    layout: &Records,
    room: &mut Room<'a>,
    cutter: &mut Cutter,
    mut waiting: Option<Block>,
    numbers: &mut u64,
) -> Result<Stretch, SnapshotParseError> {
    let piece_size = (cutter.block_size / PIECES_PER_BLOCK).max(1);
    let mut parsed = Vec::new();
    let mut spare = BlockText::default();
    loop {
        let block = match waiting.take() {
            Some(block) => block,
            None => cutter.next(scan, std::mem::take(&mut spare))?,
        };
        let job = match Job::place(block, room, layout, numbers) {
            Ok(job) => job,
            Err(block) => return Ok(Stretch::Full(block)),
        };
        let last = job.block.last;
        spare = parse_block(job, layout, piece_size, &mut parsed)?;
        if last {
            return Ok(Stretch::Done);
        }
    }
}

/// Cuts the array's text into blocks that end after a comma.
struct Cutter {
    /// Text after the last block's last comma: the next block starts with it.
    carry: Vec<u8>,
    /// The next block's place.
    seq: u64,
    block_size: usize,
}

impl Cutter {
    /// The next block, read into `bytes` (a spare buffer).
    fn next<R: Read>(
        &mut self,
        scan: &mut Scanner<R>,
        mut bytes: BlockText,
    ) -> Result<Block, SnapshotParseError> {
        loop {
            bytes.clear();
            let offset = scan.offset() - self.carry.len() as u64;
            bytes.extend_from_slice(&self.carry);
            self.carry.clear();
            let last = scan.array_text(&mut bytes, self.block_size)?;
            if !last {
                let Some(cut) = memchr::memrchr(b',', bytes.text()) else {
                    // No comma: whitespace between numbers is dropped (the
                    // next block's offset follows the input); anything else
                    // is the start of a number that waits for its comma.
                    if !bytes.text().iter().all(u8::is_ascii_whitespace) {
                        self.carry.extend_from_slice(bytes.text());
                    }
                    continue;
                };
                self.carry.extend_from_slice(&bytes.text()[cut + 1..]);
                bytes.truncate(cut + 1);
            }
            // memchr's count is vectorised: a plain filter-count here was
            // a seventh of a second on a 440 MB snapshot.
            let commas = memchr::memchr_iter(b',', bytes.text()).count();
            let after_last_comma = last && !bytes.text().iter().all(u8::is_ascii_whitespace);
            let block = Block {
                count: commas + usize::from(after_last_comma),
                bytes,
                offset,
                seq: self.seq,
                last,
            };
            self.seq += 1;
            return Ok(block);
        }
    }
}

/// The reading thread's side: jobs out in order, results back in order.
struct Feed<'a> {
    senders: Vec<mpsc::SyncSender<Job<'a>>>,
    results: Vec<mpsc::Receiver<Parsed>>,
    /// Workers of the jobs sent and not yet received, oldest first.
    pending: VecDeque<usize>,
    /// The worker the next job goes to (round robin).
    next: usize,
    /// Block buffers come back, for the next blocks.
    spare: Vec<BlockText>,
}

impl<'a> Feed<'a> {
    fn send(&mut self, job: Job<'a>) -> Result<(), SnapshotParseError> {
        if self.pending.len() >= self.senders.len() * IN_FLIGHT_PER_WORKER {
            self.receive_one()?;
        }
        let worker = self.next;
        self.next = (self.next + 1) % self.senders.len();
        self.senders[worker].send(job).map_err(|_| worker_lost())?;
        self.pending.push_back(worker);
        Ok(())
    }

    /// Takes the oldest job's outcome: its error first, in block order.
    fn receive_one(&mut self) -> Result<(), SnapshotParseError> {
        let Some(worker) = self.pending.pop_front() else {
            return Ok(());
        };
        let bytes = self.results[worker].recv().map_err(|_| worker_lost())??;
        self.spare.push(bytes);
        Ok(())
    }

    fn drain(&mut self) -> Result<(), SnapshotParseError> {
        while !self.pending.is_empty() {
            self.receive_one()?;
        }
        Ok(())
    }
}

fn worker_lost() -> SnapshotParseError {
    SnapshotParseError::Format("a snapshot parsing thread stopped unexpectedly".into())
}

/// Parses one block: whole records straight into their columns while
/// the text is regular (`fused.rs`), and the rest (the numbers before the
/// block's first whole record, anything irregular and after it, the
/// block's last bytes) a piece at a time (`Part::pieces`).
fn parse_block(
    job: Job<'_>,
    layout: &Records,
    piece_size: usize,
    numbers: &mut Vec<u64>,
) -> Parsed {
    let Job {
        block,
        first,
        mut slots,
    } = job;
    let text = block.bytes.text();
    let width = layout.width() as u64;
    let lead = ((width - first % width) % width) as usize;
    // After the lead-th comma: where the first whole record starts.
    let records_start = match lead {
        0 => 0,
        _ => memchr::memchr_iter(b',', text)
            .nth(lead - 1)
            .map_or(text.len(), |c| c + 1),
    };
    let mut part = Part {
        block: &block,
        first,
        done: 0,
        slots: &mut slots,
    };
    if records_start > 0 {
        part.pieces(0..records_start, layout, piece_size, numbers)?;
    }
    // The text left, if any (an empty block is still parsed: `[]`).
    if records_start < text.len() || text.is_empty() {
        let (used, records) = fused::records(&text[records_start..], layout, part.slots);
        let fused_numbers = records * layout.width();
        part.slots
            .split_off_front(layout, first + part.done as u64, fused_numbers);
        part.done += fused_numbers;
        part.pieces(
            records_start + used..text.len(),
            layout,
            piece_size,
            numbers,
        )?;
    }
    if part.done != block.count {
        // Well-formed text has a number per comma: not reached.
        return Err(SnapshotParseError::Format(format!(
            "a block at byte {} held {} numbers for {} commas",
            block.offset, part.done, block.count
        )));
    }
    Ok(block.bytes)
}

/// A block being parsed: the numbers done so far and the slots left.
struct Part<'b, 's, 'a> {
    block: &'b Block,
    /// The index of the block's first number in the array.
    first: u64,
    done: usize,
    slots: &'s mut Slots<'a>,
}

impl Part<'_, '_, '_> {
    /// Parses `range` of the block's text a piece at a time, each in two
    /// passes: the text into numbers (one tight loop), then the numbers
    /// into their slots (one loop per field, in `Slots::fill`). The grammar
    /// and the errors are `Scanner::uint_array`'s: a number's own error
    /// (out of range) comes before a syntax error after it, as it would in
    /// one pass. The range starts at a number and, unless it runs to the
    /// block's end, ends after a comma.
    fn pieces(
        &mut self,
        range: std::ops::Range<usize>,
        layout: &Records,
        piece_size: usize,
        numbers: &mut Vec<u64>,
    ) -> Result<(), SnapshotParseError> {
        let text = self.block.bytes.text();
        let to_block_end = range.end == text.len();
        let mut start = range.start;
        loop {
            let rest = &text[start..range.end];
            // Pieces end after a comma, as blocks do, so no number is split.
            let cut = match rest.len() > piece_size {
                true => memchr::memrchr(b',', &rest[..piece_size]).map_or(rest.len(), |c| c + 1),
                false => rest.len(),
            };
            let piece = Piece {
                text: &rest[..cut],
                offset: self.block.offset + start as u64,
                ends_array: self.block.last && to_block_end && cut == rest.len(),
                at_array_start: self.block.seq == 0 && self.done == 0,
            };
            numbers.clear();
            let syntax = scan_numbers(&piece, numbers).err();
            let at = self.first + self.done as u64;
            self.slots
                .split_off_front(layout, at, numbers.len())
                .fill(layout, numbers, at)?;
            if let Some(error) = syntax {
                return Err(error);
            }
            self.done += numbers.len();
            start += cut;
            if start == range.end {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
#[path = "blocks_tests.rs"]
mod tests;
