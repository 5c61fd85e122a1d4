//! The line that stores into the holder, inside the function that
//! allocated what it keeps.
//!
//! V8's sampling heap profiler locates an allocation by its function only
//! (the function's first line). The diagnosis knows two more things: the
//! function, and the variable that holds what it allocated. The line of that
//! function that names the variable is the line a user goes to
//! (`keptRequests.push(...)` on the demo), so the script's source is read
//! through the inspector (`Debugger.getScriptSource`) and searched within
//! the function's braces. It is a textual search: a brace or a name inside
//! a string or comment can mislead it, which is why the report shows the
//! line's text beside its number.

use serde_json::json;

use crate::inspector::{Inspector, InspectorError};
use crate::model::AllocationSite;
use crate::snapshot::Holder;

/// Lines searched after a function's first line, at most.
const MAX_FUNCTION_LINES: usize = 400;
/// Characters of the found line kept for the report.
const LINE_TEXT_CHARS: usize = 120;

/// The identifiers of a holder's name worth searching for: `kept` in
/// `kept`, `auditLog` in `globalThis.auditLog`, `configBus` in
/// `configBus._events.reload`.
pub fn holder_identifiers(name: &str) -> Vec<String> {
    name.split('.')
        .filter(|part| is_identifier(part) && !matches!(*part, "globalThis" | "_events"))
        .map(str::to_string)
        .collect()
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// Whether `text` contains `name` as a whole identifier.
#[cfg(test)]
fn names(text: &str, name: &str) -> bool {
    named_at(text, name).is_some()
}

/// The byte offset of the first whole-identifier `name` in `text`.
fn named_at(text: &str, name: &str) -> Option<usize> {
    let part_of_identifier = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    text.match_indices(name).map(|(at, _)| at).find(|&at| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(part_of_identifier)
            && !after.is_some_and(part_of_identifier)
            && !inside_a_string(&text[..at])
    })
}

/// Lines longer than this are a bundle's (minified code on one line):
/// there a regular expression's quote (`/'/g`, common in escaping
/// helpers) would throw the reading of strings off for the rest of the
/// program, so matches in them are taken as found, as before.
const MOST_LEXED_CHARS: usize = 400;

/// Whether the text that precedes a match leaves it inside a string or
/// template literal (`'/socket.io/'` does not name the variable `io`). A
/// template's `${…}` is code, braces nested in it counted.
fn inside_a_string(before: &str) -> bool {
    if before.len() > MOST_LEXED_CHARS {
        return false;
    }
    enum Context {
        Code { braces: u32 },
        Quoted(char),
        Template,
    }
    let mut stack = vec![Context::Code { braces: 0 }];
    let mut chars = before.chars().peekable();
    while let Some(c) = chars.next() {
        let top = stack.last_mut().expect("the bottom is never popped");
        match top {
            Context::Code { braces } => match c {
                '\'' | '"' => stack.push(Context::Quoted(c)),
                '`' => stack.push(Context::Template),
                '{' => *braces += 1,
                '}' if *braces > 0 => *braces -= 1,
                // The `}` that closes a template's `${`.
                '}' if stack.len() > 1 => {
                    stack.pop();
                }
                _ => {}
            },
            Context::Quoted(quote) => match c {
                '\\' => {
                    chars.next();
                }
                c if c == *quote => {
                    stack.pop();
                }
                _ => {}
            },
            Context::Template => match c {
                '\\' => {
                    chars.next();
                }
                '`' => {
                    stack.pop();
                }
                '$' if chars.peek() == Some(&'{') => {
                    chars.next();
                    stack.push(Context::Code { braces: 0 });
                }
                _ => {}
            },
        }
    }
    !matches!(stack.last(), Some(Context::Code { .. }))
}

/// Where the holder is named: its line and column (1-based, the column in
/// characters, so a minified bundle's one long line still maps through its
/// source map to the original statement), and the text shown for it.
#[derive(Debug, PartialEq, Eq)]
pub struct Found {
    pub line: u32,
    pub column: u32,
    pub text: String,
}

/// Characters shown before the name on a line too long to show whole.
const CONTEXT_BEFORE: usize = 24;

/// The first line (1-based) of the function starting at `line`:`column`
/// (1-based) that names one of `identifiers`, with its text. The function
/// ends where the braces opened after its start close; a function without
/// braces (an arrow returning an expression) is its first two lines.
pub fn find_line(source: &str, line: u32, column: u32, identifiers: &[String]) -> Option<Found> {
    let start = (line as usize).checked_sub(1)?;
    let mut depth = 0i64;
    let mut opened = false;
    for (index, full) in source
        .lines()
        .enumerate()
        .skip(start)
        .take(MAX_FUNCTION_LINES)
    {
        let skip = if index == start {
            (column as usize).saturating_sub(1)
        } else {
            0
        };
        let text = full
            .char_indices()
            .nth(skip)
            .map_or("", |(at, _)| &full[at..]);
        // A comment names things in prose ("Socket.io answers its own
        // path" is not the variable `io`), and its braces are not code.
        if is_comment(text) {
            continue;
        }
        let at = identifiers
            .iter()
            .filter_map(|name| named_at(text, name))
            .min();
        if let Some(at) = at {
            let column = skip + text[..at].chars().count();
            return Some(Found {
                line: index as u32 + 1,
                column: column as u32 + 1,
                text: shown_around(full, column),
            });
        }
        for c in text.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if (opened && depth <= 0) || (!opened && index > start) {
            return None;
        }
    }
    None
}

/// Whether a line is only a comment (`//`, or inside a `/* */` block by
/// its usual leading `*`).
fn is_comment(text: &str) -> bool {
    let code = text.trim_start();
    code.starts_with("//") || code.starts_with("/*") || code.starts_with('*')
}

/// The line as shown: whole when short, else the stretch around the name
/// (a bundle's one line holds the whole program).
fn shown_around(full: &str, column: usize) -> String {
    let trimmed = full.trim();
    if trimmed.chars().count() <= LINE_TEXT_CHARS {
        return trimmed.to_string();
    }
    let from = column.saturating_sub(CONTEXT_BEFORE);
    let stretch: String = full.chars().skip(from).take(LINE_TEXT_CHARS).collect();
    if from > 0 {
        format!("…{stretch}")
    } else {
        stretch
    }
}

/// Fills `holder_line` of the sites in the application's own scripts.
pub async fn name_holder_lines(
    inspector: &Inspector,
    sites: &mut [AllocationSite],
    holders: &[Holder],
) -> Result<(), InspectorError> {
    let identifiers: Vec<String> = holders
        .iter()
        .flat_map(|h| holder_identifiers(&h.name))
        .collect();
    let own_code = |s: &AllocationSite| {
        !s.script_id.is_empty() && !s.url.starts_with("node:") && !s.url.contains("/node_modules/")
    };
    if identifiers.is_empty() || !sites.iter().any(own_code) {
        return Ok(());
    }
    inspector.call("Debugger.enable", json!({})).await?;
    for site in sites.iter_mut().filter(|s| own_code(s)) {
        let source = inspector
            .call(
                "Debugger.getScriptSource",
                json!({ "scriptId": site.script_id }),
            )
            .await?;
        if let Some(text) = source.get("scriptSource").and_then(|v| v.as_str())
            && let Some(found) = find_line(text, site.line, site.column, &identifiers)
        {
            site.holder_column = found.column;
            site.holder_line = Some(found.line);
            site.holder_line_text = Some(found.text);
        }
    }
    inspector.call("Debugger.disable", json!({})).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEMO: &str = "const keptRequests = [];\n\
        const routes = {\n\
        \x20 '/leak': (req, res) => {\n\
        \x20   const record = { at: 1 };\n\
        \x20   keptRequests.push(record);\n\
        \x20 },\n\
        \x20 '/other': () => keptRequests.length,\n\
        };\n";

    fn ids(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn finds_the_line_that_names_the_holder_inside_the_function() {
        let found = find_line(DEMO, 3, 12, &ids(&["keptRequests"]));
        assert_eq!(
            found,
            Some(Found {
                line: 5,
                column: 5,
                text: "keptRequests.push(record);".into()
            })
        );
    }

    #[test]
    fn a_comment_that_names_the_holder_in_prose_is_not_its_line() {
        let source = "server.on('request', (req, res) => {\n\
            \x20 // Socket.io answers its own path { so skip it\n\
            \x20 /* io is the server\n\
            \x20  * io again */\n\
            \x20 io.of(name).emit('x');\n\
            });\n";
        let found = find_line(source, 1, 22, &ids(&["io", "_nsps"])).unwrap();
        assert_eq!(found.line, 5, "{found:?}");
        assert_eq!(found.text, "io.of(name).emit('x');");
    }

    #[test]
    fn a_name_inside_a_string_is_not_the_variable() {
        assert!(!names("if (url.startsWith('/socket.io/')) return;", "io"));
        assert!(!names(r#"log("it's io")"#, "io"));
        assert!(names("emit(`/${io.name}`)", "io"));
        assert!(names("const a = 'x'; io.of(a)", "io"));
        assert!(names(r"const a = 'it\'s'; io.of(a)", "io"));
        // A template literal ends where its backtick closes, `${…}` and all.
        assert!(names("x = `item-${b}-${c}`; m.set(b, c)", "m"));
        assert!(names("x = `a ${ {k: 1}.k } b`; m.set(b)", "m"));
        assert!(!names("x = `a ${b} m`", "m"));
        // A bundle's long line is not read for strings (a regex's quote
        // would throw it off): the first match stands.
        let bundle = format!("{}; s.replace(/'/g, q); m.set(b)", "f(a)".repeat(120));
        assert!(names(&bundle, "m"));
    }

    #[test]
    fn stops_at_the_end_of_the_function() {
        // `/other` is outside `/leak`'s braces and must not be found.
        assert_eq!(find_line(DEMO, 3, 12, &ids(&["length"])), None);
        // An arrow without braces is its own first lines.
        assert_eq!(
            find_line(DEMO, 7, 13, &ids(&["keptRequests"])).map(|f| f.line),
            Some(7)
        );
    }

    #[test]
    fn a_minified_line_gives_the_column_of_the_name_and_the_text_around_it() {
        let bundle = format!(
            "\"use strict\";{}function n(a){{let b=m.get(a);b||(b={{id:a}},m.set(a,b));return b}}",
            "var x=1;".repeat(40)
        );
        let start = bundle.find("function n").unwrap() as u32 + 1;
        let found = find_line(&bundle, 1, start, &ids(&["m"])).unwrap();
        assert_eq!(found.line, 1);
        let at = bundle.find("m.get").unwrap() as u32 + 1;
        assert_eq!(found.column, at);
        assert!(found.text.starts_with('…'), "{}", found.text);
        assert!(found.text.contains("m.get(a)"), "{}", found.text);
    }

    #[test]
    fn matches_whole_identifiers_only() {
        assert!(names("kept.push(x)", "kept"));
        assert!(!names("keptRequests.push(x)", "kept"));
        assert!(!names("unkept.push(x)", "kept"));
        assert_eq!(
            holder_identifiers("globalThis.auditLog"),
            ids(&["auditLog"])
        );
        assert_eq!(
            holder_identifiers("configBus._events.reload"),
            ids(&["configBus", "reload"])
        );
        assert!(holder_identifiers("bus._events.config-changed") == ids(&["bus"]));
    }
}
