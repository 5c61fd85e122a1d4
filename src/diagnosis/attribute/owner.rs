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
        if url.starts_with("ext:") {
            // Deno's own JavaScript (`ext:deno_http/00_serve.ts`).
            return Some(Owner::Runtime {
                name: "Deno".into(),
            });
        }
        if let Some(owner) = remote_module(url) {
            return Some(owner);
        }
        // A bare file name with an extension is a source map's relative
        // source (`server.ts` in Deno's inline maps), the app's own.
        let bare_script = !url.contains('/')
            && [".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"]
                .iter()
                .any(|e| url.ends_with(e));
        if bare_script {
            return Some(Owner::App);
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
        if let Some(owner) = deno_npm_cache(path) {
            return Some(owner);
        }
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

/// A module Deno imported by URL: `jsr:` packages as JSR serves them
/// (`https://jsr.io/@std/http/1.0.2/mod.ts`), and `deno.land` modules
/// (`https://deno.land/x/oak@v12.6.1/mod.ts`, `https://deno.land/std@0.224.0/…`).
fn remote_module(url: &str) -> Option<Owner> {
    if let Some(rest) = url.strip_prefix("https://jsr.io/") {
        let mut segments = rest.split('/');
        let scope = segments.next()?;
        let name = segments.next()?;
        let version = segments.next().map(str::to_string);
        return Some(Owner::Dependency {
            name: format!("{scope}/{name}"),
            version,
        });
    }
    let rest = url.strip_prefix("https://deno.land/")?;
    let rest = rest.strip_prefix("x/").unwrap_or(rest);
    let first = rest.split('/').next()?;
    let (name, version) = match first.split_once('@') {
        Some((name, version)) => (name, Some(version.to_string())),
        None => (first, None),
    };
    Some(Owner::Dependency {
        name: name.to_string(),
        version,
    })
}

/// An `npm:` package in Deno's global cache (without a `node_modules`
/// folder): `…/deno/npm/registry.npmjs.org/NAME/VERSION/…`, a scoped NAME
/// in two segments.
fn deno_npm_cache(path: &str) -> Option<Owner> {
    const MARK: &str = "/npm/registry.npmjs.org/";
    let at = path.find(MARK)?;
    let mut segments = path[at + MARK.len()..].split('/');
    let first = segments.next()?;
    let name = match first.starts_with('@') {
        true => format!("{first}/{}", segments.next()?),
        false => first.to_string(),
    };
    let version = segments.next().map(str::to_string);
    Some(Owner::Dependency { name, version })
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
        assert_eq!(owners.of("timers"), Some(Owner::Node));
        assert_eq!(owners.of("server.ts"), Some(Owner::App));
        assert_eq!(
            owners.of("ext:deno_http/00_serve.ts"),
            Some(Owner::Runtime {
                name: "Deno".into()
            })
        );
        let dependency = |name: &str, version: &str| {
            Some(Owner::Dependency {
                name: name.into(),
                version: Some(version.into()),
            })
        };
        assert_eq!(
            owners.of("https://jsr.io/@std/http/1.0.2/mod.ts"),
            dependency("@std/http", "1.0.2")
        );
        assert_eq!(
            owners.of("https://deno.land/x/oak@v12.6.1/mod.ts"),
            dependency("oak", "v12.6.1")
        );
        assert_eq!(
            owners.of("file:///home/u/.cache/deno/npm/registry.npmjs.org/@hono/node-server/1.2.0/dist/index.js"),
            dependency("@hono/node-server", "1.2.0")
        );
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
