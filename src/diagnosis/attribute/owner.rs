//! Whose code a script is: the app's, a dependency's, or Node's.
//!
//! The rule is the one Node's resolver makes true: code under a
//! `node_modules/` directory belongs to the package named by the path
//! segment after the last `node_modules/` (two segments for a scoped
//! `@scope/name`), and that package's `package.json` gives its version.
//! `node:` URLs are Node's own JavaScript. Everything else with a URL is the
//! app's. A bundle that inlines its dependencies is all "app" here; its
//! source map names the original files (`source_map.rs`), which are then
//! classified by the same rule.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::model::Owner;

/// Classifies scripts, reading each package's `package.json` once.
#[derive(Default)]
pub struct Owners {
    versions: HashMap<PathBuf, Option<String>>,
}

impl Owners {
    /// The owner of the script at `url` (`file:///…`, a plain path, or
    /// `node:…`); `None` for a script without a URL (eval'd code).
    pub fn of(&mut self, url: &str) -> Option<Owner> {
        if url.is_empty() {
            return None;
        }
        if url.starts_with("node:") || !url.contains('/') {
            // Node's internals are `node:…`; a bare name (`timers`) is
            // how some of Node's own scripts are named in snapshots.
            return Some(Owner::Node);
        }
        let path = url.strip_prefix("file://").unwrap_or(url);
        // An original file shown relative to the working directory.
        let relative;
        let path = if path.starts_with("node_modules/") {
            relative = format!("./{path}");
            relative.as_str()
        } else {
            path
        };
        let Some((root, name)) = package_of(path) else {
            return Some(Owner::App);
        };
        let version = self
            .versions
            .entry(root.clone())
            .or_insert_with(|| read_version(&root))
            .clone();
        Some(Owner::Dependency { name, version })
    }
}

/// The package directory and name of a path inside `node_modules/`.
pub fn package_of(path: &str) -> Option<(PathBuf, String)> {
    const MARK: &str = "/node_modules/";
    let at = path.rfind(MARK)?;
    let rest = &path[at + MARK.len()..];
    let mut segments = rest.split('/');
    let first = segments.next().filter(|s| !s.is_empty())?;
    let name = if first.starts_with('@') {
        format!("{first}/{}", segments.next()?)
    } else {
        first.to_string()
    };
    let root = Path::new(&path[..at + MARK.len()]).join(&name);
    Some((root, name))
}

/// The `version` of the package whose folder is `package_root`.
pub fn read_version(package_root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(package_root.join("package.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get("version")?.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_package_after_the_last_node_modules() {
        let (root, name) = package_of("/srv/app/node_modules/express/lib/router/index.js").unwrap();
        assert_eq!(name, "express");
        assert_eq!(root, Path::new("/srv/app/node_modules/express"));
        let (_, nested) =
            package_of("/srv/node_modules/a/node_modules/@scope/pkg/dist/x.js").unwrap();
        assert_eq!(nested, "@scope/pkg");
        assert_eq!(package_of("/srv/app/src/node_modules.js"), None);
    }

    #[test]
    fn classifies_node_app_and_dependency_with_its_version() {
        let dir = std::env::temp_dir().join(format!("lc-owner-{}", std::process::id()));
        let package = dir.join("node_modules/tiny-registry");
        std::fs::create_dir_all(&package).unwrap();
        std::fs::write(
            package.join("package.json"),
            r#"{"name":"tiny-registry","version":"1.4.2"}"#,
        )
        .unwrap();
        let mut owners = Owners::default();
        let url = format!("file://{}/index.js", package.display());
        assert_eq!(
            owners.of(&url),
            Some(Owner::Dependency {
                name: "tiny-registry".into(),
                version: Some("1.4.2".into())
            })
        );
        assert_eq!(owners.of("node:internal/timers"), Some(Owner::Node));
        assert_eq!(owners.of("file:///srv/app/server.mjs"), Some(Owner::App));
        assert_eq!(owners.of(""), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_original_file_shown_relative_to_the_working_directory_keeps_its_package() {
        let mut owners = Owners::default();
        assert!(matches!(
            owners.of("node_modules/next/src/server/render.tsx"),
            Some(Owner::Dependency { name, .. }) if name == "next"
        ));
        assert_eq!(owners.of("pages/index.js"), Some(Owner::App));
    }
}
