//! One keep-alive connection: write a prepared request, read exactly one
//! response, repeat. This is the generator's hot loop, written by hand on
//! tokio + httparse so that a response costs one `read` syscall and no
//! allocation in the common case (a general client would allocate per
//! response, and the generator shares its cores with the server it measures).

use std::io;
use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::stats::ErrorKind;
use crate::net::response::{Framing, FramingError, parse_head};

/// Read buffer of one connection. 16 KB holds a typical response whole.
const INITIAL_BUFFER: usize = 16 * 1024;
/// A response head larger than this is treated as malformed rather than
/// buffered without end.
const MAX_HEAD: usize = 1024 * 1024;

/// How an exchange failed.
#[derive(Debug)]
pub enum ExchangeError {
    /// The connection was closed or reset before any byte of the response:
    /// the server dropped an idle keep-alive connection, so the request can
    /// be sent again on a new one.
    Stale,
    Failed(ErrorKind),
}

impl From<FramingError> for ExchangeError {
    fn from(_: FramingError) -> Self {
        ExchangeError::Failed(ErrorKind::Malformed)
    }
}

/// What a scenario step keeps of a response besides its status: the
/// headers it names (lowercase) and, when asked, the body.
#[derive(Debug, Default)]
pub struct Collected {
    pub want_headers: Vec<String>,
    pub want_body: bool,
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
}

impl Collected {
    fn clear(&mut self) {
        self.headers.clear();
        self.body.clear();
    }

    fn take_headers(&mut self, head: &[u8]) {
        if self.want_headers.is_empty() {
            return;
        }
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut headers);
        if response.parse(head).is_err() {
            return;
        }
        for header in response.headers.iter() {
            let name = header.name.to_ascii_lowercase();
            if self.want_headers.contains(&name) {
                self.headers.push((name, header.value.to_vec()));
            }
        }
    }

    fn keep_body(&mut self, bytes: &[u8]) {
        if self.want_body && self.body.len() < MAX_COLLECTED_BODY {
            let room = MAX_COLLECTED_BODY - self.body.len();
            self.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
    }
}

/// The most of a body a scenario keeps for its captures: a login answer
/// is a few hundred bytes; a capture from a larger body reads its start.
const MAX_COLLECTED_BODY: usize = 1024 * 1024;

/// One response, as far as the statistics care.
pub struct Exchange {
    pub status: u16,
    /// The server will close (or closed) the connection after this response.
    pub close: bool,
}

pub struct Connection {
    stream: TcpStream,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// Bytes read and written since the caller last took the counts.
    pub bytes_read: u64,
    pub bytes_written: u64,
}

pub fn classify_io(error: &io::Error) -> ErrorKind {
    match error.kind() {
        io::ErrorKind::ConnectionRefused => ErrorKind::ConnectRefused,
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::BrokenPipe
        | io::ErrorKind::ConnectionAborted => ErrorKind::Reset,
        io::ErrorKind::TimedOut => ErrorKind::Timeout,
        io::ErrorKind::UnexpectedEof => ErrorKind::Closed,
        _ => ErrorKind::Io,
    }
}

impl Connection {
    pub async fn open(addr: SocketAddr) -> Result<Connection, ErrorKind> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|e| match classify_io(&e) {
                ErrorKind::ConnectRefused => ErrorKind::ConnectRefused,
                ErrorKind::Timeout => ErrorKind::Timeout,
                _ => ErrorKind::Connect,
            })?;
        // Requests are small and sent whole: Nagle would only add latency.
        stream.set_nodelay(true).map_err(|_| ErrorKind::Connect)?;
        Ok(Connection {
            stream,
            buf: vec![0; INITIAL_BUFFER],
            start: 0,
            end: 0,
            bytes_read: 0,
            bytes_written: 0,
        })
    }

    /// Sends a request and closes the connection before any answer: a
    /// client that hangs up (`--abort`). The server has the whole request.
    pub async fn send_and_hang_up(mut self, request: &[u8]) -> Result<(), ErrorKind> {
        self.stream
            .write_all(request)
            .await
            .map_err(|e| classify_io(&e))?;
        self.bytes_written += request.len() as u64;
        Ok(())
    }

    /// Sends one request and reads its whole response; `collect` keeps
    /// the headers and body a scenario step asks for.
    pub async fn exchange(
        &mut self,
        request: &[u8],
        is_head: bool,
        mut collect: Option<&mut Collected>,
    ) -> Result<Exchange, ExchangeError> {
        let fresh = self.start == self.end;
        if let Err(e) = self.stream.write_all(request).await {
            return Err(stale_or(fresh, classify_io(&e)));
        }
        self.bytes_written += request.len() as u64;
        let head = loop {
            if self.end > self.start
                && let Some(head) = parse_head(&self.buf[self.start..self.end], is_head)?
            {
                break head;
            }
            let response_started = self.end > self.start;
            match self.fill().await {
                Ok(0) => return Err(stale_or(!response_started, ErrorKind::Closed)),
                Ok(_) => {}
                Err(kind) => return Err(stale_or(!response_started, kind)),
            }
        };
        if let Some(c) = collect.as_deref_mut() {
            c.clear();
            c.take_headers(&self.buf[self.start..self.start + head.len]);
        }
        self.start += head.len;
        let mut close = head.close;
        match head.framing {
            Framing::Empty => {}
            Framing::Length(n) => self.skip(n, collect).await?,
            Framing::Chunked(mut decoder) => loop {
                let (used, done) = match collect.as_deref_mut() {
                    Some(c) => decoder
                        .feed_with(&self.buf[self.start..self.end], |data| c.keep_body(data))?,
                    None => decoder.feed(&self.buf[self.start..self.end])?,
                };
                self.start += used;
                if done {
                    break;
                }
                self.refill_body().await?;
            },
            Framing::UntilClose => {
                close = true;
                loop {
                    if let Some(c) = collect.as_deref_mut() {
                        c.keep_body(&self.buf[self.start..self.end]);
                    }
                    self.start = self.end;
                    if self.fill().await.map_err(ExchangeError::Failed)? == 0 {
                        break;
                    }
                }
            }
        }
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        Ok(Exchange {
            status: head.status,
            close,
        })
    }

    /// Skips `n` body bytes, reading them as they arrive (and keeping
    /// them in `collect` when a scenario step asks for the body).
    async fn skip(
        &mut self,
        mut n: u64,
        mut collect: Option<&mut Collected>,
    ) -> Result<(), ExchangeError> {
        loop {
            let buffered = (self.end - self.start) as u64;
            let take = buffered.min(n);
            if let Some(c) = collect.as_deref_mut() {
                c.keep_body(&self.buf[self.start..self.start + take as usize]);
            }
            self.start += take as usize;
            n -= take;
            if n == 0 {
                return Ok(());
            }
            self.refill_body().await?;
        }
    }

    /// Reads more body bytes; the connection closing here is an error.
    async fn refill_body(&mut self) -> Result<(), ExchangeError> {
        match self.fill().await {
            Ok(0) => Err(ExchangeError::Failed(ErrorKind::Closed)),
            Ok(_) => Ok(()),
            Err(kind) => Err(ExchangeError::Failed(kind)),
        }
    }

    /// Reads once into the free end of the buffer, making room first.
    async fn fill(&mut self) -> Result<usize, ErrorKind> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else if self.buf.len() < MAX_HEAD {
                self.buf.resize(self.buf.len() * 2, 0);
            } else {
                return Err(ErrorKind::Malformed);
            }
        }
        let n = self
            .stream
            .read(&mut self.buf[self.end..])
            .await
            .map_err(|e| classify_io(&e))?;
        self.end += n;
        self.bytes_read += n as u64;
        Ok(n)
    }
}

fn stale_or(before_response: bool, kind: ErrorKind) -> ExchangeError {
    if before_response && matches!(kind, ErrorKind::Closed | ErrorKind::Reset) {
        ExchangeError::Stale
    } else {
        ExchangeError::Failed(kind)
    }
}
