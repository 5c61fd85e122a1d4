//! A byte scanner over any `Read`, for the streaming snapshot parser. It
//! keeps one buffer of `BUFFER` bytes and the absolute offset of its start,
//! so every error names the byte where the input went wrong.
//!
//! Hand-written (not serde_json's streaming deserializer) because the bulk of
//! a snapshot is two flat integer arrays: handing their text to the block
//! parser (`array_text`, read straight into each block) and parsing it
//! straight into columns, with no value per number kept, is what keeps the
//! parser's memory at the size of the columns.

use std::io::Read;

use super::block_text::BlockText;
use super::error::SnapshotParseError;

/// Read size: large enough that refills are rare, small next to any heap.
const BUFFER: usize = 1 << 20;
/// The smallest read `array_text` makes straight into its output, unless
/// the block already holds that much: below it, a refill of the buffer
/// (one system call for a whole buffer) is the cheaper way.
const DIRECT_READ: usize = 64 << 10;
/// Bytes of a string looked at eight at a time before memchr takes over.
const SHORT_STRING: usize = 64;

/// Every byte of a word holding `byte`.
const fn lanes(byte: u8) -> u64 {
    u64::from_le_bytes([byte; 8])
}

/// The first `"` or `\\` in `text`. Most strings of a snapshot are a dozen
/// bytes: eight at a time in a word (the "has a zero byte" test, exact
/// for the lowest byte that matches) finds their end before memchr's
/// vector setup would; longer ones go to memchr.
#[inline]
fn quote_or_backslash(text: &[u8]) -> Option<usize> {
    let mut k = 0;
    while k + 8 <= text.len().min(SHORT_STRING) {
        let word = u64::from_le_bytes(text[k..k + 8].try_into().expect("8 bytes"));
        let zero_at = |x: u64| x.wrapping_sub(lanes(1)) & !x & lanes(0x80);
        let hits = zero_at(word ^ lanes(b'"')) | zero_at(word ^ lanes(b'\\'));
        if hits != 0 {
            return Some(k + (hits.trailing_zeros() / 8) as usize);
        }
        k += 8;
    }
    memchr::memchr2(b'"', b'\\', &text[k..]).map(|i| k + i)
}

pub struct Scanner<R> {
    reader: R,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    /// Absolute offset of `buf[0]` in the input.
    base: u64,
    /// Bytes read so far: total input size once the end is reached.
    pub consumed: u64,
}

impl<R: Read> Scanner<R> {
    pub fn new(reader: R) -> Self {
        Scanner {
            reader,
            buf: vec![0; BUFFER],
            pos: 0,
            len: 0,
            base: 0,
            consumed: 0,
        }
    }

    /// Absolute offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    pub fn error(&self, expected: &str) -> SnapshotParseError {
        SnapshotParseError::Syntax {
            offset: self.offset(),
            expected: expected.to_string(),
        }
    }

    fn eof(&self, expected: &str) -> SnapshotParseError {
        SnapshotParseError::Truncated {
            offset: self.offset(),
            expected: expected.to_string(),
        }
    }

    /// Makes at least one unread byte available; false at the end of input.
    fn fill(&mut self) -> Result<bool, SnapshotParseError> {
        if self.pos < self.len {
            return Ok(true);
        }
        self.base += self.len as u64;
        self.pos = 0;
        self.len = 0;
        loop {
            match self.reader.read(&mut self.buf) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.len = n;
                    self.consumed += n as u64;
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(SnapshotParseError::Io(e)),
            }
        }
    }

    /// The next non-whitespace byte, not consumed.
    pub fn peek(&mut self, expected: &str) -> Result<u8, SnapshotParseError> {
        self.next_byte()?.ok_or_else(|| self.eof(expected))
    }

    /// The next non-whitespace byte, not consumed; `None` at the end.
    fn next_byte(&mut self) -> Result<Option<u8>, SnapshotParseError> {
        loop {
            if !self.fill()? {
                return Ok(None);
            }
            let b = self.buf[self.pos];
            if b.is_ascii_whitespace() {
                self.pos += 1;
            } else {
                return Ok(Some(b));
            }
        }
    }

    /// Consumes `byte` (after whitespace) or fails naming it.
    pub fn expect(&mut self, byte: u8) -> Result<(), SnapshotParseError> {
        // The message is built only on failure: this runs for each of a
        // snapshot's hundreds of thousands of strings.
        let what = || format!("'{}'", byte as char);
        match self.next_byte()? {
            Some(b) if b == byte => {
                self.pos += 1;
                Ok(())
            }
            Some(_) => Err(self.error(&what())),
            None => Err(self.eof(&what())),
        }
    }

    /// True and consumes it if the next byte is `byte`.
    pub fn eat(&mut self, byte: u8) -> Result<bool, SnapshotParseError> {
        match self.next_byte()? {
            Some(b) if b == byte => {
                self.pos += 1;
                Ok(true)
            }
            Some(_) => Ok(false),
            None => Err(self.eof(&format!("'{}'", byte as char))),
        }
    }

    /// Reads a JSON string, unescaped, appending its UTF-8 bytes to `out`.
    pub fn string_into(&mut self, out: &mut Vec<u8>) -> Result<(), SnapshotParseError> {
        self.expect(b'"')?;
        loop {
            if !self.fill()? {
                return Err(self.eof("the end of a string"));
            }
            let chunk = &self.buf[self.pos..self.len];
            match memchr::memchr2(b'"', b'\\', chunk) {
                Some(i) => {
                    out.extend_from_slice(&chunk[..i]);
                    let quote = chunk[i] == b'"';
                    self.pos += i + 1;
                    if quote {
                        return Ok(());
                    }
                    self.escape(out)?;
                }
                None => {
                    out.extend_from_slice(chunk);
                    self.pos = self.len;
                }
            }
        }
    }

    /// Reads `["…", "…", …]`, appending each string's unescaped bytes to
    /// `out` and calling `end` after each. The `strings` section is a
    /// snapshot's millions of short strings: each is read here straight
    /// from the buffer when it can be (`plain_string`), with
    /// `string_into` and its escapes for the rest.
    pub fn string_array(
        &mut self,
        out: &mut Vec<u8>,
        mut end: impl FnMut(&mut Vec<u8>) -> Result<(), SnapshotParseError>,
    ) -> Result<(), SnapshotParseError> {
        self.expect(b'[')?;
        if self.eat(b']')? {
            return Ok(());
        }
        loop {
            if let Some(separator) = self.plain_string(out) {
                end(out)?;
                if separator == b']' {
                    return Ok(());
                }
                continue;
            }
            self.string_into(out)?;
            end(out)?;
            if self.eat(b',')? {
                continue;
            }
            self.expect(b']')?;
            return Ok(());
        }
    }

    /// A string with no escapes, and the `,` or `]` after it, when all of
    /// it is in the buffer: its bytes appended to `out`, the separator
    /// consumed and returned. Otherwise `None`, and nothing consumed.
    fn plain_string(&mut self, out: &mut Vec<u8>) -> Option<u8> {
        let text = &self.buf[self.pos..self.len];
        let mut i = 0;
        while i < text.len() && text[i].is_ascii_whitespace() {
            i += 1;
        }
        if text.get(i) != Some(&b'"') {
            return None;
        }
        let body = i + 1;
        let close = body + quote_or_backslash(&text[body..])?;
        if text[close] != b'"' {
            return None;
        }
        let mut j = close + 1;
        while j < text.len() && text[j].is_ascii_whitespace() {
            j += 1;
        }
        let separator = *text.get(j).filter(|b| matches!(b, b',' | b']'))?;
        out.extend_from_slice(&text[body..close]);
        self.pos += j + 1;
        Some(separator)
    }

    fn next_raw(&mut self, expected: &str) -> Result<u8, SnapshotParseError> {
        if !self.fill()? {
            return Err(self.eof(expected));
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(b)
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), SnapshotParseError> {
        let b = self.next_raw("an escape")?;
        let simple = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 8,
            b'f' => 12,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let mut code = self.hex4()?;
                if (0xD800..0xDC00).contains(&code) {
                    // A high surrogate: a low one should follow as \uXXXX.
                    if self.next_raw("a low surrogate")? == b'\\'
                        && self.next_raw("a low surrogate")? == b'u'
                    {
                        let low = self.hex4()?;
                        if (0xDC00..0xE000).contains(&low) {
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                        } else {
                            code = 0xFFFD;
                        }
                    } else {
                        return Err(self.error("a \\u low surrogate"));
                    }
                }
                // V8 writes lone surrogates for broken strings: keep them visible.
                let c = char::from_u32(code).unwrap_or('\u{FFFD}');
                let mut tmp = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                return Ok(());
            }
            _ => return Err(self.error("a valid escape")),
        };
        out.push(simple);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, SnapshotParseError> {
        let mut v = 0;
        for _ in 0..4 {
            let b = self.next_raw("four hex digits")?;
            let d = (b as char)
                .to_digit(16)
                .ok_or_else(|| self.error("a hex digit"))?;
            v = v * 16 + d;
        }
        Ok(v)
    }

    /// Reads `[n, n, …]` of unsigned integers, calling `sink` for each in
    /// order: the one-pass reference the block scanner (`blocks.rs`) is
    /// tested against.
    #[cfg(test)]
    pub fn uint_array(
        &mut self,
        mut sink: impl FnMut(u64) -> Result<(), SnapshotParseError>,
    ) -> Result<u64, SnapshotParseError> {
        self.expect(b'[')?;
        let mut count = 0u64;
        let mut value: u64 = 0;
        let mut digits = 0u32;
        // After a number and before its separator.
        let mut need_separator = false;
        loop {
            if !self.fill()? {
                return Err(self.eof("a number, ',' or ']' in an integer array"));
            }
            let end = self.len;
            let mut i = self.pos;
            while i < end {
                let b = self.buf[i];
                match b {
                    b'0'..=b'9' if !need_separator => {
                        if digits == 19 {
                            self.pos = i;
                            return Err(self.error("a number below 2^63"));
                        }
                        value = value * 10 + u64::from(b - b'0');
                        digits += 1;
                    }
                    b',' | b']' => {
                        if digits > 0 {
                            if let Err(e) = sink(value) {
                                self.pos = i;
                                return Err(e);
                            }
                            count += 1;
                        } else if b == b',' || count > 0 {
                            self.pos = i;
                            return Err(self.error("a number"));
                        }
                        value = 0;
                        digits = 0;
                        need_separator = false;
                        if b == b']' {
                            self.pos = i + 1;
                            return Ok(count);
                        }
                    }
                    b' ' | b'\n' | b'\r' | b'\t' => {
                        if digits > 0 {
                            need_separator = true;
                        }
                    }
                    _ => {
                        self.pos = i;
                        return Err(self.error("an unsigned integer, ',' or ']'"));
                    }
                }
                i += 1;
            }
            self.pos = end;
        }
    }

    /// Appends the text of an integer array to `out` (the `[` already
    /// read): `max` more bytes, or up to the array's `]`, which is consumed
    /// and not copied. True at the `]`. The bytes are not checked here: the
    /// block parser does that, naming their offsets.
    pub(super) fn array_text(
        &mut self,
        out: &mut BlockText,
        max: usize,
    ) -> Result<bool, SnapshotParseError> {
        let max = out.len() + max.max(1);
        while out.len() < max {
            let room = max - out.len();
            // A large block is finished by a read straight into `out`,
            // however little is left of it: the buffer then stays empty,
            // block after block, and the array's text is never copied.
            // (Refilling the buffer for that rest kept the header's
            // offset in it at every block: 126 MB of a 437 MB file went
            // through the buffer.)
            let large_block = room >= DIRECT_READ || max - room >= DIRECT_READ;
            if self.pos == self.len && large_block {
                // Nothing buffered and room for a large read: read straight
                // into `out`, saving a copy of the array's text.
                if self.read_into(out, room.min(BUFFER))? {
                    return Ok(true);
                }
                continue;
            }
            if !self.fill()? {
                return Err(self.eof("a number, ',' or ']' in an integer array"));
            }
            let room = max - out.len();
            let chunk = &self.buf[self.pos..self.len.min(self.pos + room)];
            match memchr::memchr(b']', chunk) {
                Some(end) => {
                    out.extend_from_slice(&chunk[..end]);
                    self.pos += end + 1;
                    return Ok(true);
                }
                None => {
                    out.extend_from_slice(chunk);
                    self.pos += chunk.len();
                }
            }
        }
        Ok(false)
    }

    /// `array_text`'s direct read of up to `room` bytes (the buffer being
    /// empty). Bytes after a `]` go back into the buffer. True at the `]`.
    fn read_into(&mut self, out: &mut BlockText, room: usize) -> Result<bool, SnapshotParseError> {
        self.base += self.len as u64;
        self.pos = 0;
        self.len = 0;
        let start = out.len();
        // One read(2) for the whole room where the input allows (a file
        // does); `read_to_end` would start at 8 KiB and double.
        let into = out.room(room);
        let mut read = 0;
        while read < room {
            match self.reader.read(&mut into[read..]) {
                Ok(0) => break,
                Ok(n) => read += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(SnapshotParseError::Io(e)),
            }
        }
        out.extend_by(read);
        self.consumed += read as u64;
        if read == 0 {
            return Err(self.eof("a number, ',' or ']' in an integer array"));
        }
        match memchr::memchr(b']', &out.text()[start..]) {
            Some(end) => {
                let rest = start + end + 1;
                let left = out.len() - rest;
                self.buf[..left].copy_from_slice(&out.text()[rest..]);
                self.len = left;
                self.base += (end + 1) as u64;
                out.truncate(start + end);
                Ok(true)
            }
            None => {
                self.base += read as u64;
                Ok(false)
            }
        }
    }

    /// Skips one JSON value of any kind, keeping only its bytes when `keep`
    /// is given (for the small `snapshot` object).
    pub fn skip_value(&mut self, mut keep: Option<&mut Vec<u8>>) -> Result<(), SnapshotParseError> {
        let first = self.peek("a value")?;
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        let mut started = false;
        loop {
            if !self.fill()? {
                return Err(self.eof("the end of a value"));
            }
            let b = self.buf[self.pos];
            if started && depth == 0 && !in_string {
                // A scalar ends at a delimiter.
                if matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace() {
                    return Ok(());
                }
            }
            self.pos += 1;
            if let Some(k) = keep.as_deref_mut() {
                k.push(b);
            }
            started = true;
            if in_string {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_string = false;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth = depth.checked_sub(1).ok_or_else(|| self.error("a value"))?;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ if first == b'{'
                    || first == b'['
                    || b.is_ascii_alphanumeric()
                    || b == b'-'
                    || b == b'.'
                    || b == b'+' => {}
                _ => return Err(self.error("a value")),
            }
        }
    }
}
