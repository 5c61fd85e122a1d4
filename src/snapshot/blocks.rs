//! The `nodes` and `edges` arrays scanned on every core, still in one
//! streaming pass.
//!
//! The reading thread copies the array's text in blocks of `BLOCK` bytes,
//! each cut after its last comma so that no number is split (the rest
//! starts the next block). Workers turn blocks into numbers, then learn
//! from the `Relay` the index of their block's first number (the count of
//! all numbers before it, passed on block by block), which says the field
//! each number is, and fill small columns (`Columns`). The reading thread
//! appends those in block order. So the input is still read once,
//! front to back, as it arrives (a snapshot streamed over the inspector is
//! never held whole), and the columns are the ones the one-thread scanner
//! fills, number for number: `tests.rs` compares the two.
//!
//! Memory beyond the columns is the blocks in flight: at most
//! `IN_FLIGHT_PER_WORKER` per worker, each `BLOCK` bytes of text plus its
//! small columns (about the same again), about 12 MB on two workers.
//!
//! Hand-written, like `scan.rs`: the per-number work is what the whole
//! engine's speed rests on.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::{Condvar, Mutex, mpsc};

/// Hands each block the index of its first number, in block order: a block
/// takes it once the block before has added its count.
#[derive(Default)]
struct Relay {
    state: Mutex<RelayState>,
    turn: Condvar,
}

#[derive(Default)]
struct RelayState {
    /// The block whose turn it is.
    next: u64,
    /// Numbers in the blocks before it.
    first: u64,
    /// The reading thread stopped: nobody waits for a turn any more.
    abandoned: bool,
}

impl Relay {
    /// The index of block `seq`'s first number, once known; `count` is
    /// its own count, for the next block.
    fn take(&self, seq: u64, count: u64) -> u64 {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while state.next != seq && !state.abandoned {
            state = self.turn.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        let first = state.first;
        state.first += count;
        state.next += 1;
        self.turn.notify_all();
        first
    }

    fn abandon(&self) {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .abandoned = true;
        self.turn.notify_all();
    }
}

use super::SnapshotParseError;
use super::records::{Columns, Records};
use super::scan::Scanner;

/// Bytes of array text per block: large next to the per-block cost
/// (a channel message, an append), small next to any snapshot worth
/// splitting.
pub(super) const BLOCK: usize = 1 << 20;
/// Blocks queued or being parsed per worker: two keep a worker busy while
/// the reading thread appends the previous result.
const IN_FLIGHT_PER_WORKER: usize = 2;

/// One block of an array's text and where it sits.
struct Block {
    bytes: Vec<u8>,
    /// Absolute offset of `bytes[0]` in the input, for errors.
    offset: u64,
    /// The block's place in the array: 0, 1, 2…
    seq: u64,
    /// The array's `]` follows the block: its last number ends there.
    last: bool,
    /// Emptied columns of an earlier block, to fill again (no new pages).
    columns: Columns,
}

/// What a worker made of a block: its columns and how many numbers it held.
type Parsed = Result<(Columns, u64, Vec<u8>), SnapshotParseError>;

/// Scans `[n, n, …]` into columns on `workers` threads. The scanner must
/// be just before the `[`. Returns the columns and the count of numbers.
pub(super) fn scan_array<R: Read>(
    scan: &mut Scanner<R>,
    layout: &Records,
    reserve_records: usize,
    workers: usize,
    block_size: usize,
) -> Result<(Columns, u64), SnapshotParseError> {
    scan.expect(b'[')?;
    let mut columns = Columns::with_capacity(layout, reserve_records);
    let workers = workers.max(1);
    let relay = &Relay::default();
    std::thread::scope(|scope| {
        let mut senders = Vec::with_capacity(workers);
        let mut results = Vec::with_capacity(workers);
        for _ in 0..workers {
            let (job_tx, job_rx) = mpsc::sync_channel::<Block>(IN_FLIGHT_PER_WORKER);
            let (done_tx, done_rx) = mpsc::sync_channel::<Parsed>(IN_FLIGHT_PER_WORKER);
            scope.spawn(move || {
                let mut numbers = Vec::new();
                for block in job_rx {
                    let parsed = parse_block(block, layout, &mut numbers, relay);
                    if done_tx.send(parsed).is_err() {
                        return;
                    }
                }
            });
            senders.push(job_tx);
            results.push(done_rx);
        }
        let mut feed = Feed {
            senders,
            results,
            pending: VecDeque::new(),
            next: 0,
            columns: &mut columns,
            numbers: 0,
            spare: Vec::new(),
            spare_columns: (0..workers).map(|_| Vec::new()).collect(),
        };
        let outcome = feed.run(scan, block_size);
        // Dropping the senders ends the workers; the scope joins them.
        drop(feed);
        relay.abandon();
        outcome
    })
    .map(|numbers| (columns, numbers))
}

/// The reading thread's side: blocks out in order, results back in order.
struct Feed<'c> {
    senders: Vec<mpsc::SyncSender<Block>>,
    results: Vec<mpsc::Receiver<Parsed>>,
    /// Workers of the blocks sent and not yet appended, oldest first.
    pending: VecDeque<usize>,
    /// The worker the next block goes to (round robin).
    next: usize,
    columns: &'c mut Columns,
    /// Numbers appended so far.
    numbers: u64,
    /// A returned block buffer, reused for the next block.
    spare: Vec<u8>,
    /// Returned columns per worker, sent back with its next block.
    spare_columns: Vec<Vec<Columns>>,
}

impl Feed<'_> {
    fn run<R: Read>(
        &mut self,
        scan: &mut Scanner<R>,
        block_size: usize,
    ) -> Result<u64, SnapshotParseError> {
        let mut carry: Vec<u8> = Vec::new();
        let mut seq = 0u64;
        loop {
            let mut bytes = std::mem::take(&mut self.spare);
            bytes.clear();
            let offset = scan.offset() - carry.len() as u64;
            bytes.append(&mut carry);
            let last = match scan.array_text(&mut bytes, block_size) {
                Ok(last) => last,
                // An earlier block's error comes first, as it would in one pass.
                Err(e) => return self.drain().and(Err(e)),
            };
            if !last {
                let Some(cut) = memchr::memrchr(b',', &bytes) else {
                    // No comma: whitespace between numbers is dropped (the
                    // next block's offset follows the input); anything else
                    // is the start of a number that waits for its comma.
                    if !bytes.iter().all(u8::is_ascii_whitespace) {
                        carry = bytes;
                    }
                    continue;
                };
                carry.extend_from_slice(&bytes[cut + 1..]);
                bytes.truncate(cut + 1);
            }
            self.send(Block {
                bytes,
                offset,
                seq,
                last,
                columns: Columns::default(),
            })?;
            seq += 1;
            if last {
                return self.drain();
            }
        }
    }

    fn send(&mut self, mut block: Block) -> Result<(), SnapshotParseError> {
        if self.pending.len() >= self.senders.len() * IN_FLIGHT_PER_WORKER {
            self.receive_one()?;
        }
        let worker = self.next;
        block.columns = self.spare_columns[worker].pop().unwrap_or_default();
        self.next = (self.next + 1) % self.senders.len();
        self.senders[worker]
            .send(block)
            .map_err(|_| worker_lost())?;
        self.pending.push_back(worker);
        Ok(())
    }

    /// Appends the oldest block's columns.
    fn receive_one(&mut self) -> Result<(), SnapshotParseError> {
        let Some(worker) = self.pending.pop_front() else {
            return Ok(());
        };
        let (columns, numbers, bytes) =
            self.results[worker].recv().map_err(|_| worker_lost())??;
        self.columns.append(&columns);
        self.numbers += numbers;
        self.spare = bytes;
        self.spare_columns[worker].push(columns);
        Ok(())
    }

    fn drain(&mut self) -> Result<u64, SnapshotParseError> {
        while !self.pending.is_empty() {
            self.receive_one()?;
        }
        Ok(self.numbers)
    }
}

fn worker_lost() -> SnapshotParseError {
    SnapshotParseError::Format("a snapshot parsing thread stopped unexpectedly".into())
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// Parses one block in two passes: the text into numbers (one tight loop),
/// then the numbers into their columns (one loop per field, in
/// `Columns::extend_from_numbers`). The grammar and the errors are
/// `Scanner::uint_array`'s: a number's own error (out of range) comes
/// before a syntax error after it, as it would in one pass.
fn parse_block(
    mut block: Block,
    layout: &Records,
    numbers: &mut Vec<u64>,
    relay: &Relay,
) -> Parsed {
    numbers.clear();
    let syntax = scan_numbers(&block, numbers).err();
    // Always taken, even after an error, so that later blocks get their turn.
    let first = relay.take(block.seq, numbers.len() as u64);
    let mut columns = std::mem::take(&mut block.columns);
    columns.clear();
    columns.extend_from_numbers(layout, numbers, first)?;
    if let Some(error) = syntax {
        return Err(error);
    }
    Ok((columns, numbers.len() as u64, block.bytes))
}

/// The block's numbers, in order, into `numbers`; the first syntax error
/// stops it (the numbers before it are kept).
fn scan_numbers(block: &Block, numbers: &mut Vec<u64>) -> Result<(), SnapshotParseError> {
    let bytes = &block.bytes[..];
    let error = |i: usize, expected: &str| SnapshotParseError::Syntax {
        offset: block.offset + i as u64,
        expected: expected.to_string(),
    };
    let n = bytes.len();
    let mut i = 0;
    loop {
        while i < n && is_space(bytes[i]) {
            i += 1;
        }
        if i == n {
            // Here a number was due: at the array's start, or after a
            // comma (every block but the last ends after one). At the `]`
            // that is `[1,]`, an error; `[]` is fine.
            if block.last && (block.seq > 0 || !numbers.is_empty()) {
                return Err(error(n, "a number"));
            }
            return Ok(());
        }
        let start = i;
        let mut value: u64 = 0;
        while i < n && bytes[i].is_ascii_digit() {
            if i - start == 19 {
                return Err(error(i, "a number below 2^63"));
            }
            value = value * 10 + u64::from(bytes[i] - b'0');
            i += 1;
        }
        if i == start {
            let expected = if bytes[i] == b',' {
                "a number"
            } else {
                "an unsigned integer, ',' or ']'"
            };
            return Err(error(i, expected));
        }
        numbers.push(value);
        while i < n && is_space(bytes[i]) {
            i += 1;
        }
        if i == n {
            // Only the last block ends after a number (at the `]`).
            return Ok(());
        }
        if bytes[i] != b',' {
            return Err(error(i, "an unsigned integer, ',' or ']'"));
        }
        i += 1;
    }
}

#[cfg(test)]
#[path = "blocks_tests.rs"]
mod tests;
