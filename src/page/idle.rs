//! `wait-idle`: the page has settled after an action. Idle means the main
//! thread ran an idle callback (`requestIdleCallback`: no task, no frame
//! pending), no network request has been in flight for `NETWORK_QUIET`,
//! and then the main thread is idle again (the responses' handlers ran).
//! This is what fuite waits for after each step (puppeteer's network idle
//! between two idle callbacks); the quiet window here is measured from the
//! last request's end, not from the start of the wait, so a step that
//! fetched nothing costs one idle callback, not half a second.
//!
//! Requests in flight are counted from the `Network` domain's events by a
//! task started with the page (`Network::watch`).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::inspector::{Inspector, InspectorError};

/// How long no request may be in flight before the network is idle. A
/// follow-up fetch starts within a frame or two of the response that
/// caused it (16–33 ms); 100 ms covers that with margin.
pub const NETWORK_QUIET: Duration = Duration::from_millis(100);
/// How often the in-flight count is looked at while waiting.
const POLL: Duration = Duration::from_millis(10);
/// A page whose network never settles (polling, a long-lived stream) is
/// not waited on longer than this; the wait then ends, as fuite's does.
const NETWORK_LIMIT: Duration = Duration::from_secs(5);

/// The page's requests in flight, kept by a task fed with `Network` events.
#[derive(Debug, Clone)]
pub struct Network(Arc<Mutex<InFlight>>);

#[derive(Debug)]
struct InFlight {
    requests: HashSet<String>,
    changed: Instant,
}

impl Network {
    /// Enables the `Network` domain and starts counting. The task holds a
    /// weak handle and ends with the session.
    pub async fn watch(page: &Inspector) -> Result<Network, InspectorError> {
        let mut events = page.subscribe_to("Network.");
        page.call("Network.enable", json!({})).await?;
        let network = Network(Arc::new(Mutex::new(InFlight {
            requests: HashSet::new(),
            changed: Instant::now(),
        })));
        let counted = network.clone();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                let id = event.params.get("requestId").and_then(Value::as_str);
                let (Some(id), Ok(mut state)) = (id, counted.0.lock()) else {
                    continue;
                };
                let changed = match event.method.as_str() {
                    "Network.requestWillBeSent" => state.requests.insert(id.to_string()),
                    "Network.loadingFinished" | "Network.loadingFailed" => {
                        state.requests.remove(id)
                    }
                    _ => false,
                };
                if changed {
                    state.changed = Instant::now();
                }
            }
        });
        Ok(network)
    }

    /// Whether nothing has been in flight for `NETWORK_QUIET`.
    fn quiet(&self) -> bool {
        let state = self.0.lock().expect("network state lock");
        state.requests.is_empty() && state.changed.elapsed() >= NETWORK_QUIET
    }

    /// Waits until nothing has been in flight for `NETWORK_QUIET`, at most
    /// `NETWORK_LIMIT`.
    pub async fn settled(&self) {
        let started = Instant::now();
        while !self.quiet() && started.elapsed() < NETWORK_LIMIT {
            tokio::time::sleep(POLL).await;
        }
    }

    /// Forgets requests that will never end (a navigation dropped them
    /// without an event), so the next wait does not hang on them.
    pub fn forget_all(&self) {
        if let Ok(mut state) = self.0.lock() {
            state.requests.clear();
        }
    }
}

/// An idle callback in the page; resolves at once where the browser has
/// none (a timeout keeps a busy page from holding it forever).
pub const MAIN_THREAD_IDLE: &str = "new Promise((resolve) => \
    (window.requestIdleCallback || ((f) => setTimeout(f, 1)))(() => resolve(true), \
    { timeout: 1000 }))";
