//! Routes from a Next.js build's manifests, both routers, no server
//! needed: `server/pages-manifest.json` (the pages router: pages and
//! `/api` routes) and `server/app-paths-manifest.json` (the app router:
//! `page` and `route` entries). Next's own files (`/_app`, `/_error`,
//! `/404`, `_not-found`) are left out; route groups (`(shop)`) are not
//! part of the URL; parallel slots (`@modal`) and intercepting routes
//! (`(.)photo`) repeat another route's URL and are skipped.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Declared, RouteSource};

/// The pages router's own entries, which no request names.
const INTERNAL_PAGES: [&str; 6] = [
    "/_app",
    "/_document",
    "/_error",
    "/404",
    "/500",
    "/_not-found",
];

/// The build folder (`.next`) of an app folder, or the folder itself.
pub fn build_dir(folder: &Path) -> Option<PathBuf> {
    let nested = folder.join(".next");
    if nested.join("BUILD_ID").exists() {
        return Some(nested);
    }
    folder
        .join("BUILD_ID")
        .exists()
        .then(|| folder.to_path_buf())
}

/// The routes of the build in `build` (a `.next` folder).
pub fn read(build: &Path) -> anyhow::Result<Vec<Declared>> {
    use anyhow::Context;
    let read_json = |name: &str| -> anyhow::Result<Option<Value>> {
        let path = build.join("server").join(name);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some(
                serde_json::from_str(&text).with_context(|| format!("{}", path.display()))?,
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    };
    let mut patterns: Vec<String> = Vec::new();
    if let Some(pages) = read_json("pages-manifest.json")? {
        for page in pages.as_object().into_iter().flat_map(|m| m.keys()) {
            if !INTERNAL_PAGES.contains(&page.as_str()) {
                patterns.push(page.clone());
            }
        }
    }
    if let Some(app) = read_json("app-paths-manifest.json")? {
        for entry in app.as_object().into_iter().flat_map(|m| m.keys()) {
            if let Some(url) = app_route_url(entry) {
                patterns.push(url);
            }
        }
    }
    if patterns.is_empty() {
        anyhow::bail!(
            "{} has no pages-manifest.json or app-paths-manifest.json with routes: run `next build` first",
            build.join("server").display()
        );
    }
    patterns.sort();
    patterns.dedup();
    Ok(patterns
        .iter()
        .map(|p| Declared::from_path("GET", p, RouteSource::Next, "next build"))
        .collect())
}

/// The URL of an app-router entry (`/shop/(sale)/items/[id]/page`), or
/// `None` for Next's own and for slots and interceptions.
fn app_route_url(entry: &str) -> Option<String> {
    let path = entry
        .strip_suffix("/page")
        .or_else(|| entry.strip_suffix("/route"))?;
    let mut url = String::new();
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        if segment.starts_with('@') || segment.starts_with("(.") || segment == "_not-found" {
            return None;
        }
        if segment.starts_with('(') && segment.ends_with(')') {
            continue;
        }
        url.push('/');
        url.push_str(segment);
    }
    if url.is_empty() {
        url.push('/');
    }
    Some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_router_entries_lose_groups_and_skip_slots() {
        assert_eq!(app_route_url("/page").as_deref(), Some("/"));
        assert_eq!(
            app_route_url("/(shop)/items/[id]/page").as_deref(),
            Some("/items/[id]")
        );
        assert_eq!(
            app_route_url("/api/health/route").as_deref(),
            Some("/api/health")
        );
        assert_eq!(app_route_url("/@modal/photo/page"), None);
        assert_eq!(app_route_url("/_not-found/page"), None);
        assert_eq!(app_route_url("/layout"), None);
    }

    #[test]
    fn a_build_reads_both_routers_without_nexts_own_pages() {
        let dir = tempfile::tempdir().unwrap();
        let server = dir.path().join("server");
        std::fs::create_dir_all(&server).unwrap();
        std::fs::write(dir.path().join("BUILD_ID"), "x").unwrap();
        std::fs::write(
            server.join("pages-manifest.json"),
            r#"{"/_app":"a","/_error":"b","/":"c","/api/items/[id]":"d"}"#,
        )
        .unwrap();
        std::fs::write(
            server.join("app-paths-manifest.json"),
            r#"{"/dashboard/page":"e","/_not-found/page":"f"}"#,
        )
        .unwrap();
        assert_eq!(build_dir(dir.path()).as_deref(), Some(dir.path()));
        let routes = read(dir.path()).unwrap();
        let patterns: Vec<&str> = routes.iter().map(|r| r.pattern.as_str()).collect();
        assert_eq!(patterns, ["/", "/api/items/[id]", "/dashboard"]);
        assert_eq!(routes[1].params[0].name, "id");
    }
}
