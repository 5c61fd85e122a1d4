//! A virtual user of a scenario run: one connection that loops over the
//! scenario's steps. A slot is an iteration; it counts as done only when
//! every step (and every repeat) answered what it expects and every
//! capture found its value. Otherwise the iteration stops at that step and
//! is counted as failed with the reason; a capture that found nothing is
//! never sent as `{name}`.
//!
//! The virtual user keeps a cookie jar across its iterations, as a browser
//! does (`cookies.rs`: RFC 6265's domain and path rules): each `Set-Cookie`
//! replaces the cookie of that name and path, and the cookies of a step's
//! path go as one `Cookie` header on every step that does not set its own.

use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use super::connection::Collected;
use super::cookies::CookieJar;
use super::request::Scratch;
use super::scenario::{Scenario, Step, extract};
use super::shared::Shared;
use super::stats::ErrorKind;
use super::template::{Captures, RenderContext, Rng, next_sequence};
use super::worker::{Link, send_with_retry};

/// Values captured in the current iteration, by name.
#[derive(Default)]
struct Captured(Vec<(String, Vec<u8>)>);

impl Captures for Captured {
    fn get(&self, name: &str) -> Option<&[u8]> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }
}

impl Captured {
    fn set(&mut self, name: &str, value: Vec<u8>) {
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = value,
            None => self.0.push((name.to_string(), value)),
        }
    }
}

/// Everything one virtual user keeps between requests.
struct User {
    link: Link,
    scratch: Scratch,
    rng: Rng,
    jar: CookieJar,
    captured: Captured,
    collected: Collected,
}

pub(super) async fn run_virtual_user(shared: Rc<Shared>, scenario: Arc<Scenario>, index: usize) {
    let mut user = User {
        link: Link::default(),
        scratch: Scratch::default(),
        rng: Rng::new(index as u64),
        jar: CookieJar::default(),
        captured: Captured::default(),
        collected: Collected {
            want_headers: scenario.wanted_headers(),
            ..Collected::default()
        },
    };
    let uses_sequence = scenario.uses_sequence();
    while let Some(slot) = shared.claim() {
        shared.wait_for_slot(slot).await;
        let sequence = if uses_sequence { next_sequence() } else { 0 };
        user.captured.0.clear();
        let failure = run_iteration(&shared, &scenario, &mut user, sequence).await;
        let mut stats = shared.stats.borrow_mut();
        match failure {
            None => stats.iterations += 1,
            Some(reason) => stats.record_failed_iteration(reason),
        }
        drop(stats);
        shared.slot_done();
    }
}

/// Runs every step once (each `repeat` times); the reason it stopped, if
/// it did.
async fn run_iteration(
    shared: &Shared,
    scenario: &Scenario,
    user: &mut User,
    sequence: u64,
) -> Option<String> {
    for (index, step) in scenario.steps.iter().enumerate() {
        for _ in 0..step.repeat {
            if let Err(why) = run_step(shared, step, user, sequence).await {
                return Some(format!("step {} ({}): {why}", index + 1, step.label));
            }
        }
    }
    None
}

/// Why a step of an iteration failed; the iteration stops there.
#[derive(Debug, thiserror::Error)]
enum StepFailure {
    #[error(transparent)]
    Render(#[from] super::template::TemplateError),
    #[error("{} error", .0.name())]
    Transport(ErrorKind),
    #[error("answered {status}, expected {expected}")]
    Status { status: u16, expected: String },
    #[error("capture {name} ({source_text}) found nothing in the answer")]
    Capture { name: String, source_text: String },
}

async fn run_step(
    shared: &Shared,
    step: &Step,
    user: &mut User,
    sequence: u64,
) -> Result<(), StepFailure> {
    let began = Instant::now();
    let deadline = tokio::time::Instant::from(began + shared.plan.timeout);
    let mut ctx = RenderContext {
        sequence,
        rng: &mut user.rng,
        captures: &user.captured,
    };
    let cookie: &[u8] = if step.own_cookie {
        b""
    } else {
        user.jar.header_for(&step.path)
    };
    let bytes = match step.request.bytes(&mut user.scratch, &mut ctx, cookie) {
        Ok(bytes) => bytes,
        Err(why) => {
            shared.note_error(ErrorKind::Capture, began);
            return Err(why.into());
        }
    };
    user.collected.want_body = step
        .captures
        .iter()
        .any(|c| matches!(c.from, super::scenario::CaptureFrom::Json(_)));
    let outcome = tokio::time::timeout_at(
        deadline,
        send_with_retry(
            shared,
            &mut user.link,
            bytes,
            step.request.is_head,
            Some(&mut user.collected),
        ),
    )
    .await
    .unwrap_or(Err(ErrorKind::Timeout));
    let status = match outcome {
        Ok(status) => status,
        Err(kind) => {
            user.link.drop_connection(shared);
            shared.note_error(kind, began);
            return Err(StepFailure::Transport(kind));
        }
    };
    shared.note_answer();
    shared
        .stats
        .borrow_mut()
        .record_response(status, began.elapsed());
    user.link.account(shared);
    for (name, value) in &user.collected.headers {
        if name == "set-cookie" {
            user.jar
                .store(value, host_of(&shared.plan.host), &step.path);
        }
    }
    if !step.expect.accepts(status) {
        return Err(StepFailure::Status {
            status,
            expected: step.expect.to_string(),
        });
    }
    for capture in &step.captures {
        match extract(capture, &user.collected.headers, &user.collected.body) {
            Some(value) => user.captured.set(&capture.name, value),
            None => {
                return Err(StepFailure::Capture {
                    name: capture.name.clone(),
                    source_text: capture.source.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// The host of a Host header's `host:port` (`[::1]:9` → `::1`).
fn host_of(authority: &str) -> &str {
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => {
            host.trim_matches(['[', ']'])
        }
        _ => authority,
    }
}
