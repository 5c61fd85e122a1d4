//! The numbers of a piece of array text: the first of the block parser's
//! two passes (`blocks.rs`), for what its records' fast path (`fused.rs`)
//! leaves, and that fast path's number reader. Written by hand: the
//! per-number work is what the whole engine's speed rests on. The grammar
//! and errors are `Scanner::uint_array`'s, which the tests compare it with.

use super::error::SnapshotParseError;

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// Bytes the scanner's fast path looks at for one number: 19 digits, a
/// newline and a comma fit.
const FAST_WINDOW: usize = 24;

/// The number at `i` and where the next one starts, if the scanner's fast
/// path takes it: digits (at most 19) then `,` or `\n,`, all within the
/// window. V8 writes every number but an array's last so.
#[inline(always)]
pub(super) fn fast_number(bytes: &[u8], i: usize) -> Option<(u64, usize)> {
    let w: &[u8; FAST_WINDOW] = bytes.get(i..i + FAST_WINDOW)?.try_into().ok()?;
    let mut k = 0;
    let mut value: u64 = 0;
    while k < 19 && w[k].is_ascii_digit() {
        value = value * 10 + u64::from(w[k] - b'0');
        k += 1;
    }
    let separator = match (w[k], w[k + 1]) {
        _ if k == 0 => return None,
        (b',', _) => 1,
        (b'\n', b',') => 2,
        _ => return None,
    };
    Some((value, i + k + separator))
}

/// Text of an array that ends after a comma, unless the array ends with it.
pub(super) struct Piece<'t> {
    pub(super) text: &'t [u8],
    /// Absolute offset of `text[0]` in the input, for errors.
    pub(super) offset: u64,
    /// The array's `]` follows the text.
    pub(super) ends_array: bool,
    /// The text starts just after the array's `[`.
    pub(super) at_array_start: bool,
}

/// The piece's numbers, in order, into `numbers`; the first syntax error
/// stops it (the numbers before it are kept).
pub(super) fn scan_numbers(
    piece: &Piece<'_>,
    numbers: &mut Vec<u64>,
) -> Result<(), SnapshotParseError> {
    let bytes = piece.text;
    let error = |i: usize, expected: &str| SnapshotParseError::Syntax {
        offset: piece.offset + i as u64,
        expected: expected.to_string(),
    };
    let n = bytes.len();
    let mut i = 0;
    // The fast path: V8 writes `123,` and `123\n,`. A whole unit (digits
    // and separator) fits in the window, so its bytes are indexed without
    // bounds checks; anything else (spaces, a number past 19 digits, the
    // piece's end) is left to the general loop, from the same number.
    // Each number of the fast path takes at least two bytes (a digit and
    // its comma): room for all of them is reserved once, and they are
    // written into it without a capacity check a number.
    numbers.reserve(n / 2 + 1);
    let room = numbers.spare_capacity_mut();
    let mut found = 0;
    while let Some((value, next)) = fast_number(bytes, i) {
        room[found].write(value);
        found += 1;
        i = next;
    }
    // SAFETY: the first `found` slots past the length were written above.
    unsafe { numbers.set_len(numbers.len() + found) };
    loop {
        while i < n && is_space(bytes[i]) {
            i += 1;
        }
        if i == n {
            // Here a number was due: at the array's start, or after a
            // comma (every piece but the last ends after one). At the `]`
            // that is `[1,]`, an error; `[]` is fine.
            if piece.ends_array && (!piece.at_array_start || !numbers.is_empty()) {
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
            // Only the last piece ends after a number (at the `]`).
            return Ok(());
        }
        if bytes[i] != b',' {
            return Err(error(i, "an unsigned integer, ',' or ']'"));
        }
        i += 1;
    }
}
