//! Reads heaptrack's interpreted record (what `heaptrack_interpret`
//! writes, file version 3) and keeps what a time window left allocated.
//!
//! The record is one event a line, numbers in hex:
//! - `s LEN TEXT`: a string (file names, symbols), numbered from 1;
//! - `i IP MODULE [FUNCTION [FILE LINE]] [FUNCTION FILE LINE]…`: an
//!   instruction pointer in a module (string index, 0 when no module maps
//!   it: JIT code), with its function and the frames inlined at it,
//!   numbered from 1;
//! - `t IP PARENT`: a node of the stack tree, numbered from 1 (0 is the root);
//! - `a SIZE TRACE`: an allocation shape, numbered from 0;
//! - `+ A` / `- A`: an allocation / a free of shape A;
//! - `c MS`: the time since the recorder started, before the events it dates;
//! - `v`, `X`, `I`, `R`, `A`, `#`: version, command, page size, rss,
//!   attach marker, statistics (not needed here).
//!
//! A free names the shape of what it frees, so counting `+` and `-` per
//! shape between two times gives each stack's net growth: what a cycle
//! left allocated, minus what it freed of earlier memory.
//!
//! Written by hand because no crate reads this format; it is the one
//! heaptrack's own `heaptrack_print` reads (`accumulatedtracedata.cpp`).

use std::io::BufRead;

/// One frame at an instruction pointer: indices into the strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameIds {
    pub function: u32,
    pub file: u32,
    pub line: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionPointer {
    pub address: u64,
    /// String index of the module; 0 when no module maps it (JIT code).
    pub module: u32,
    /// The function at the address, then what was inlined into it.
    pub frames: Vec<FrameIds>,
}

/// What a window of the record left allocated, by stack.
#[derive(Debug, Default)]
pub struct Record {
    strings: Vec<String>,
    ips: Vec<InstructionPointer>,
    /// (ip, parent trace), trace `n` at index `n - 1`.
    traces: Vec<(u32, u32)>,
    /// Net bytes and allocations of each stack inside the window.
    pub growth: Vec<StackGrowth>,
    /// The last time the record reached, ms.
    pub last_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackGrowth {
    pub trace: u32,
    pub bytes: i64,
    pub allocations: i64,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("heaptrack's record is malformed at line {line}: {what}")]
pub struct RecordError {
    pub line: usize,
    pub what: String,
}

/// Reads a record, counting the events dated in `[from_ms, to_ms)`.
pub fn read(input: impl BufRead, from_ms: u64, to_ms: u64) -> Result<Record, RecordError> {
    let mut record = Record::default();
    // Allocation shapes: (size, trace) and their net count in the window.
    let mut shapes: Vec<(u64, u32)> = Vec::new();
    let mut net: Vec<i64> = Vec::new();
    let mut now = 0u64;
    for (number, line) in input.lines().enumerate() {
        let error = |what: &str| RecordError {
            line: number + 1,
            what: what.to_string(),
        };
        let line = line.map_err(|e| error(&e.to_string()))?;
        // The event letter; a line starting with any other character
        // (even a multi-byte one) is one this reader skips.
        let first = line.chars().next().map_or(0, char::len_utf8);
        let (kind, rest) = line.split_at(first);
        let rest = rest.trim_start();
        let inside = (from_ms..to_ms).contains(&now);
        match kind {
            "s" => {
                let (_, text) = rest.split_once(' ').unwrap_or((rest, ""));
                record.strings.push(text.to_string());
            }
            "i" => record
                .ips
                .push(instruction_pointer(rest).ok_or_else(|| error("bad `i` line"))?),
            "t" => {
                let [ip, parent] = numbers::<2>(rest).ok_or_else(|| error("bad `t` line"))?;
                record.traces.push((ip as u32, parent as u32));
            }
            "a" => {
                let [size, trace] = numbers::<2>(rest).ok_or_else(|| error("bad `a` line"))?;
                shapes.push((size, trace as u32));
                net.push(0);
            }
            "+" | "-" if inside => {
                let [shape] = numbers::<1>(rest).ok_or_else(|| error("bad event"))?;
                let count = net
                    .get_mut(shape as usize)
                    .ok_or_else(|| error("event of an unknown allocation shape"))?;
                *count += if kind == "+" { 1 } else { -1 };
            }
            "c" => {
                let [ms] = numbers::<1>(rest).ok_or_else(|| error("bad `c` line"))?;
                now = ms;
                record.last_ms = ms;
            }
            _ => {}
        }
    }
    let mut by_trace: std::collections::HashMap<u32, StackGrowth> = Default::default();
    for ((size, trace), count) in shapes.iter().zip(&net) {
        if *count == 0 {
            continue;
        }
        let entry = by_trace.entry(*trace).or_insert(StackGrowth {
            trace: *trace,
            bytes: 0,
            allocations: 0,
        });
        entry.bytes += *size as i64 * count;
        entry.allocations += count;
    }
    record.growth = by_trace.into_values().collect();
    record.growth.sort_by_key(|g| std::cmp::Reverse(g.bytes));
    Ok(record)
}

fn numbers<const N: usize>(text: &str) -> Option<[u64; N]> {
    let mut out = [0u64; N];
    let mut fields = text.split_ascii_whitespace();
    for slot in &mut out {
        *slot = u64::from_str_radix(fields.next()?, 16).ok()?;
    }
    Some(out)
}

fn instruction_pointer(text: &str) -> Option<InstructionPointer> {
    let fields: Vec<u64> = text
        .split_ascii_whitespace()
        .map(|f| u64::from_str_radix(f, 16).ok())
        .collect::<Option<_>>()?;
    let (&address, rest) = fields.split_first()?;
    let (&module, rest) = rest.split_first()?;
    let frame = |f: &[u64]| FrameIds {
        function: f[0] as u32,
        file: f.get(1).copied().unwrap_or(0) as u32,
        line: f.get(2).copied().unwrap_or(0) as u32,
    };
    // A function alone, or triples of function, file and line.
    let frames = match rest.len() {
        0 => Vec::new(),
        1 => vec![frame(rest)],
        n if n % 3 == 0 => rest.chunks(3).map(frame).collect(),
        _ => return None,
    };
    Some(InstructionPointer {
        address,
        module: module as u32,
        frames,
    })
}

impl Record {
    /// String `index` (1-based); "" for 0 or an index past the end.
    pub fn string(&self, index: u32) -> &str {
        index
            .checked_sub(1)
            .and_then(|i| self.strings.get(i as usize))
            .map_or("", String::as_str)
    }

    /// The instruction pointers of a stack, innermost first.
    pub fn stack(&self, trace: u32) -> Vec<&InstructionPointer> {
        let mut out = Vec::new();
        let mut at = trace;
        // A well-formed tree ends at 0; the bound stops a cycle in a bad one.
        while at != 0 && out.len() < self.traces.len() {
            let Some(&(ip, parent)) = self.traces.get(at as usize - 1) else {
                break;
            };
            if let Some(ip) = ip.checked_sub(1).and_then(|i| self.ips.get(i as usize)) {
                out.push(ip);
            }
            at = parent;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORD: &str = "\
v 10400 3
X node server.js
s d /usr/bin/node
s 1f /lib/x86_64-linux-gnu/libc.so.6
s 6 strdup
s 4 main
i 7f00 2 3
i 4000 1 4
i 3e000 0
t 1 0
t 2 1
t 3 2
t 2 0
a 800 3
a 40 4
+ 0
c 64
+ 0
+ 1
- 1
c c8
+ 0
+ 0
- 0
c 12c
+ 0
";

    #[test]
    fn a_window_counts_what_stayed_by_stack() {
        // Window [100, 300) ms: from `c 64` to before `c 12c`.
        let record = read(RECORD.as_bytes(), 100, 300).unwrap();
        assert_eq!(record.last_ms, 300);
        assert_eq!(
            record.growth,
            vec![StackGrowth {
                trace: 3,
                bytes: 2 * 0x800,
                allocations: 2,
            }]
        );
        let stack = record.stack(3);
        let addresses: Vec<u64> = stack.iter().map(|ip| ip.address).collect();
        assert_eq!(addresses, vec![0x3e000, 0x4000, 0x7f00]);
        assert_eq!(
            record.string(stack[2].module),
            "/lib/x86_64-linux-gnu/libc.so.6"
        );
        assert_eq!(record.string(stack[2].frames[0].function), "strdup");
        assert_eq!(stack[0].module, 0);
    }

    #[test]
    fn everything_counts_in_a_window_over_all_time() {
        let record = read(RECORD.as_bytes(), 0, u64::MAX).unwrap();
        assert_eq!(record.growth[0].allocations, 5 - 1);
    }

    #[test]
    fn inlined_frames_come_in_triples() {
        let ip = instruction_pointer("7f05a4dcca1d a 10 f 4a 10 f 1a").unwrap();
        assert_eq!(ip.frames.len(), 2);
        assert_eq!(ip.frames[1].line, 0x1a);
        assert!(instruction_pointer("7f05 a 10 f").is_none());
    }

    #[test]
    fn a_free_of_an_unknown_shape_names_its_line() {
        let error = read("c 0\n+ 5\n".as_bytes(), 0, 10).unwrap_err();
        assert_eq!(error.line, 2);
    }
}
