//! Starting a Deno or Bun target with its inspector: where each runtime
//! takes the flags, and the scripts that wrap the real command.
//!
//! - `deno run|serve [flags] FILE …`: the flags go after the subcommand
//!   (`deno FILE` is `deno run FILE`).
//! - `bun [run] [flags] FILE …`: the flags go right after `bun`.
//! - `deno task NAME`, `bun run NAME`, `npm run NAME` / `npm start` (and
//!   pnpm's and yarn's): the script's text is read from `deno.json(c)` or
//!   `package.json` and, when it starts Deno or Bun, started directly with
//!   the flags in it, the project's `node_modules/.bin` first on PATH as a
//!   package manager would. A script that starts Node keeps Node's path
//!   (NODE_OPTIONS); one that chains commands (`&&`, `|`) is refused with
//!   what to type instead.
//!
//! The inspector listens on 127.0.0.1 at a port the kernel picks, as for
//! Node: it runs any code for whoever connects.

use std::path::{Path, PathBuf};

use super::Runtime;

/// Deno's and Bun's inspector flag: loopback, an ephemeral port.
pub const INSPECT: &str = "--inspect=127.0.0.1:0";

/// A Deno or Bun command ready to start.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub runtime: Runtime,
    pub command: Vec<String>,
    /// A PATH with the project's `node_modules/.bin` first, for a script
    /// read from `package.json`.
    pub path: Option<String>,
    /// How the command was understood, when it was read from a script.
    pub note: Option<String>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PrepareError {
    #[error(
        "`{given}` runs the script `{script}`, which chains commands; leakcheck puts the inspector \
         into one Deno or Bun command: give that command after `--` (e.g. `-- {suggestion}`)"
    )]
    Chained {
        given: String,
        script: String,
        suggestion: String,
    },
    #[error(
        "`{given}` names the script `{name}`, which is not in {looked}; check the name, or give \
         the command after `--`"
    )]
    NoScript {
        given: String,
        name: String,
        looked: String,
    },
}

/// What the runtime gets beside its inspector flag.
#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// The served counter's preload file.
    pub preload: Option<PathBuf>,
    /// V8 flags (Deno only: `--max-old-space-size`, `--perf-basic-prof`).
    pub v8_flags: Vec<String>,
}

/// The command with Deno's or Bun's inspector flags in place, or `None`
/// when it starts Node (or anything else), which keeps Node's launch.
pub fn prepare(
    command: &[String],
    cwd: &Path,
    extras: &Extras,
) -> Result<Option<Prepared>, PrepareError> {
    prepare_at(command, cwd, extras, 0)
}

/// Scripts may name scripts (`npm start` → `deno task dev`); a loop of
/// them ends here.
const MAX_SCRIPT_DEPTH: usize = 4;

fn prepare_at(
    command: &[String],
    cwd: &Path,
    extras: &Extras,
    depth: usize,
) -> Result<Option<Prepared>, PrepareError> {
    let Some((program, args)) = command.split_first() else {
        return Ok(None);
    };
    let runtime = Runtime::of_program(program);
    let script = match (runtime, script_name(program, args)) {
        (_, Some((name, rest))) if depth < MAX_SCRIPT_DEPTH => Some((name, rest)),
        _ => None,
    };
    if let Some((name, rest)) = script {
        let (text, looked) = read_script(cwd, runtime, name);
        let given = command.join(" ");
        let Some(text) = text else {
            // npm's own scripts (`npm test` of a package without one) and
            // names of Bun's files are not ours to refuse.
            return match runtime {
                Runtime::Deno => Err(PrepareError::NoScript {
                    given,
                    name: name.to_string(),
                    looked,
                }),
                _ => Ok(None),
            };
        };
        return from_script(&given, &text, rest, cwd, extras, depth);
    }
    let flags = flags_for(runtime, extras);
    let mut prepared = match runtime {
        Runtime::Node => return Ok(None),
        Runtime::Deno => {
            let (sub, rest) = match args.split_first() {
                Some((sub, rest)) if sub == "run" || sub == "serve" => (sub.clone(), rest),
                _ => ("run".to_string(), args),
            };
            let mut out = vec![program.clone(), sub];
            out.extend(flags);
            out.extend(rest.iter().cloned());
            out
        }
        Runtime::Bun => {
            let mut out = vec![program.clone()];
            out.extend(flags);
            out.extend(args.iter().cloned());
            out
        }
    };
    prepared.shrink_to_fit();
    Ok(Some(Prepared {
        runtime,
        command: prepared,
        path: None,
        note: None,
    }))
}

fn flags_for(runtime: Runtime, extras: &Extras) -> Vec<String> {
    let mut flags = vec![INSPECT.to_string()];
    if let Some(preload) = &extras.preload {
        flags.push(format!("--preload={}", preload.display()));
    }
    if runtime == Runtime::Deno && !extras.v8_flags.is_empty() {
        flags.push(format!("--v8-flags={}", extras.v8_flags.join(",")));
    }
    flags
}

/// The script a command names, and the arguments after it: `deno task
/// NAME`, `bun run NAME` (or `bun NAME`) when NAME is not a file,
/// `npm|pnpm|yarn run NAME`, `npm start`.
fn script_name<'a>(program: &str, args: &'a [String]) -> Option<(&'a str, &'a [String])> {
    let name = Path::new(program).file_name()?.to_str()?;
    let first = args.first()?.as_str();
    match (name, first) {
        ("deno", "task") => split_name(&args[1..]),
        ("bun", "run") => split_name(&args[1..]).filter(|(n, _)| !looks_like_a_file(n)),
        ("bun", n) if !n.starts_with('-') && !looks_like_a_file(n) => split_name(args),
        ("npm" | "pnpm" | "yarn", "run" | "run-script") => split_name(&args[1..]),
        ("npm" | "pnpm" | "yarn", "start") => Some(("start", strip_dashes(&args[1..]))),
        ("pnpm" | "yarn", n) if !n.starts_with('-') => split_name(args),
        _ => None,
    }
}

fn split_name(args: &[String]) -> Option<(&str, &[String])> {
    let (name, rest) = args.split_first()?;
    Some((name.as_str(), strip_dashes(rest)))
}

/// npm passes what follows `--` to the script.
fn strip_dashes(args: &[String]) -> &[String] {
    match args.split_first() {
        Some((dashes, rest)) if dashes == "--" => rest,
        _ => args,
    }
}

fn looks_like_a_file(name: &str) -> bool {
    const EXTENSIONS: [&str; 8] = [".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"];
    name.contains('/') || EXTENSIONS.iter().any(|e| name.ends_with(e))
}

/// The script's text from the files the runner reads (Deno: `deno.json`,
/// `deno.jsonc`, then `package.json`'s scripts), and where it looked.
fn read_script(cwd: &Path, runtime: Runtime, name: &str) -> (Option<String>, String) {
    let mut files: Vec<(&str, &str)> = Vec::new();
    if runtime == Runtime::Deno {
        files.push(("deno.json", "tasks"));
        files.push(("deno.jsonc", "tasks"));
    }
    files.push(("package.json", "scripts"));
    let looked = files
        .iter()
        .map(|(file, key)| format!("{file}'s {key}"))
        .collect::<Vec<_>>()
        .join(", ");
    for (file, key) in files {
        let Ok(text) = std::fs::read_to_string(cwd.join(file)) else {
            continue;
        };
        let Ok(json) = serde_json::from_str::<serde_json::Value>(&strip_line_comments(&text))
        else {
            continue;
        };
        let entry = &json[key][name];
        // Deno's tasks may be objects: `{ "command": "…" }`.
        let script = entry
            .as_str()
            .or_else(|| entry.get("command").and_then(|c| c.as_str()));
        if let Some(script) = script {
            return (Some(script.to_string()), looked);
        }
    }
    (None, looked)
}

/// `deno.jsonc` allows `//` comments on their own lines.
fn strip_line_comments(text: &str) -> String {
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn from_script(
    given: &str,
    script: &str,
    rest: &[String],
    cwd: &Path,
    extras: &Extras,
    depth: usize,
) -> Result<Option<Prepared>, PrepareError> {
    let Some(mut words) = shlex::split(script) else {
        return Ok(None);
    };
    let chained = words
        .iter()
        .any(|w| matches!(w.as_str(), "&&" | "||" | "|" | ";" | "&"));
    words.extend(rest.iter().cloned());
    let starts = words
        .first()
        .map_or(Runtime::Node, |p| Runtime::of_program(p));
    if starts == Runtime::Node {
        return Ok(None);
    }
    if chained {
        // The server is usually the last command a script chains.
        let suggestion = words
            .split(|w| matches!(w.as_str(), "&&" | "||" | "|" | ";" | "&"))
            .rfind(|part| {
                part.first()
                    .is_some_and(|p| Runtime::of_program(p) != Runtime::Node)
            })
            .unwrap_or_default()
            .join(" ");
        return Err(PrepareError::Chained {
            given: given.to_string(),
            script: script.to_string(),
            suggestion,
        });
    }
    let Some(mut prepared) = prepare_at(&words, cwd, extras, depth + 1)? else {
        return Ok(None);
    };
    let bin = cwd.join("node_modules").join(".bin");
    let inherited = std::env::var("PATH").unwrap_or_default();
    prepared.path = Some(format!("{}:{inherited}", bin.display()));
    prepared.note.get_or_insert(format!(
        "`{given}` runs `{script}`: started directly as `{}` with {}'s inspector",
        prepared.command.join(" "),
        prepared.runtime.name()
    ));
    Ok(Some(prepared))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    fn prepared(text: &str, cwd: &Path) -> Vec<String> {
        prepare(&words(text), cwd, &Extras::default())
            .unwrap()
            .expect("a Deno or Bun command")
            .command
    }

    #[test]
    fn deno_takes_the_flag_after_its_subcommand() {
        let here = Path::new(".");
        assert_eq!(
            prepared("deno run -A server.ts", here),
            words("deno run --inspect=127.0.0.1:0 -A server.ts")
        );
        assert_eq!(
            prepared("deno server.ts", here),
            words("deno run --inspect=127.0.0.1:0 server.ts")
        );
        assert_eq!(
            prepared("deno serve --port 8000 main.ts", here),
            words("deno serve --inspect=127.0.0.1:0 --port 8000 main.ts")
        );
    }

    #[test]
    fn bun_takes_the_flag_before_its_file() {
        let here = Path::new(".");
        assert_eq!(
            prepared("bun server.ts", here),
            words("bun --inspect=127.0.0.1:0 server.ts")
        );
        assert_eq!(
            prepared("bun run server.ts", here),
            words("bun --inspect=127.0.0.1:0 run server.ts")
        );
    }

    #[test]
    fn node_commands_are_left_to_node_s_launch() {
        assert_eq!(
            prepare(&words("node a.js"), Path::new("."), &Extras::default()),
            Ok(None)
        );
    }

    #[test]
    fn scripts_are_read_and_started_directly() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("deno.jsonc"),
            "{\n // the server\n \"tasks\": { \"dev\": \"deno run -A main.ts\", \
             \"both\": \"deno fmt && deno run main.ts\" }\n}",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("package.json"),
            r#"{ "scripts": { "start": "bun server.ts", "node": "node a.js", "via": "deno task dev" } }"#,
        )
        .unwrap();
        let extras = Extras {
            preload: Some("/tmp/p.js".into()),
            v8_flags: vec!["--max-old-space-size=64".into()],
        };
        let deno = prepare(&words("deno task dev"), dir.path(), &extras)
            .unwrap()
            .unwrap();
        assert_eq!(
            deno.command,
            words(
                "deno run --inspect=127.0.0.1:0 --preload=/tmp/p.js \
                 --v8-flags=--max-old-space-size=64 -A main.ts"
            )
        );
        assert!(
            deno.note
                .unwrap()
                .contains("`deno task dev` runs `deno run -A main.ts`")
        );
        assert!(deno.path.unwrap().contains("node_modules/.bin:"));
        let bun = prepared("npm start", dir.path());
        assert_eq!(bun, words("bun --inspect=127.0.0.1:0 server.ts"));
        assert_eq!(prepared("npm run via", dir.path())[0], "deno");
        assert_eq!(prepared("bun run start", dir.path())[0], "bun");
        assert_eq!(
            prepare(&words("npm run node"), dir.path(), &extras),
            Ok(None)
        );
        let chained = prepare(&words("deno task both"), dir.path(), &extras).unwrap_err();
        assert!(
            chained.to_string().contains("(e.g. `-- deno run main.ts`)"),
            "{chained}"
        );
        let missing = prepare(&words("deno task nope"), dir.path(), &extras).unwrap_err();
        assert!(missing.to_string().contains("deno.json's tasks"));
    }
}
