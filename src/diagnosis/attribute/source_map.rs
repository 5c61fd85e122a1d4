//! Compiled locations back to original sources, through the scripts'
//! source maps (the Source Map v3 format, decoded by the `sourcemap`
//! crate).
//!
//! A script names its map with a `//# sourceMappingURL=` comment, which V8
//! reports in `Debugger.scriptParsed` as `sourceMapURL`: either inline data
//! (`data:application/json;base64,…`) or a path relative to the script
//! (`audit.js.map` next to `audit.js`, as `tsc --sourceMap` writes). A map
//! that cannot be read or parsed, or that has no mapping for a line, leaves
//! the compiled location in place with a note saying why.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sourcemap::DecodedMap;

use crate::model::SourceLocation;

/// A decoded map and the directory its relative sources start from.
struct Loaded {
    map: DecodedMap,
    base: PathBuf,
}

/// The maps of the scripts asked about, loaded once each.
#[derive(Default)]
pub struct SourceMaps {
    maps: HashMap<String, Result<Loaded, String>>,
}

impl SourceMaps {
    /// Loads the map `map_url` names for the script at `script_url`.
    pub fn load(&mut self, script_url: &str, map_url: &str) {
        if self.maps.contains_key(script_url) {
            return;
        }
        let loaded = decode(script_url, map_url);
        self.maps.insert(script_url.to_string(), loaded);
    }

    /// Whether a map was named for this script (loaded or not).
    pub fn has(&self, script_url: &str) -> bool {
        self.maps.contains_key(script_url)
    }

    /// The original place of a compiled one (1-based), `Ok(None)` when
    /// the script has no map, `Err(note)` when its map fails or has no
    /// mapping there.
    pub fn original(
        &self,
        script_url: &str,
        line: u32,
        column: u32,
    ) -> Result<Option<SourceLocation>, String> {
        let Some(loaded) = self.maps.get(script_url) else {
            return Ok(None);
        };
        let loaded = loaded.as_ref().map_err(Clone::clone)?;
        let token = loaded
            .map
            .lookup_token(line.saturating_sub(1), column.saturating_sub(1))
            .filter(|t| t.get_dst_line() == line.saturating_sub(1))
            .ok_or_else(|| format!("the source map has no mapping for line {line}"))?;
        let source = token
            .get_source()
            .ok_or_else(|| format!("the source map names no source for line {line}"))?;
        let path = resolve(&loaded.base, source);
        let original_line = token.get_src_line() + 1;
        Ok(Some(SourceLocation {
            text: line_text(&path, original_line),
            file: shown(&path),
            line: original_line,
            column: token.get_src_col() + 1,
            name: token.get_name().map(str::to_string),
        }))
    }

    /// The one original file of a script whose map has a single source
    /// (one `.ts` per `.js`, as tsc writes).
    pub fn only_source(&self, script_url: &str) -> Option<String> {
        let loaded = self.maps.get(script_url)?.as_ref().ok()?;
        let DecodedMap::Regular(map) = &loaded.map else {
            return None;
        };
        (map.get_source_count() == 1)
            .then(|| map.get_source(0))
            .flatten()
            .map(|source| shown(&resolve(&loaded.base, source)))
    }
}

fn decode(script_url: &str, map_url: &str) -> Result<Loaded, String> {
    let script_dir = file_path(script_url)
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    if map_url.starts_with("data:") {
        let map = sourcemap::decode_data_url(map_url)
            .map_err(|e| format!("the inline source map is malformed: {e}"))?;
        return Ok(Loaded {
            map,
            base: script_dir,
        });
    }
    let map_path = file_path(map_url)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| script_dir.join(map_url));
    let bytes = std::fs::read(&map_path)
        .map_err(|e| format!("cannot read the source map {}: {e}", map_path.display()))?;
    let map = sourcemap::decode_slice(&bytes)
        .map_err(|e| format!("the source map {} is malformed: {e}", map_path.display()))?;
    Ok(Loaded {
        map,
        base: map_path.parent().map(Path::to_path_buf).unwrap_or_default(),
    })
}

/// A `file://` URL or a plain path as a path; `None` for other URLs.
fn file_path(url: &str) -> Option<PathBuf> {
    if let Some(path) = url.strip_prefix("file://") {
        return Some(PathBuf::from(percent_decoded(path)));
    }
    (!url.contains("://")).then(|| PathBuf::from(url))
}

/// `%20` → space: file URLs escape what paths may hold.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(value) = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(value);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A map's source relative to the map's directory, normalised.
fn resolve(base: &Path, source: &str) -> PathBuf {
    let joined = webpack_source(base, source)
        .or_else(|| file_path(source).filter(|p| p.is_absolute()))
        .unwrap_or_else(|| base.join(source));
    let mut clean = PathBuf::new();
    for part in joined.components() {
        match part {
            std::path::Component::ParentDir => {
                clean.pop();
            }
            std::path::Component::CurDir => {}
            other => clean.push(other),
        }
    }
    clean
}

/// `webpack://NAMESPACE/./pages/index.js`, as webpack (and so Next.js)
/// names sources: the path after the namespace is relative to the build's
/// root. For a package's own bundle (`node_modules/next/dist/compiled/…`,
/// namespace `next`) that is the package's folder; for an app built by
/// Next, the folder that holds `.next`; otherwise the map's folder.
fn webpack_source(base: &Path, source: &str) -> Option<PathBuf> {
    let rest = source.strip_prefix("webpack://")?;
    let (namespace, path) = rest.split_once('/')?;
    let package = base.ancestors().find(|dir| {
        !namespace.is_empty()
            && dir.ends_with(namespace)
            && dir
                .parent()
                .is_some_and(|p| p.file_name().is_some_and(|n| n == "node_modules"))
    });
    let next_build = || {
        base.ancestors()
            .find(|dir| dir.file_name().is_some_and(|n| n == ".next"))
            .and_then(Path::parent)
    };
    let root = package.or_else(next_build).unwrap_or(base);
    Some(root.join(path.trim_start_matches('/')))
}

/// Relative to the working directory when inside it, as editors and
/// terminals make clickable.
fn shown(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}

fn line_text(path: &Path, line: u32) -> Option<String> {
    const SHOWN_CHARS: usize = 120;
    let text = std::fs::read_to_string(path).ok()?;
    let found = text.lines().nth(line.checked_sub(1)? as usize)?;
    Some(found.trim().chars().take(SHOWN_CHARS).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webpack_sources_resolve_to_the_build_root() {
        let app = Path::new("/srv/app/.next/server/pages");
        assert_eq!(
            resolve(app, "webpack://nextapp/./pages/index.js"),
            PathBuf::from("/srv/app/pages/index.js")
        );
        let next = Path::new("/srv/app/node_modules/next/dist/compiled/next-server");
        assert_eq!(
            resolve(next, "webpack://next/dist/src/server/render.tsx"),
            PathBuf::from("/srv/app/node_modules/next/dist/src/server/render.tsx")
        );
        // Not webpack's: relative to the map, as before.
        assert_eq!(
            resolve(Path::new("/srv/dist"), "../src/a.ts"),
            PathBuf::from("/srv/src/a.ts")
        );
    }

    /// `a.js` compiled from `a.ts`: line 1 of the output maps to line 3,
    /// column 5 of the source ("AAEI" = columns 0, source 0, line +2, col +4).
    const MAP: &str =
        r#"{"version":3,"file":"a.js","sources":["../src/a.ts"],"names":[],"mappings":"AAEI"}"#;

    #[test]
    fn maps_a_compiled_line_to_its_source_beside_the_map() {
        let dir = std::env::temp_dir().join(format!("lc-map-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("dist")).unwrap();
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("dist/a.js.map"), MAP).unwrap();
        std::fs::write(dir.join("src/a.ts"), "// one\n// two\n    kept.push(x);\n").unwrap();
        let script = format!("file://{}/dist/a.js", dir.display());
        let mut maps = SourceMaps::default();
        maps.load(&script, "a.js.map");
        let found = maps.original(&script, 1, 1).unwrap().unwrap();
        assert!(found.file.ends_with("src/a.ts"), "{}", found.file);
        assert_eq!((found.line, found.column), (3, 5));
        assert_eq!(found.text.as_deref(), Some("kept.push(x);"));
        assert!(maps.only_source(&script).unwrap().ends_with("src/a.ts"));
        // A line the map does not cover is said, not guessed.
        assert!(maps.original(&script, 7, 1).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_or_broken_map_is_a_note_not_a_location() {
        let mut maps = SourceMaps::default();
        maps.load("file:///nowhere/app.js", "app.js.map");
        let note = maps.original("file:///nowhere/app.js", 1, 1).unwrap_err();
        assert!(
            note.contains("cannot read the source map /nowhere/app.js.map"),
            "{note}"
        );
        maps.load(
            "file:///x/inline.js",
            "data:application/json;base64,bm90IGpzb24=",
        );
        assert!(
            maps.original("file:///x/inline.js", 1, 1)
                .unwrap_err()
                .contains("malformed")
        );
        assert_eq!(maps.original("file:///x/unmapped.js", 1, 1), Ok(None));
    }

    #[test]
    fn file_urls_are_decoded_and_sources_normalised() {
        assert_eq!(percent_decoded("/a%20b/c.js"), "/a b/c.js");
        assert_eq!(
            resolve(Path::new("/p/dist"), "../src/a.ts"),
            Path::new("/p/src/a.ts")
        );
    }
}
