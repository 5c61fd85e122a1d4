//! `alert`, `confirm`, `prompt` and `beforeunload` dialogs: while one is
//! open the page runs no script, so every later action and reading would
//! wait on it. A task dismisses each as it opens (`confirm` answers false,
//! `prompt` null, an `alert` is closed) and counts them; the count goes
//! into each cycle's report (`load.dialogs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;

use crate::inspector::Inspector;

/// Dialogs dismissed so far, shared with the task that dismisses them.
#[derive(Debug, Clone, Default)]
pub struct Dialogs(Arc<AtomicU64>);

impl Dialogs {
    /// Starts dismissing the dialogs of `page` (whose `Page` domain is
    /// enabled). The task holds a weak handle: it ends with the session.
    pub fn dismiss(page: &Inspector) -> Dialogs {
        let count = Dialogs::default();
        let mut opened = page.subscribe_to("Page.javascriptDialogOpening");
        let weak = page.downgrade();
        let counted = count.clone();
        tokio::spawn(async move {
            while opened.recv().await.is_some() {
                let Some(page) = weak.upgrade() else {
                    return;
                };
                counted.0.fetch_add(1, Ordering::Relaxed);
                // A dialog closed meanwhile answers an error: nothing to do.
                let _ = page
                    .call("Page.handleJavaScriptDialog", json!({ "accept": false }))
                    .await;
            }
        });
        count
    }

    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}
