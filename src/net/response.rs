//! HTTP/1.1 response framing: where a response's head ends and how long its
//! body is, so that a keep-alive connection can carry the next request.
//!
//! Written by hand on top of `httparse` because it sits on the generator's hot
//! path: a general HTTP client would allocate a header map and a body buffer
//! per response, where the generator only needs the status, the framing and
//! the number of bytes to skip.

/// How the body of a response is delimited (RFC 9112, section 6.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Framing {
    /// No body at all (HEAD, 1xx, 204, 304).
    Empty,
    /// `Content-Length: n`.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked(ChunkedDecoder),
    /// Neither: the body runs until the server closes the connection.
    UntilClose,
}

/// The parsed head of one response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub status: u16,
    /// Bytes the head took in the buffer, including the blank line.
    pub len: usize,
    pub framing: Framing,
    /// The server said it will close the connection after this response.
    pub close: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    #[error("malformed response head: {0}")]
    Head(String),
    #[error("malformed chunked body: {0}")]
    Chunk(&'static str),
}

/// Headers a response may carry before parsing gives up; real servers send
/// a dozen, 64 leaves room for verbose proxies.
const MAX_HEADERS: usize = 64;

/// Parses a response head from the start of `buf`. `Ok(None)` means more
/// bytes are needed. `request_was_head` matters because a HEAD response
/// carries a Content-Length but no body.
pub fn parse_head(buf: &[u8], request_was_head: bool) -> Result<Option<Head>, FramingError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let len = match response.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(FramingError::Head(e.to_string())),
    };
    let status = response.code.unwrap_or(0);
    let mut content_length = None;
    let mut chunked = false;
    let mut close = response.version == Some(0);
    for header in response.headers.iter() {
        let name = header.name;
        if name.eq_ignore_ascii_case("content-length") {
            let text = std::str::from_utf8(header.value).unwrap_or("");
            let value = text
                .trim()
                .parse::<u64>()
                .map_err(|_| FramingError::Head(format!("bad Content-Length {text:?}")))?;
            content_length = Some(value);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = contains_token(header.value, b"chunked");
        } else if name.eq_ignore_ascii_case("connection") {
            if contains_token(header.value, b"close") {
                close = true;
            } else if contains_token(header.value, b"keep-alive") {
                close = false;
            }
        }
    }
    let no_body =
        request_was_head || (100..200).contains(&status) || status == 204 || status == 304;
    let framing = if no_body {
        Framing::Empty
    } else if chunked {
        Framing::Chunked(ChunkedDecoder::default())
    } else if let Some(n) = content_length {
        Framing::Length(n)
    } else {
        Framing::UntilClose
    };
    Ok(Some(Head {
        status,
        len,
        framing,
        close,
    }))
}

fn contains_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|part| part.trim_ascii().eq_ignore_ascii_case(token))
}

/// Finds the end of a chunked body without copying it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkedDecoder {
    state: ChunkState,
    size: u64,
    /// Whether the size line being read has a digit yet.
    digits: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum ChunkState {
    #[default]
    Size,
    Extension,
    SizeLf,
    Data(u64),
    DataCr,
    DataLf,
    TrailerStart,
    TrailerLine,
    FinalLf,
    Done,
}

impl ChunkedDecoder {
    /// Consumes bytes from `input`; returns how many were part of the body and
    /// whether the body is complete. Bytes after the end are left untouched.
    pub fn feed(&mut self, input: &[u8]) -> Result<(usize, bool), FramingError> {
        self.feed_with(input, |_| {})
    }

    /// `feed`, handing each run of chunk data to `on_data` (for a caller
    /// that wants the body, not just its end; the hot loop passes a no-op
    /// that the compiler removes).
    pub fn feed_with(
        &mut self,
        input: &[u8],
        mut on_data: impl FnMut(&[u8]),
    ) -> Result<(usize, bool), FramingError> {
        if self.state == ChunkState::Done {
            return Ok((0, true));
        }
        let mut at = 0;
        while at < input.len() {
            if let ChunkState::Data(remaining) = self.state {
                let take = remaining.min((input.len() - at) as u64);
                on_data(&input[at..at + take as usize]);
                at += take as usize;
                let left = remaining - take;
                self.state = if left == 0 {
                    ChunkState::DataCr
                } else {
                    ChunkState::Data(left)
                };
                continue;
            }
            let byte = input[at];
            at += 1;
            self.state = self.step(byte)?;
            if self.state == ChunkState::Done {
                return Ok((at, true));
            }
        }
        Ok((at, self.state == ChunkState::Done))
    }

    fn step(&mut self, byte: u8) -> Result<ChunkState, FramingError> {
        use ChunkState::*;
        Ok(match (self.state, byte) {
            (Size, b'\r') => SizeLf,
            (Size, b'\n') | (SizeLf, b'\n') => self.end_of_size_line()?,
            (Size, b';' | b' ' | b'\t') => Extension,
            (Size, _) => {
                let digit = (byte as char)
                    .to_digit(16)
                    .ok_or(FramingError::Chunk("bad chunk size"))?;
                self.size = self
                    .size
                    .checked_mul(16)
                    .and_then(|s| s.checked_add(u64::from(digit)))
                    .ok_or(FramingError::Chunk("chunk size overflows"))?;
                self.digits = true;
                Size
            }
            (Extension, b'\r') => SizeLf,
            (Extension, b'\n') => self.end_of_size_line()?,
            (Extension, _) => Extension,
            (SizeLf, _) => return Err(FramingError::Chunk("expected LF after chunk size")),
            (DataCr, b'\r') => DataLf,
            (DataCr, b'\n') | (DataLf, b'\n') => Size,
            (DataCr | DataLf, _) => {
                return Err(FramingError::Chunk("expected CRLF after chunk data"));
            }
            (TrailerStart, b'\r') => FinalLf,
            (TrailerStart, b'\n') | (FinalLf, b'\n') => Done,
            (FinalLf, _) => return Err(FramingError::Chunk("expected LF after last chunk")),
            (TrailerLine, b'\n') => TrailerStart,
            (TrailerStart | TrailerLine, _) => TrailerLine,
            (Data(_), _) | (Done, _) => unreachable!("handled by feed"),
        })
    }

    fn end_of_size_line(&mut self) -> Result<ChunkState, FramingError> {
        if !std::mem::take(&mut self.digits) {
            return Err(FramingError::Chunk("a chunk size line without a size"));
        }
        let size = std::mem::take(&mut self.size);
        Ok(if size == 0 {
            ChunkState::TrailerStart
        } else {
            ChunkState::Data(size)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_length_and_keep_alive() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        let head = parse_head(raw, false).unwrap().unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(head.len, raw.len() - 5);
        assert_eq!(head.framing, Framing::Length(5));
        assert!(!head.close);
    }

    #[test]
    fn partial_head_asks_for_more() {
        assert_eq!(
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Le", false).unwrap(),
            None
        );
    }

    #[test]
    fn connection_close_and_http10() {
        let head = parse_head(
            b"HTTP/1.1 500 X\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            false,
        );
        assert!(head.unwrap().unwrap().close);
        let head = parse_head(b"HTTP/1.0 200 OK\r\n\r\n", false)
            .unwrap()
            .unwrap();
        assert!(head.close);
        assert_eq!(head.framing, Framing::UntilClose);
    }

    #[test]
    fn head_and_204_have_no_body() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n";
        assert_eq!(
            parse_head(raw, true).unwrap().unwrap().framing,
            Framing::Empty
        );
        let raw = b"HTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(
            parse_head(raw, false).unwrap().unwrap().framing,
            Framing::Empty
        );
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(parse_head(b"SSH-2.0-OpenSSH\r\n\r\n", false).is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false).is_err());
    }

    #[test]
    fn chunked_body_split_anywhere() {
        let body = b"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\nTrailer: x\r\n\r\nNEXT";
        for split in 0..body.len() {
            let mut decoder = ChunkedDecoder::default();
            let end = body.len() - 4;
            let (a, done_a) = decoder.feed(&body[..split]).unwrap();
            assert_eq!(a, split.min(end));
            if done_a {
                assert!(split >= end);
                continue;
            }
            let (b, done) = decoder.feed(&body[split..]).unwrap();
            assert!(done, "split at {split}");
            assert_eq!(split + b, end, "stops before the next response");
        }
    }

    #[test]
    fn chunked_is_done_for_good_and_needs_a_size() {
        let mut decoder = ChunkedDecoder::default();
        assert_eq!(decoder.feed(b"0\r\n\r\n").unwrap(), (5, true));
        assert_eq!(
            decoder.feed(b"more").unwrap(),
            (0, true),
            "found by fuzzing: feeding after the end"
        );
        let mut decoder = ChunkedDecoder::default();
        assert!(
            decoder.feed(b"\n\nabc").is_err(),
            "found by fuzzing: an empty size line"
        );
    }

    #[test]
    fn chunked_rejects_bad_size() {
        let mut decoder = ChunkedDecoder::default();
        assert!(decoder.feed(b"zz\r\n").is_err());
        let mut decoder = ChunkedDecoder::default();
        assert!(decoder.feed(b"ffffffffffffffffff\r\n").is_err());
    }
}
