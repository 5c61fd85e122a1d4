//! One connection of a request-mode run: claim a slot, render its request
//! (fixed bytes cost nothing; templates render into the connection's own
//! buffer), send it, read the answer, count it. A slot chosen by `--abort`
//! sends its request and hangs up instead. Scenario runs use `vu.rs`;
//! both share `send_with_retry` and the accounting below.

use std::rc::Rc;
use std::time::Instant;

use super::connection::{Collected, Connection, ExchangeError};
use super::request::Scratch;
use super::shared::Shared;
use super::stats::ErrorKind;
use super::template::{NoCaptures, RenderContext, Rng, next_sequence};

/// The connection a worker or virtual user holds between requests, and
/// whether it ever opened one (a second open is a reconnect).
#[derive(Default)]
pub(super) struct Link {
    pub connection: Option<Connection>,
    pub opened_before: bool,
}

impl Link {
    /// Moves the open connection's byte counts into the run's totals.
    pub fn account(&mut self, shared: &Shared) {
        if let Some(c) = self.connection.as_mut() {
            let mut stats = shared.stats.borrow_mut();
            stats.bytes_read += std::mem::take(&mut c.bytes_read);
            stats.bytes_written += std::mem::take(&mut c.bytes_written);
        }
    }

    /// Accounts for and drops the connection (the server closed it, or
    /// an exchange on it failed).
    pub fn drop_connection(&mut self, shared: &Shared) {
        self.account(shared);
        self.connection = None;
    }

    /// The open connection, or a new one.
    async fn open(&mut self, shared: &Shared) -> Result<&mut Connection, ErrorKind> {
        if self.connection.is_none() {
            if self.opened_before {
                shared.stats.borrow_mut().reconnects += 1;
            }
            self.opened_before = true;
            self.connection = Some(Connection::open(shared.plan.addr).await?);
        }
        Ok(self.connection.as_mut().expect("opened above"))
    }
}

pub(super) async fn drive_connection(shared: Rc<Shared>, index: usize) {
    let mut link = Link::default();
    let mut scratch = Scratch::default();
    let mut rng = Rng::new(index as u64);
    while let Some(slot) = shared.claim() {
        let (began, deadline) = shared.wait_for_slot(slot).await;
        let request = shared.request(slot);
        let sequence = if request.uses_sequence() {
            next_sequence()
        } else {
            0
        };
        let mut ctx = RenderContext {
            sequence,
            rng: &mut rng,
            captures: &NoCaptures,
        };
        // Outside a scenario there are no captures, so a render cannot fail.
        let bytes = request
            .bytes(&mut scratch, &mut ctx, b"")
            .expect("a request without captures renders");
        if shared.plan.aborts(slot) {
            hang_up(&shared, &mut link, bytes, began).await;
        } else {
            let outcome = tokio::time::timeout_at(
                deadline,
                send_with_retry(&shared, &mut link, bytes, request.is_head, None),
            )
            .await
            .unwrap_or(Err(ErrorKind::Timeout));
            match outcome {
                Ok(status) => {
                    shared.note_answer();
                    shared
                        .stats
                        .borrow_mut()
                        .record_response(status, began.elapsed());
                }
                Err(kind) => {
                    link.drop_connection(&shared);
                    shared.note_error(kind, began);
                }
            }
            link.account(&shared);
        }
        shared.slot_done();
    }
}

/// `--abort`: the whole request goes out, then the client closes the
/// connection before any answer, as a user who navigates away does.
async fn hang_up(shared: &Shared, link: &mut Link, bytes: &[u8], began: Instant) {
    let deadline = tokio::time::Instant::from(began + shared.plan.timeout);
    let opened = tokio::time::timeout_at(deadline, link.open(shared))
        .await
        .unwrap_or(Err(ErrorKind::Timeout));
    if let Err(kind) = opened {
        shared.note_error(kind, began);
        return;
    }
    link.account(shared);
    let connection = link.connection.take().expect("opened above");
    match connection.send_and_hang_up(bytes).await {
        Ok(()) => {
            let mut stats = shared.stats.borrow_mut();
            stats.aborted += 1;
            stats.bytes_written += bytes.len() as u64;
        }
        Err(kind) => shared.note_error(kind, began),
    }
}

/// Sends one request, opening a connection when needed. A kept-alive
/// connection the server closed while idle gets one retry on a new
/// connection, since the server never saw the request.
pub(super) async fn send_with_retry(
    shared: &Shared,
    link: &mut Link,
    bytes: &[u8],
    is_head: bool,
    mut collect: Option<&mut Collected>,
) -> Result<u16, ErrorKind> {
    for attempt in 0..2 {
        let reused = link.connection.is_some();
        let conn = link.open(shared).await?;
        match conn.exchange(bytes, is_head, collect.as_deref_mut()).await {
            Ok(exchange) => {
                if exchange.close {
                    link.drop_connection(shared);
                }
                return Ok(exchange.status);
            }
            Err(ExchangeError::Stale) if reused && attempt == 0 => {
                link.drop_connection(shared);
            }
            Err(ExchangeError::Stale) => {
                link.drop_connection(shared);
                return Err(ErrorKind::Closed);
            }
            Err(ExchangeError::Failed(kind)) => {
                link.drop_connection(shared);
                return Err(kind);
            }
        }
    }
    Err(ErrorKind::Closed)
}
