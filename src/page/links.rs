//! `--links`: fuite's default scenario. Every visible link of the start
//! page that stays on its origin becomes a route of its own, whose
//! iteration clicks the link, waits for the page to settle, goes back and
//! waits again: the way a team's single-page app is used, and leaks the
//! way one leaks (a view's listeners, its data kept after it closed).
//!
//! A link counts when a user could click it on this page: it opens in the
//! same tab (no `target`), it is laid out and visible, and it leads
//! elsewhere on the same origin (not to this very page; a trailing slash
//! and the fragment are ignored, as fuite ignores them). Links to the same
//! URL are one route.

use serde::Deserialize;
use serde_json::json;

use super::Action;
use crate::inspector::{Inspector, InspectorError};

/// One link to follow: the `href` as written (its selector) and where it
/// leads.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Link {
    pub href: String,
    pub url: String,
}

impl Link {
    /// The route's name in the report: the start page, then the link.
    pub fn route(&self, start: &str) -> String {
        format!("{start} → {}", self.href)
    }

    /// Click it, settle, come back, settle.
    pub fn actions(&self) -> Vec<Action> {
        vec![
            Action::Click(format!("a[href={}]", json!(self.href))),
            Action::WaitIdle,
            Action::Back,
            Action::WaitIdle,
        ]
    }
}

/// Runs in the page; returns `[{href, url}]` in document order.
const FIND_LINKS: &str = r#"(() => {
  const here = new URL(location.href);
  const same = (a, b) => ['protocol', 'hostname', 'port', 'search']
      .every((k) => a[k] === b[k])
    && a.pathname.replace(/\/+$/, '') === b.pathname.replace(/\/+$/, '');
  const seen = new Set();
  const links = [];
  for (const a of document.querySelectorAll('a[href]')) {
    const style = getComputedStyle(a);
    const box = a.getBoundingClientRect();
    if (a.target !== '' || style.display === 'none' || style.visibility === 'hidden'
        || box.width <= 0 || box.height <= 0) continue;
    const href = a.getAttribute('href');
    const url = new URL(href, location.href);
    if (url.origin !== here.origin || url.protocol !== here.protocol || same(url, here)) continue;
    url.hash = '';
    if (seen.has(url.href)) continue;
    seen.add(url.href);
    links.push({ href, url: url.href });
  }
  return links;
})()"#;

/// The links of the page open in `page`, as `--links` follows them.
pub async fn find(page: &Inspector) -> Result<Vec<Link>, InspectorError> {
    let found = page.evaluate(FIND_LINKS).await?;
    Ok(serde_json::from_value(found).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_route_clicks_settles_goes_back_and_settles() {
        let link = Link {
            href: "about\"x".into(),
            url: "http://127.0.0.1:1/about".into(),
        };
        assert_eq!(
            link.actions(),
            vec![
                Action::Click(r#"a[href="about\"x"]"#.into()),
                Action::WaitIdle,
                Action::Back,
                Action::WaitIdle
            ]
        );
        assert_eq!(
            link.route("http://127.0.0.1:1/"),
            "http://127.0.0.1:1/ → about\"x"
        );
    }
}
