//! Reading the README and the book's Markdown for `docs.rs`: fenced blocks,
//! runnable examples with the output they show, links and their anchors.
//! A line scanner, not a Markdown parser: the book's own conventions (fences
//! at the start of a line, `[text](target)` links) are all it needs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::util::{in_ci, on_path};

/// The port the book's examples use for the demo server; a test swaps it
/// for a free one.
pub const DEMO_PORT: &str = "9750";

/// The fence info that marks a shell block whose commands the test runs:
/// ```` ```sh,runnable ```` or ```` ```sh,runnable,exit=1 ````.
const RUNNABLE: &str = "runnable";

/// The fence info of the block that shows what a runnable block prints:
/// ```` ```text,output ````, right after it.
const OUTPUT: &str = "output";

/// One runnable block: its commands, the exit code each must end with, and
/// the output lines it shows.
pub struct Example {
    pub place: String,
    pub commands: Vec<String>,
    pub exit: i32,
    pub shown: Vec<String>,
}

/// A fenced block: its info string, its lines, and the line it starts at.
struct Block {
    info: String,
    lines: Vec<String>,
    line: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (number, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match open.take() {
            Some(block) if fence => blocks.push(block),
            Some(mut block) => {
                block.lines.push(line.to_string());
                open = Some(block);
            }
            None if fence => {
                open = Some(Block {
                    info: line.trim_start().trim_start_matches('`').trim().to_string(),
                    lines: Vec::new(),
                    line: number + 1,
                })
            }
            None => {}
        }
    }
    blocks
}

/// The runnable examples of one Markdown file.
pub fn runnable_examples(file: &Path) -> Vec<Example> {
    let text = std::fs::read_to_string(file).unwrap();
    let blocks = blocks(&text);
    let mut examples = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        let info: Vec<&str> = block.info.split(',').map(str::trim).collect();
        if !info.contains(&RUNNABLE) {
            continue;
        }
        let exit = info
            .iter()
            .find_map(|part| part.strip_prefix("exit="))
            .map_or(0, |code| code.parse().expect("exit=N"));
        let commands = block
            .lines
            .iter()
            .map(|line| line.trim())
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(String::from)
            .collect();
        let shown = blocks
            .get(index + 1)
            .filter(|next| next.info.split(',').any(|part| part.trim() == OUTPUT))
            .map(|next| {
                next.lines
                    .iter()
                    .filter(|line| !line.trim().is_empty())
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        examples.push(Example {
            place: format!("{}:{}", file.display(), block.line),
            commands,
            exit,
            shown,
        });
    }
    examples
}

/// What ends a command in an example's line: `leakcheck man run | man -l -`.
pub const SHELL_OPERATORS: [&str; 6] = ["|", ">", ">>", "&&", "||", ";"];

/// A command line split as the shell would (quotes), up to its first shell
/// operator, for clap or a spawn.
pub fn command_words(line: &str) -> Vec<String> {
    let words = shlex::split(line).unwrap_or_else(|| panic!("unbalanced quotes in `{line}`"));
    words
        .into_iter()
        .take_while(|word| !SHELL_OPERATORS.contains(&word.as_str()))
        .collect()
}

/// The first shown line that the printed output does not contain, in
/// order. A shown line matches a printed one when their words agree, runs
/// of spaces being one space and `…` standing for any text: the book shows
/// the lines that matter (verdict, holder) and elides the figures that vary.
pub fn first_unshown_line(shown: &[String], printed: &str) -> Option<String> {
    let mut printed_lines = printed.lines().map(collapse_spaces);
    for line in shown {
        let pattern = collapse_spaces(line);
        let parts: Vec<&str> = pattern.split('…').map(str::trim).collect();
        if !printed_lines.any(|printed| matches_parts(&printed, &parts)) {
            return Some(line.trim().to_string());
        }
    }
    None
}

fn collapse_spaces(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `text` holds `parts` in order, the first at its start when the
/// pattern did not begin with `…`, the last at its end likewise.
fn matches_parts(text: &str, parts: &[&str]) -> bool {
    let mut rest = text;
    for (index, part) in parts.iter().enumerate() {
        if part.is_empty() {
            continue;
        }
        let Some(at) = rest.find(part) else {
            return false;
        };
        if index == 0 && at != 0 {
            return false;
        }
        rest = &rest[at + part.len()..];
    }
    parts
        .last()
        .is_none_or(|last| last.is_empty() || rest.is_empty())
}

/// Every `.md` file under `folder`.
pub fn markdown_files(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(dir) = folders.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Links of `page` (outside code) that point at a missing file under
/// `root` or a missing heading, as messages.
pub fn broken_links(page: &Path, root: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).unwrap();
    let root = std::fs::canonicalize(root).unwrap();
    let mut broken = Vec::new();
    for target in link_targets(&text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
        let linked = if file.is_empty() {
            page.to_path_buf()
        } else {
            page.parent().unwrap().join(file)
        };
        // The file must exist, so the file system resolves `..` too.
        let resolved = std::fs::canonicalize(&linked).ok();
        let Some(resolved) = resolved.filter(|path| path.starts_with(&root)) else {
            broken.push(format!(
                "{}: link to {target}: no such file",
                page.display()
            ));
            continue;
        };
        let is_markdown = resolved.extension().is_some_and(|e| e == "md");
        if !anchor.is_empty() && is_markdown && !anchors(&resolved).contains(anchor) {
            broken.push(format!(
                "{}: link to {target}: no such heading",
                page.display()
            ));
        }
    }
    broken
}

/// The targets of `[text](target)` links outside fenced blocks and
/// inline code.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let outside_code: String = line
            .split('`')
            .enumerate()
            .filter(|(index, _)| index % 2 == 0)
            .map(|(_, part)| part)
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = outside_code.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(')') {
                targets.push(rest[..end].trim().to_string());
                rest = &rest[end..];
            }
        }
    }
    targets
}

/// The anchors mdBook gives a page's headings: lower case, spaces as `-`,
/// only letters, digits, `-` and `_` kept.
fn anchors(page: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(page).unwrap();
    let mut in_fence = false;
    let mut anchors = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        if in_fence || !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#').trim();
        let id: String = heading
            .chars()
            .filter_map(|c| match c {
                c if c.is_whitespace() => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
                _ => None,
            })
            .collect();
        anchors.insert(id);
    }
    anchors
}

/// Whether `program` is on the PATH; outside CI a missing one skips the
/// test with a line saying so, under CI it fails (`.ci/run` installs it).
pub fn tool_available(program: &str, package: &str) -> bool {
    let found = on_path(program);
    if !found {
        assert!(!in_ci(), "{program} is missing: .ci/run installs {package}");
        eprintln!("skipped: {program} is not installed ({package})");
    }
    found
}
