//! The documentation cannot drift from the tool: the book's flag reference
//! is the command line's own, every `--help` ends with examples that parse,
//! completions load in bash, man pages render without warnings, the book's
//! links resolve, it builds, and its runnable examples run with the output
//! they show. Markdown is read by `docs_util.rs`.

use std::collections::BTreeSet;
use std::path::Path;

use crate::docs_util::*;
use crate::util::*;

/// `LEAKCHECK_BLESS=1` rewrites the generated pages instead of failing.
fn bless() -> bool {
    std::env::var("LEAKCHECK_BLESS").is_ok_and(|v| v == "1")
}

#[test]
fn the_flag_reference_is_the_command_line_s_own() {
    let folder = repo_path("docs/src/reference");
    let pages = leakcheck::manual::reference_pages();
    if bless() {
        std::fs::create_dir_all(&folder).unwrap();
        for (name, text) in &pages {
            std::fs::write(folder.join(name), text).unwrap();
        }
    }
    let summary = std::fs::read_to_string(repo_path("docs/src/SUMMARY.md")).unwrap();
    for (name, text) in &pages {
        let path = folder.join(name);
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == *text,
            "{} is not what the command line generates: run \
             `LEAKCHECK_BLESS=1 cargo nextest run docs::the_flag_reference` and commit it",
            path.display()
        );
        assert!(
            summary.contains(&format!("(reference/{name})")),
            "SUMMARY.md does not list reference/{name}"
        );
    }
    // Every long flag of every subcommand is on its page.
    let command = leakcheck::manual::cli_command();
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        let (_, page) = pages
            .iter()
            .find(|(name, _)| *name == format!("{}.md", sub.get_name()))
            .expect("a page per subcommand");
        for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(long) = arg.get_long() {
                assert!(
                    page.contains(&format!("--{long}")),
                    "--{long} of {} missing",
                    sub.get_name()
                );
            }
        }
    }
}

#[test]
fn every_subcommand_s_help_ends_with_whole_examples_that_parse() {
    let command = leakcheck::manual::cli_command();
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = sub.get_name();
        let help = sub.clone().render_long_help().to_string();
        let examples = help
            .split_once("Examples:")
            .unwrap_or_else(|| panic!("`leakcheck {name} --help` has no Examples:\n{help}"))
            .1;
        let lines: Vec<&str> = examples
            .lines()
            .map(str::trim)
            .filter(|line| line.starts_with(&format!("leakcheck {name}")))
            .collect();
        assert!(
            lines.len() >= 2,
            "`leakcheck {name} --help` shows {} whole examples; two or three are expected",
            lines.len()
        );
        for line in lines {
            let words = command_words(line);
            if let Err(error) = command.clone().try_get_matches_from(&words) {
                panic!("the example `{line}` of `{name} --help` does not parse:\n{error}");
            }
        }
    }
    // And a wrong one does not, or the check above proves nothing.
    let wrong = command_words("leakcheck run --url http://127.0.0.1:1 --no-such-flag");
    assert!(command.clone().try_get_matches_from(wrong).is_err());
}

#[test]
fn completions_load_in_bash_and_offer_subcommands_and_flags() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let finished = run_leakcheck(&["completions", shell]);
        assert_eq!(finished.code, 0, "{shell}: {}", finished.stderr);
        assert!(finished.stdout.contains("leakcheck"), "{shell}");
        std::fs::write(dir.path().join(shell), &finished.stdout).unwrap();
    }
    let script = dir.path().join("bash");
    // `complete -p` after sourcing, then the completion function asked as
    // bash asks it, for `leakcheck wa<TAB>` and `leakcheck watch --met<TAB>`.
    let probe = format!(
        r#"source {script}
complete -p leakcheck
COMP_WORDS=(leakcheck wa); COMP_CWORD=1; COMP_LINE="leakcheck wa"; COMP_POINT=12
_leakcheck leakcheck wa leakcheck; echo "subcommands: ${{COMPREPLY[*]}}"
COMP_WORDS=(leakcheck watch --met); COMP_CWORD=2; COMP_LINE="leakcheck watch --met"; COMP_POINT=21
_leakcheck leakcheck --met watch; echo "flags: ${{COMPREPLY[*]}}""#,
        script = script.display()
    );
    let output = std::process::Command::new("bash")
        .args(["--noprofile", "--norc", "-c", &probe])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("-F _leakcheck leakcheck"), "{stdout}");
    assert!(stdout.contains("subcommands: watch"), "{stdout}");
    assert!(stdout.contains("--metrics"), "{stdout}");
}

#[test]
fn man_pages_render_without_warnings_and_name_every_flag() {
    if !tool_available("man", "man") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let finished = run_leakcheck(&["man", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let command = leakcheck::manual::cli_command();
    let mut expected: BTreeSet<String> = BTreeSet::from(["leakcheck.1".to_string()]);
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        expected.insert(format!("leakcheck-{}.1", sub.get_name()));
    }
    let written: BTreeSet<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written, expected);
    for page in &written {
        let output = std::process::Command::new("man")
            .args(["--warnings", "-l"])
            .arg(dir.path().join(page))
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && stderr.trim().is_empty(),
            "{page}: {stderr}"
        );
        if page == "leakcheck-watch.1" {
            let text = without_overstrike(&String::from_utf8_lossy(&output.stdout));
            for flag in ["--metrics", "--until-decided", "--checkpoint", "Examples:"] {
                assert!(
                    text.contains(flag),
                    "{flag} missing from watch's page:\n{text}"
                );
            }
        }
    }
    // One page to stdout, for `| man -l -`.
    let one = run_leakcheck(&["man", "fn"]);
    assert!(one.stdout.starts_with(".ie") && one.stdout.contains("leakcheck\\-fn"));
    let unknown = run_leakcheck(&["man", "nonesuch"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("the pages are: run"),
        "{}",
        unknown.stderr
    );
}

/// man's bold and underline (`X\bX`, `_\bX`) as plain text, as `col -b` does.
fn without_overstrike(text: &str) -> String {
    let mut plain: Vec<char> = Vec::new();
    for c in text.chars() {
        if c == '\u{8}' {
            plain.pop();
        } else {
            plain.push(c);
        }
    }
    plain.into_iter().collect()
}

#[test]
fn the_book_s_links_resolve_and_every_page_is_in_its_summary() {
    let src = repo_path("docs/src");
    let pages = markdown_files(&src);
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let mut broken = Vec::new();
    for page in &pages {
        let relative = page
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if relative != "SUMMARY.md" && !summary.contains(&format!("({relative})")) {
            broken.push(format!(
                "{relative} is not in SUMMARY.md, so the book omits it"
            ));
        }
        broken.extend(broken_links(page, &src));
    }
    // The README's links into the book resolve too (as GitHub renders them).
    broken.extend(broken_links(&repo_path("README.md"), &repo_path("")));
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_book_builds() {
    if !tool_available("mdbook", "mdbook") {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let output = std::process::Command::new("mdbook")
        .args(["build", "--dest-dir"])
        .arg(out.path())
        .arg(repo_path("docs"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        !stderr.contains("WARN") && !stderr.contains("ERROR"),
        "{stderr}"
    );
    for page in ["index.html", "getting-started.html", "reference/run.html"] {
        assert!(out.path().join(page).is_file(), "{page} not built");
    }
    let run = std::fs::read_to_string(out.path().join("reference/run.html")).unwrap();
    assert!(run.contains("--max-time") && run.contains("Examples"));
}

#[test]
fn runnable_examples_run_and_print_what_they_show() {
    let mut files = markdown_files(&repo_path("docs/src"));
    files.push(repo_path("README.md"));
    let pages: Vec<Vec<Example>> = files.iter().map(|file| runnable_examples(file)).collect();
    let count: usize = pages.iter().map(Vec::len).sum();
    assert!(
        count >= 4,
        "the README and the book mark {count} examples runnable"
    );
    let failures: Vec<String> = pages
        .iter()
        .filter(|examples| !examples.is_empty())
        .filter_map(|examples| run_page_examples(examples).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs one page's examples in order, as a reader would type them, in one
/// scratch folder beside `examples/` (so that a later example reads what an
/// earlier one wrote); the book's demo port is swapped for a free one so
/// that they run beside other tests. Err says what differed.
fn run_page_examples(examples: &[Example]) -> Result<(), String> {
    let scratch = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo_path("examples"), scratch.path().join("examples")).unwrap();
    let port = free_port().to_string();
    for example in examples {
        let mut printed = String::new();
        for line in &example.commands {
            let line = line.replace(DEMO_PORT, &port);
            if SHELL_OPERATORS
                .iter()
                .any(|op| line.split_whitespace().any(|word| word == *op))
            {
                return Err(format!(
                    "{}: `{line}`: a runnable line is one command, run without a shell",
                    example.place
                ));
            }
            let words = command_words(&line);
            if words.first().map(String::as_str) != Some("leakcheck") {
                return Err(format!(
                    "{}: `{line}` is not a leakcheck command",
                    example.place
                ));
            }
            let mut command = leakcheck();
            command
                .args(&words[1..])
                .current_dir(scratch.path())
                .env("PATH", path_with_test_node())
                .env("PORT", &port);
            let finished = run_to_end(command);
            printed.push_str(&finished.stdout);
            printed.push_str(&finished.stderr);
            if finished.code != example.exit {
                return Err(format!(
                    "{}: `{line}` exited {} where the book says {}:\n{printed}",
                    example.place, finished.code, example.exit
                ));
            }
        }
        if let Some(line) = first_unshown_line(&example.shown, &printed) {
            return Err(format!(
                "{}: the book shows `{line}`, which the run did not print (in order):\n{printed}",
                example.place
            ));
        }
    }
    Ok(())
}

/// PATH with the Node line under test first, as `.ci/run` sets it.
fn path_with_test_node() -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    match Path::new(&node())
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
    {
        Some(dir) => format!("{}:{path}", dir.display()),
        None => path,
    }
}

#[test]
fn a_shown_output_is_matched_line_by_line_with_ellipses() {
    let printed = "route /leak\nverdict: retention (leak): 0.44 KB kept per request\n  /leak   retention  0.44 KB (heapUsed)   `keptRequests`\n";
    let shown = [
        "verdict: retention (leak): … kept per request",
        "/leak retention … `keptRequests`",
    ];
    assert_eq!(first_unshown_line(&shown.map(String::from), printed), None);
    // Out of order, a changed word, or a holder that is not there: each fails.
    let reordered = ["/leak retention …", "verdict: retention …"];
    assert!(first_unshown_line(&reordered.map(String::from), printed).is_some());
    let wrong_verdict = ["verdict: no-retention …"];
    assert!(first_unshown_line(&wrong_verdict.map(String::from), printed).is_some());
    let wrong_holder = ["/leak retention … `keptBuffers`"];
    assert!(first_unshown_line(&wrong_holder.map(String::from), printed).is_some());
}
