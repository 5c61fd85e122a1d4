//! The user actions that make one iteration of `leakcheck page`: parsed
//! from `--action` flags and performed through the DevTools protocol.
//!
//! Clicks and typing run as DOM calls in the page (`element.click()`, a
//! value set with an `input` event) on the first *visible* match (laid
//! out, not `display: none` or `visibility: hidden`: what a user can
//! click), so they need no coordinates and work headless; keys go through
//! `Input.dispatchKeyEvent`, as a user's would. A selector that matches
//! nothing, or nothing visible, fails the iteration with the selector
//! named: an action that silently does nothing would measure nothing.
//! `wait-idle` waits for the page to settle (`idle.rs`).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::idle::Network;
use crate::inspector::{Inspector, InspectorError};

/// How long `wait-for`, `goto` and `back` wait before failing.
const WAIT_LIMIT: Duration = Duration::from_secs(10);
/// How often `wait-for` and page loads are polled.
const POLL: Duration = Duration::from_millis(20);

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Click(String),
    Type { selector: String, text: String },
    Press(String),
    Goto(String),
    Back,
    Wait(Duration),
    WaitFor(String),
    WaitIdle,
    Eval(String),
}

#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    #[error(
        "--action {0:?} is not an action; use click SELECTOR, type SELECTOR TEXT, press KEY, \
         goto URL, back, wait MS, wait-for SELECTOR, wait-idle or eval JS"
    )]
    Unknown(String),
    #[error("--action {0:?} needs {1}")]
    Missing(String, &'static str),
    #[error("{action}: {failure}")]
    Failed {
        action: String,
        failure: PageFailure,
    },
    #[error(transparent)]
    Inspector(#[from] InspectorError),
}

/// Why an action did not do its work in the page: the iteration fails,
/// the run goes on.
#[derive(Debug, thiserror::Error)]
pub enum PageFailure {
    /// The page's script threw (a selector that matches nothing included).
    #[error("{0}")]
    Threw(String),
    /// The protocol refused the call (a navigation destroyed the context).
    #[error(transparent)]
    Protocol(InspectorError),
    #[error("the page did not load within {} s", WAIT_LIMIT.as_secs())]
    NotLoaded,
    #[error("no element matched {selector:?} within {} s", WAIT_LIMIT.as_secs(), selector = .0)]
    NoMatch(String),
    /// The URL could not be opened, or answered an HTTP error.
    #[error("{url} could not be opened: {why}")]
    NotOpened { url: String, why: String },
    /// The action did not finish within the page's `--timeout` (a script
    /// that never returns, a page whose main thread is blocked).
    #[error("did not finish within {} s", .0.as_secs_f64())]
    TimedOut(Duration),
}

impl Action {
    /// `click #open`, `type input[name=q] hello`, `wait 200`.
    pub fn parse(text: &str) -> Result<Action, ActionError> {
        let text = text.trim();
        let (verb, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        let rest = rest.trim();
        let need = |what: &'static str| {
            if rest.is_empty() {
                Err(ActionError::Missing(text.to_string(), what))
            } else {
                Ok(rest.to_string())
            }
        };
        Ok(match verb {
            "click" => Action::Click(need("a selector")?),
            "type" => {
                let (selector, typed) = need("a selector and a text")?
                    .split_once(char::is_whitespace)
                    .map(|(s, t)| (s.to_string(), t.trim().to_string()))
                    .ok_or(ActionError::Missing(
                        text.to_string(),
                        "a selector and a text",
                    ))?;
                Action::Type {
                    selector,
                    text: typed,
                }
            }
            "press" => Action::Press(need("a key, such as Enter or Escape")?),
            "goto" => Action::Goto(need("a URL")?),
            "back" => Action::Back,
            "wait" => {
                let ms: u64 = need("milliseconds")?.parse().map_err(|_| {
                    ActionError::Missing(text.to_string(), "a number of milliseconds")
                })?;
                Action::Wait(Duration::from_millis(ms))
            }
            "wait-for" => Action::WaitFor(need("a selector")?),
            "wait-idle" => Action::WaitIdle,
            "eval" => Action::Eval(need("a JavaScript expression")?),
            _ => return Err(ActionError::Unknown(text.to_string())),
        })
    }

    /// The action as the user wrote it, for messages.
    pub fn describe(&self) -> String {
        match self {
            Action::Click(s) => format!("click {s}"),
            Action::Type { selector, text } => format!("type {selector} {text}"),
            Action::Press(k) => format!("press {k}"),
            Action::Goto(u) => format!("goto {u}"),
            Action::Back => "back".into(),
            Action::Wait(d) => format!("wait {}", d.as_millis()),
            Action::WaitFor(s) => format!("wait-for {s}"),
            Action::WaitIdle => "wait-idle".into(),
            Action::Eval(js) => format!("eval {js}"),
        }
    }

    /// Performs the action, failing it when it takes longer than `limit`.
    pub async fn perform_within(
        &self,
        page: &Inspector,
        network: &Network,
        limit: Duration,
    ) -> Result<(), ActionError> {
        match tokio::time::timeout(limit, self.perform(page, network)).await {
            Ok(done) => done,
            Err(_) => Err(ActionError::Failed {
                action: self.describe(),
                failure: PageFailure::TimedOut(limit),
            }),
        }
    }

    /// Performs the action in the page behind `page`, whose requests in
    /// flight `network` counts.
    pub async fn perform(&self, page: &Inspector, network: &Network) -> Result<(), ActionError> {
        let failed = |failure: PageFailure| ActionError::Failed {
            action: self.describe(),
            failure,
        };
        match self {
            Action::Click(selector) => {
                in_page(page, &element_call(selector, "e.click()"))
                    .await
                    .map_err(failed)?;
            }
            Action::Type { selector, text } => {
                let body = format!(
                    "e.focus(); e.value = {}; e.dispatchEvent(new Event('input', {{ bubbles: true }})); \
                     e.dispatchEvent(new Event('change', {{ bubbles: true }}))",
                    json!(text)
                );
                in_page(page, &element_call(selector, &body))
                    .await
                    .map_err(failed)?;
            }
            Action::Press(key) => {
                for kind in ["keyDown", "keyUp"] {
                    page.call(
                        "Input.dispatchKeyEvent",
                        json!({ "type": kind, "key": key, "code": key }),
                    )
                    .await?;
                }
            }
            Action::Goto(url) => open(page, url).await.map_err(failed)?,
            Action::Back => {
                // A single-page app's router answers `popstate` after the
                // call returns: wait for the URL to change, or the next
                // click lands on the page being left.
                let before = in_page(page, "location.href").await.map_err(failed)?;
                in_page(page, "history.back()").await.map_err(failed)?;
                wait_until_moved(page, &before).await.map_err(failed)?;
                wait_loaded(page).await.map_err(failed)?;
            }
            Action::Wait(duration) => tokio::time::sleep(*duration).await,
            Action::WaitFor(selector) => {
                let started = Instant::now();
                let probe = format!("document.querySelector({}) !== null", json!(selector));
                while in_page(page, &probe).await.map_err(failed)? != Value::Bool(true) {
                    if started.elapsed() > WAIT_LIMIT {
                        return Err(failed(PageFailure::NoMatch(selector.clone())));
                    }
                    tokio::time::sleep(POLL).await;
                }
            }
            Action::WaitIdle => {
                main_thread_idle(page).await.map_err(failed)?;
                network.settled().await;
                main_thread_idle(page).await.map_err(failed)?;
            }
            Action::Eval(js) => {
                in_page(page, js).await.map_err(failed)?;
            }
        }
        Ok(())
    }
}

/// `(() => { const e = <first visible match of S>; …; BODY })()`; throws
/// naming the selector when nothing, or nothing visible, matches.
fn element_call(selector: &str, body: &str) -> String {
    format!(
        "(() => {{ const all = [...document.querySelectorAll({sel})]; \
           if (!all.length) throw new Error('no element matches ' + {sel}); \
           const e = all.find((v) => {{ const s = getComputedStyle(v); \
             const r = v.getBoundingClientRect(); \
             return s.display !== 'none' && s.visibility !== 'hidden' && r.width > 0 && r.height > 0; }}); \
           if (!e) throw new Error(all.length + ' elements match ' + {sel} + ', none of them visible'); \
           {body}; return true; }})()",
        sel = json!(selector)
    )
}

/// Waits for an idle callback; a navigation that replaced the document
/// meanwhile is retried on the new one (five times, as fuite does).
async fn main_thread_idle(page: &Inspector) -> Result<(), PageFailure> {
    let mut tries = 0;
    loop {
        match in_page(page, super::idle::MAIN_THREAD_IDLE).await {
            Ok(_) => return Ok(()),
            Err(_) if tries < 4 => {
                tries += 1;
                tokio::time::sleep(POLL * 5).await;
            }
            Err(failure) => return Err(failure),
        }
    }
}

/// Evaluates in the page, awaiting a promise; a thrown error is the message.
async fn in_page(page: &Inspector, expression: &str) -> Result<Value, PageFailure> {
    match page.evaluate_promise(expression).await {
        Ok(value) => Ok(value),
        Err(InspectorError::Evaluation { message, .. }) => Err(PageFailure::Threw(message)),
        Err(other) => Err(PageFailure::Protocol(other)),
    }
}

/// Opens `url` in the page and waits for it to load; a navigation that
/// failed (a refused connection) or a page that answered 4xx or 5xx is a
/// failure naming it, not a page to click in.
pub async fn open(page: &Inspector, url: &str) -> Result<(), PageFailure> {
    let navigated = page
        .call("Page.navigate", json!({ "url": url }))
        .await
        .map_err(PageFailure::Protocol)?;
    if let Some(error) = navigated.get("errorText").and_then(Value::as_str) {
        return Err(PageFailure::NotOpened {
            url: url.to_string(),
            why: error.to_string(),
        });
    }
    wait_loaded(page).await?;
    let status = in_page(
        page,
        "(performance.getEntriesByType('navigation')[0] || {}).responseStatus || 0",
    )
    .await?;
    match status.as_u64() {
        Some(code) if code >= 400 => Err(PageFailure::NotOpened {
            url: url.to_string(),
            why: format!("it answered HTTP {code}"),
        }),
        _ => Ok(()),
    }
}

/// Waits until the page's URL is no longer `before` (a page with no
/// history to go back to stays: that is a failed `back`).
async fn wait_until_moved(page: &Inspector, before: &Value) -> Result<(), PageFailure> {
    let started = Instant::now();
    loop {
        // A document being replaced has no context to ask: it moved.
        match in_page(page, "location.href").await {
            Ok(now) if &now == before => {}
            _ => return Ok(()),
        }
        if started.elapsed() > WAIT_LIMIT {
            return Err(PageFailure::Threw(format!(
                "the URL stayed {before} for {} s: no page to go back to",
                WAIT_LIMIT.as_secs()
            )));
        }
        tokio::time::sleep(POLL / 4).await;
    }
}

/// Waits until the document has loaded again (after a navigation).
pub async fn wait_loaded(page: &Inspector) -> Result<(), PageFailure> {
    let started = Instant::now();
    // A navigation replaces the document only after a moment; give it one
    // poll before trusting `complete`.
    tokio::time::sleep(POLL).await;
    loop {
        if in_page(page, "document.readyState").await? == "complete" {
            return Ok(());
        }
        if started.elapsed() > WAIT_LIMIT {
            return Err(PageFailure::NotLoaded);
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_action_and_says_what_is_missing() {
        assert_eq!(
            Action::parse("click #open").unwrap(),
            Action::Click("#open".into())
        );
        assert_eq!(
            Action::parse("type input[name=q] hello world").unwrap(),
            Action::Type {
                selector: "input[name=q]".into(),
                text: "hello world".into()
            }
        );
        assert_eq!(
            Action::parse("wait 200").unwrap(),
            Action::Wait(Duration::from_millis(200))
        );
        assert_eq!(Action::parse("back").unwrap(), Action::Back);
        assert_eq!(Action::parse("wait-idle").unwrap(), Action::WaitIdle);
        assert_eq!(
            Action::parse("eval window.x = 1").unwrap(),
            Action::Eval("window.x = 1".into())
        );
        assert!(matches!(
            Action::parse("click"),
            Err(ActionError::Missing(..))
        ));
        assert!(matches!(
            Action::parse("type #q"),
            Err(ActionError::Missing(..))
        ));
        assert!(matches!(
            Action::parse("wait soon"),
            Err(ActionError::Missing(..))
        ));
        assert!(matches!(
            Action::parse("hover #x"),
            Err(ActionError::Unknown(_))
        ));
        assert!(element_call("#a'b", "e.click()").contains("\"#a'b\""));
    }
}
