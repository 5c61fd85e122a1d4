//! One subcommand's reference page in Markdown: what it does, its usage,
//! every argument with its help, default and accepted values, grouped under
//! the headings `--help` uses, and the examples `--help` ends with.

use std::fmt::Write;

/// The generated page's first line, so that a reader (and an editor) knows
/// not to change it by hand.
pub const GENERATED_NOTE: &str = "<!-- Generated from the command line's definitions by `LEAKCHECK_BLESS=1 cargo nextest run docs::the_flag_reference`; do not edit. -->";

/// The page of `sub` (a subcommand of the built `leakcheck` command).
pub fn page(sub: &clap::Command) -> String {
    let mut page = String::new();
    let name = sub.get_name();
    let _ = writeln!(page, "{GENERATED_NOTE}\n\n# leakcheck {name}\n");
    if let Some(about) = sub.get_long_about().or(sub.get_about()) {
        let _ = writeln!(page, "{about}\n");
    }
    let usage = sub
        .clone()
        .bin_name(format!("leakcheck {name}"))
        .render_usage();
    let usage = usage.to_string();
    let usage = usage.trim_start_matches("Usage: ");
    let _ = writeln!(page, "```text\n{usage}\n```\n");
    for (heading, args) in grouped_args(sub) {
        let _ = writeln!(page, "## {heading}\n");
        for arg in args {
            let _ = writeln!(page, "{}\n", describe(arg));
        }
    }
    if let Some(after) = sub.get_after_help() {
        let text = after.to_string();
        let examples = text.trim_start_matches("Examples:").trim_matches('\n');
        let _ = writeln!(page, "## Examples\n\n```sh\n{}\n```", dedent(examples));
    }
    page
}

/// Arguments under their `--help` heading: positionals first ("Arguments"),
/// then "Options" and the named groups, in the order they were declared.
fn grouped_args(sub: &clap::Command) -> Vec<(String, Vec<&clap::Arg>)> {
    let mut groups: Vec<(String, Vec<&clap::Arg>)> = Vec::new();
    for arg in sub.get_arguments().filter(|arg| !arg.is_hide_set()) {
        let heading = match arg.get_help_heading() {
            Some(heading) => heading.to_string(),
            None if arg.is_positional() => "Arguments".to_string(),
            None => "Options".to_string(),
        };
        match groups.iter_mut().find(|(name, _)| *name == heading) {
            Some((_, args)) => args.push(arg),
            None => groups.push((heading, vec![arg])),
        }
    }
    groups.sort_by_key(|(heading, _)| heading != "Arguments");
    groups
}

/// `- **`-c, --connections <N>`**: help. [default: 10]`
fn describe(arg: &clap::Arg) -> String {
    let mut line = format!("- **`{}`**", signature(arg));
    let help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(|help| help.to_string())
        .unwrap_or_default();
    if !help.is_empty() {
        let _ = write!(line, ": {}", help.replace('\n', " "));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|value| value.to_string_lossy().into_owned())
        .collect();
    if !defaults.is_empty() && !arg.is_hide_default_value_set() {
        let _ = write!(line, " [default: `{}`]", defaults.join(", "));
    }
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|value| !value.is_hide_set())
        .map(|value| format!("`{}`", value.get_name()))
        .collect();
    if !values.is_empty() && arg.get_action().takes_values() {
        let _ = write!(line, " [values: {}]", values.join(", "));
    }
    line
}

/// How the argument is written: `-c, --connections <CONNECTIONS>`, `<URL>`,
/// `[COMMAND]...`.
fn signature(arg: &clap::Arg) -> String {
    let names: Vec<String> = arg
        .get_value_names()
        .map(|names| names.iter().map(|name| format!("<{name}>")).collect())
        .unwrap_or_else(|| vec![format!("<{}>", arg.get_id().as_str().to_uppercase())]);
    let value = names.join(" ");
    let many = matches!(arg.get_num_args(), Some(range) if range.max_values() > 1);
    if arg.is_positional() {
        let value = if many { format!("{value}...") } else { value };
        return if arg.is_required_set() {
            value
        } else {
            format!("[{value}]")
        };
    }
    let mut flags = Vec::new();
    if let Some(short) = arg.get_short() {
        flags.push(format!("-{short}"));
    }
    if let Some(long) = arg.get_long() {
        flags.push(format!("--{long}"));
    }
    let flags = flags.join(", ");
    if arg.get_action().takes_values() {
        format!("{flags} {value}")
    } else {
        flags
    }
}

/// The examples as `--help` shows them, without its two-space indent.
fn dedent(text: &str) -> String {
    text.lines()
        .map(|line| line.strip_prefix("  ").unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}
