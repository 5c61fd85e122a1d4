//! A snapshot fit to attach to a public issue: every string value replaced
//! by its length and a keyed hash, with the names a reader needs kept
//! (classes, functions, variables, properties), so that DevTools,
//! `inspect` and `diff` show the same holders and paths.
//!
//! V8 names a string node by its value and keeps one table of strings for
//! every name in the file. Rewriting that table in place, index for index,
//! leaves the nodes and edges untouched: the file is copied byte for byte
//! up to the table and after it, and only the table is written anew.
//!
//! Which strings stay:
//! - the names of nodes that are not strings (class, function and code
//!   names, Node's native objects);
//! - the names of context, internal, shortcut and weak edges (variables
//!   and V8's own slots);
//! - the names of property edges that look like names (`name_like`): a
//!   dictionary's keys are data (a session id keyed in a store), and a key
//!   made of random characters is hashed like a value.
//!
//! Everything else, string values first, becomes `<redacted N chars
//! #hash>`: equal values give equal text within one bundle (one `Redactor`
//! keys both snapshots), so `diff`'s tally by value groups as before, and
//! the hash is keyed with a random key that is never written, so a short
//! secret cannot be found by hashing guesses.

use std::fs::File;
use std::hash::{BuildHasher, RandomState};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::graph::{EdgeType, HeapGraph};

/// What one rewrite did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Redacted {
    pub strings: u64,
    pub kept: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
}

/// One key for a bundle's snapshots.
#[derive(Default)]
pub struct Redactor {
    key: RandomState,
}

impl Redactor {
    /// Rewrites the snapshot at `from` into `to`.
    pub fn redact(&self, from: &Path, to: &Path) -> anyhow::Result<Redacted> {
        let size = std::fs::metadata(from)?.len();
        let graph = super::parse_sized(std::io::BufReader::new(File::open(from)?), Some(size))
            .map_err(|e| anyhow::anyhow!("{}: {e}", from.display()))?;
        let kept = kept_strings(&graph);
        let (start, end) = graph.strings_span;
        let mut input = File::open(from)?;
        let mut out = BufWriter::with_capacity(1 << 20, File::create(to)?);
        std::io::copy(&mut (&mut input).take(start), &mut out)?;
        out.write_all(b"[")?;
        let strings = &graph.strings;
        for (id, keep) in kept.iter().enumerate() {
            if id > 0 {
                out.write_all(b",\n")?;
            }
            let bytes = strings.bytes_of(super::StringId(id as u32));
            let text = String::from_utf8_lossy(bytes);
            if *keep {
                serde_json::to_writer(&mut out, &text)?;
            } else {
                let hash = self.key.hash_one(bytes);
                write!(
                    out,
                    "\"<redacted {} chars #{hash:016x}>\"",
                    text.chars().count()
                )?;
            }
        }
        out.write_all(b"]")?;
        input.seek(SeekFrom::Start(end))?;
        std::io::copy(&mut input, &mut out)?;
        out.flush()?;
        let bytes_out = out.get_ref().metadata()?.len();
        Ok(Redacted {
            strings: strings.len() as u64,
            kept: kept.iter().filter(|k| **k).count() as u64,
            bytes_in: size,
            bytes_out,
        })
    }
}

/// Per string id: whether it is a name that stays.
fn kept_strings(graph: &HeapGraph) -> Vec<bool> {
    #[derive(Clone, Copy, PartialEq)]
    enum Use {
        Value,
        /// Only as property keys: kept if it reads as a name.
        Key,
        Name,
    }
    let mut uses = vec![Use::Value; graph.strings.len()];
    let mut mark = |id: u32, seen: Use| {
        if let Some(slot) = uses.get_mut(id as usize)
            && *slot != Use::Name
        {
            *slot = seen;
        }
    };
    for (raw, name) in graph.node_type.iter().zip(&graph.node_name) {
        if !graph.node_type_of_raw(*raw).is_string_value() {
            mark(name.0, Use::Name);
        }
    }
    for (raw, name) in graph.edge_type.iter().zip(&graph.edge_name) {
        match graph.edge_type_of_raw(*raw) {
            EdgeType::Element | EdgeType::Hidden => {}
            EdgeType::Property => mark(*name, Use::Key),
            _ => mark(*name, Use::Name),
        }
    }
    // A key is judged once, not once per object that has it: `_events`
    // names a property of hundreds of thousands of objects.
    uses.iter()
        .enumerate()
        .map(|(id, used)| match used {
            Use::Name => true,
            Use::Key => name_like(graph.strings.bytes_of(super::StringId(id as u32))),
            Use::Value => false,
        })
        .collect()
}

/// Longest property name kept as written.
const LONGEST_NAME: usize = 64;

/// Whether a property key reads as a name someone wrote (`_events`,
/// `maxListenersWarningThreshold`, `content-type`, `<symbol kHeaders>`)
/// rather than data used as a key (a session id, a token, a URL). A
/// name's words start rarely (once per four letters or more); random
/// characters change case or turn digit about every other character.
pub fn name_like(text: &[u8]) -> bool {
    if text.is_empty() || text.len() > LONGEST_NAME {
        return false;
    }
    if let Some(inner) = text
        .strip_prefix(b"<symbol ")
        .and_then(|t| t.strip_suffix(b">"))
    {
        // A symbol's description is written in the code, and Node's own
        // read like `node:entry_point_module` or `nodejs.rejection`: each
        // part between colons must read as a name.
        return inner.is_empty() || inner.split(|b| *b == b':').all(name_like);
    }
    let allowed = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'-' | b'.');
    if !text.iter().all(|b| allowed(*b)) {
        return false;
    }
    let word_starts = text
        .windows(2)
        .filter(|w| {
            (w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
                || (w[0].is_ascii_alphabetic() && w[1].is_ascii_digit())
                || (w[0].is_ascii_digit() && w[1].is_ascii_alphabetic())
        })
        .count();
    word_starts <= text.len() / 5 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_kept_and_keys_made_of_data_are_not() {
        for name in [
            "_events",
            "knownTimersById",
            "maxListenersWarningThreshold",
            "content-type",
            "x-api-key",
            "<symbol kHeaders>",
            "<symbol node:entry_point_module>",
            "<symbol nodejs.rejection>",
            "HTTPParser",
            "getAllResponseHeaders",
            "a1",
        ] {
            assert!(name_like(name.as_bytes()), "{name}");
        }
        for data in [
            "s%3AkT9fQ2xVbN7mWc1ZpL4aR8yE0uHdJ6gI",
            "kT9fQ2xVbN7mWc1ZpL4aR8yE0uHdJ6gI",
            "9f8a7b6c5d4e3f2a1b0c",
            "sk_live_9f8a7b6c5d4e3f2a1b0c",
            "/products/42/reviews",
            "Bearer abc",
            "<symbol kT9fQ2xVbN7mWc1ZpL4aR8yE0uHdJ6gI>",
            "<symbol a:>",
            "",
        ] {
            assert!(!name_like(data.as_bytes()), "{data}");
        }
    }
}
