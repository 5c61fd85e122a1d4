//! The command line describing itself: shell completions (clap_complete),
//! man pages (clap_mangen) and the book's flag reference (Markdown), all
//! read off the clap definitions in `cli/`, so none can name a flag that
//! is gone or miss one that was added. `tests/it/docs.rs` checks the
//! book's copy of the reference against [`reference_pages`].

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use clap::CommandFactory;

use super::{Cli, CompletionShell};

mod reference;

/// The whole command line, built (help flags and versions propagated).
pub fn cli_command() -> clap::Command {
    let mut command = Cli::command();
    command.build();
    command
}

/// Writes the completion script for `shell` to `out`.
pub fn completions(shell: CompletionShell, out: &mut dyn Write) {
    use clap_complete::Shell;
    let shell = match shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
        CompletionShell::Powershell => Shell::PowerShell,
        CompletionShell::Elvish => Shell::Elvish,
    };
    clap_complete::generate(shell, &mut Cli::command(), "leakcheck", out);
}

/// Prints the page of `leakcheck` or of one subcommand to `out`.
pub fn man_page(subcommand: Option<&str>, out: &mut dyn Write) -> anyhow::Result<()> {
    let command = cli_command();
    let page = match subcommand {
        None => command,
        Some(name) => page_command(&command, name)?,
    };
    clap_mangen::Man::new(page)
        .render(out)
        .context("cannot write the manual page")
}

/// Writes `leakcheck.1` and `leakcheck-SUBCOMMAND.1` for every subcommand
/// into `dir` (created if missing); returns the files written.
pub fn man_pages(dir: &Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| {
        format!(
            "cannot create {}: choose a folder you can write",
            dir.display()
        )
    })?;
    let command = cli_command();
    let mut pages = vec![("leakcheck".to_string(), command.clone())];
    for sub in command
        .get_subcommands()
        .filter(|sub| sub.get_name() != "help")
    {
        pages.push((
            format!("leakcheck-{}", sub.get_name()),
            page_command(&command, sub.get_name())?,
        ));
    }
    let mut written = Vec::new();
    for (name, page) in pages {
        let path = dir.join(format!("{name}.1"));
        let mut buffer = Vec::new();
        clap_mangen::Man::new(page).render(&mut buffer)?;
        std::fs::write(&path, buffer)
            .with_context(|| format!("cannot write {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// A subcommand renamed `leakcheck-NAME`, as man pages of subcommands are
/// named (git-commit(1)), with the version of the whole tool.
fn page_command(command: &clap::Command, name: &str) -> anyhow::Result<clap::Command> {
    let sub = command.find_subcommand(name).with_context(|| {
        let names: Vec<&str> = command.get_subcommands().map(|s| s.get_name()).collect();
        format!(
            "no subcommand `{name}`; the pages are: {}",
            names.join(", ")
        )
    })?;
    Ok(sub
        .clone()
        .name(format!("leakcheck-{name}"))
        .version(command.get_version().unwrap_or_default().to_string()))
}

/// The book's reference: one Markdown page per subcommand, as
/// `(file name, content)`, in the order `--help` lists them.
pub fn reference_pages() -> Vec<(String, String)> {
    let command = cli_command();
    command
        .get_subcommands()
        .filter(|sub| sub.get_name() != "help")
        .map(|sub| (format!("{}.md", sub.get_name()), reference::page(sub)))
        .collect()
}
