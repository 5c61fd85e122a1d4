//! The line that stores into the holder when no allocation was sampled
//! (Bun: JavaScriptCore has no sampling heap profiler). The holder's name
//! is known from the snapshots (`sessions`); the app's own scripts the
//! target loaded are read from disk, in their original source (a `.ts`
//! file as written: the runtime transpiled it in memory), and the first
//! line that writes into that name is the answer: `sessions[id] = …`,
//! `cache.set(…)`, `list.push(…)`. It is a textual search, shown with its
//! text and marked as found by name, so a reader can judge it.

use crate::inspector::{Inspector, parsed_scripts};
use crate::model::AllocationSite;
use crate::snapshot::Holder;

use super::source_line::holder_identifiers;

/// What follows a name on a line that writes into it.
const WRITES: [&str; 8] = [
    ".set(",
    ".push(",
    ".add(",
    ".unshift(",
    ".on(",
    ".addListener(",
    ".addEventListener(",
    ".append(",
];

/// Scripts larger than this are a bundle or generated code: not searched.
const MAX_SCRIPT_BYTES: u64 = 4 << 20;

/// The first line of the app's scripts that writes into one of the
/// holders' names, as a site marked `by_name`.
pub async fn storing_line(inspector: &Inspector, holders: &[Holder]) -> Option<AllocationSite> {
    let identifiers: Vec<String> = holders
        .iter()
        .flat_map(|h| holder_identifiers(&h.name))
        .collect();
    if identifiers.is_empty() {
        return None;
    }
    let scripts = parsed_scripts(inspector).await.ok()?;
    for script in scripts {
        let Some(path) = app_file(&script.url) else {
            continue;
        };
        let small = std::fs::metadata(&path).is_ok_and(|m| m.len() <= MAX_SCRIPT_BYTES);
        let Some(source) = small.then(|| std::fs::read_to_string(&path).ok()).flatten() else {
            continue;
        };
        if let Some((line, column, text)) = find_write(&source, &identifiers) {
            return Some(AllocationSite {
                function: String::new(),
                url: script.url.clone(),
                line,
                column,
                holder_line: Some(line),
                holder_line_text: Some(text),
                holder_column: column,
                by_name: true,
                ..AllocationSite::default()
            });
        }
    }
    None
}

/// The file of one of the app's own scripts: a path or `file://` URL on
/// disk, outside `node_modules` and the runtime's own modules.
fn app_file(url: &str) -> Option<std::path::PathBuf> {
    let path = url.strip_prefix("file://").unwrap_or(url);
    // leakcheck's own preload (`crate::runtime::SERVED_PRELOAD`) is not the app's.
    let own = path.starts_with('/')
        && !path.contains("/node_modules/")
        && !path.ends_with(crate::runtime::SERVED_PRELOAD_FILE);
    own.then(|| std::path::PathBuf::from(path))
}

/// The first line (1-based, with the column of the name and the line's
/// text) that writes into one of `names`; a declaration (`const cache =
/// new Map()`) and comments are not writes.
pub fn find_write(source: &str, names: &[String]) -> Option<(u32, u32, String)> {
    for (index, line) in source.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") || code.starts_with('*') || code.starts_with("/*") {
            continue;
        }
        for name in names {
            for (at, _) in line.match_indices(name.as_str()) {
                let before = line[..at].chars().next_back();
                let rest = &line[at + name.len()..];
                let part = |c: char| c.is_alphanumeric() || c == '_' || c == '$' || c == '.';
                if before.is_some_and(part) || rest.starts_with(|c: char| part(c) && c != '.') {
                    continue;
                }
                let writes = WRITES.iter().any(|w| rest.trim_start().starts_with(w))
                    || assigns(rest)
                    || indexed_assignment(rest);
                let declares = ["const ", "let ", "var "]
                    .iter()
                    .any(|d| line[..at].trim_end().ends_with(d.trim_end()));
                if writes && !declares {
                    let column = line[..at].chars().count() as u32 + 1;
                    return Some((index as u32 + 1, column, line.trim().to_string()));
                }
            }
        }
    }
    None
}

/// `name[key] = …`: the bracket closed, then an assignment.
fn indexed_assignment(rest: &str) -> bool {
    let Some(inside) = rest.trim_start().strip_prefix('[') else {
        return false;
    };
    let mut depth = 1;
    for (at, c) in inside.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return assigns(&inside[at + 1..]);
                }
            }
            _ => {}
        }
    }
    false
}

/// `name = …` or `name.key = …` (not `==`, `=>`).
fn assigns(rest: &str) -> bool {
    let rest = rest.trim_start();
    let rest = match rest.strip_prefix('.') {
        Some(after) => {
            after.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_' || c == '$')
        }
        None => rest,
    }
    .trim_start();
    rest.starts_with('=') && !rest.starts_with("==") && !rest.starts_with("=>")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_first_write_is_found_not_the_declaration() {
        let source = "const sessions: Record<string, S> = {};\n\
            // sessions[id] is set below\n\
            function remember(id: string) {\n\
            \x20 const seen = sessions[id] === undefined;\n\
            \x20 sessions[id] = { id };\n\
            }\n";
        // A read (`sessions[id] === …`) on line 4 is not a write.
        let found = find_write(source, &names(&["sessions"])).unwrap();
        assert_eq!(found, (5, 3, "sessions[id] = { id };".to_string()));
        let source = "const cache = new Map();\nconst x = cache.get(1);\ncache.set(id, v);\n";
        assert_eq!(find_write(source, &names(&["cache"])).unwrap().0, 3);
        assert_eq!(
            find_write("let n = 0;\nn = n + 1;\n", &names(&["n"]))
                .unwrap()
                .0,
            2
        );
        assert_eq!(find_write("if (a == b) {}\n", &names(&["a"])), None);
        assert_eq!(find_write("mycache.set(1)\n", &names(&["cache"])), None);
    }

    #[test]
    fn only_the_app_s_own_files_are_searched() {
        assert!(app_file("/srv/app/server.ts").is_some());
        assert!(app_file("file:///srv/app/server.ts").is_some());
        assert!(app_file("/srv/app/node_modules/x/index.js").is_none());
        assert!(app_file("bun:main").is_none());
        assert!(app_file("node:http").is_none());
    }
}
