//! The text of one block of a large array (`blocks.rs`), in a buffer that
//! is reused block after block.
//!
//! A `Vec<u8>` cleared for the next block would have to be zeroed again
//! before each `read(2)` into it (safe Rust reads only into initialised
//! bytes): 437 MB of `memset` on a 437 MB snapshot, on the reading thread
//! that feeds every worker. Here the vector keeps its length, so the bytes
//! past the text stay initialised, and only growth zeroes anything: each
//! buffer once in its life.

#[derive(Debug, Default)]
pub(super) struct BlockText {
    /// `bytes[..len]` is the text; the rest is room written before.
    bytes: Vec<u8>,
    len: usize,
}

impl BlockText {
    pub(super) fn text(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn clear(&mut self) {
        self.len = 0;
    }

    pub(super) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    pub(super) fn extend_from_slice(&mut self, more: &[u8]) {
        self.room(more.len()).copy_from_slice(more);
        self.len += more.len();
    }

    /// The `n` bytes after the text, to read into; `extend_by` then adds
    /// what was read to the text.
    pub(super) fn room(&mut self, n: usize) -> &mut [u8] {
        let end = self.len + n;
        if self.bytes.len() < end {
            self.bytes.resize(end, 0);
        }
        &mut self.bytes[self.len..end]
    }

    pub(super) fn extend_by(&mut self, n: usize) {
        assert!(self.len + n <= self.bytes.len(), "only room given out");
        self.len += n;
    }
}

#[cfg(test)]
mod tests {
    use super::BlockText;

    #[test]
    fn reused_room_holds_old_bytes_but_the_text_only_new_ones() {
        let mut text = BlockText::default();
        text.extend_from_slice(b"12,34,");
        text.clear();
        text.extend_from_slice(b"5");
        assert_eq!(text.text(), b"5");
        let room = text.room(4);
        assert_eq!(room, b"2,34", "the old bytes, not zeroed again");
        room[..2].copy_from_slice(b"6,");
        text.extend_by(2);
        assert_eq!(text.text(), b"56,");
        text.truncate(1);
        assert_eq!((text.text(), text.len()), (&b"5"[..], 1));
        assert_eq!(text.room(8).len(), 8, "grows past its old length");
    }
}
