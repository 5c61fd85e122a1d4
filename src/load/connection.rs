//! One keep-alive connection: write a prepared request, read exactly one
//! response, repeat. This is the generator's hot loop, written by hand on
//! tokio + httparse so that a response costs one `read` syscall and no
//! allocation in the common case (a general client would allocate per
//! response, and the generator shares its cores with the server it measures).

use std::io;
use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::plan::PreparedRequest;
use super::response::{Framing, FramingError, parse_head};
use super::stats::ErrorKind;

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

    /// Sends one request and reads its whole response.
    pub async fn exchange(&mut self, request: &PreparedRequest) -> Result<Exchange, ExchangeError> {
        let fresh = self.start == self.end;
        if let Err(e) = self.stream.write_all(&request.bytes).await {
            return Err(stale_or(fresh, classify_io(&e)));
        }
        self.bytes_written += request.bytes.len() as u64;
        let head = loop {
            if self.end > self.start
                && let Some(head) = parse_head(&self.buf[self.start..self.end], request.is_head)?
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
        self.start += head.len;
        let mut close = head.close;
        match head.framing {
            Framing::Empty => {}
            Framing::Length(n) => self.skip(n).await?,
            Framing::Chunked(mut decoder) => loop {
                let (used, done) = decoder.feed(&self.buf[self.start..self.end])?;
                self.start += used;
                if done {
                    break;
                }
                self.refill_body().await?;
            },
            Framing::UntilClose => {
                close = true;
                loop {
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

    /// Skips `n` body bytes, reading them as they arrive.
    async fn skip(&mut self, mut n: u64) -> Result<(), ExchangeError> {
        loop {
            let buffered = (self.end - self.start) as u64;
            let take = buffered.min(n);
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
