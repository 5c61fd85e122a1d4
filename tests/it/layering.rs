//! The layering of `src/` points one way: no top-level module reaches,
//! through `crate::…` paths, a module that reaches back to it, and the
//! leaves stay leaves (`model` needs nothing, the snapshot engine only the
//! model, the reports never the command line). Read from the source, so a
//! new import that closes a cycle fails here, with the cycle named.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::util::repo_path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Top-level module → the top-level modules its code names.
fn imports() -> Graph {
    let src = repo_path("src");
    let modules: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let stem = p.file_stem()?.to_str()?.to_string();
            (p.is_dir() || p.extension().is_some_and(|e| e == "rs")).then_some(stem)
        })
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let mut graph = Graph::new();
    for module in &modules {
        let mut named = BTreeSet::new();
        let dir = src.join(module);
        let file = src.join(format!("{module}.rs"));
        for path in rust_files(&dir)
            .into_iter()
            .chain([file].into_iter().filter(|f| f.is_file()))
        {
            let text = std::fs::read_to_string(&path).unwrap();
            for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                named.extend(crate_paths(line).filter(|n| modules.contains(n) && n != module));
            }
        }
        graph.insert(module.clone(), named);
    }
    graph
}

fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for path in entries.map(|e| e.unwrap().path()) {
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// The first segment after each `crate::` of a line, `crate::{a, b}` included.
fn crate_paths(line: &str) -> impl Iterator<Item = String> + '_ {
    paths_after(line, "crate::")
}

/// The first segment after each `prefix` of a line, `prefix{a, b}` included.
fn paths_after<'a>(line: &'a str, prefix: &'a str) -> impl Iterator<Item = String> + 'a {
    line.match_indices(prefix).flat_map(move |(at, _)| {
        let rest = &line[at + prefix.len()..];
        let group = match rest.strip_prefix('{') {
            Some(inner) => &inner[..inner.find('}').unwrap_or(inner.len())],
            None => rest,
        };
        let mut names = Vec::new();
        for part in group.split(',') {
            let name: String = part
                .trim()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            names.push(name);
            if !rest.starts_with('{') {
                break;
            }
        }
        names
    })
}

/// A path from `from` back to `to`, if there is one.
fn path_between(graph: &Graph, from: &str, to: &str) -> Option<Vec<String>> {
    let mut stack = vec![vec![from.to_string()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().unwrap().clone();
        if last == to {
            return Some(path);
        }
        if !seen.insert(last.clone()) {
            continue;
        }
        for next in graph.get(&last).into_iter().flatten() {
            let mut longer = path.clone();
            longer.push(next.clone());
            stack.push(longer);
        }
    }
    None
}

#[test]
fn no_top_level_module_imports_one_that_imports_it_back() {
    let graph = imports();
    assert!(graph.len() > 10, "modules found: {graph:?}");
    for (module, named) in &graph {
        for other in named {
            if let Some(back) = path_between(&graph, other, module) {
                panic!("{module} → {other}, and back: {}", back.join(" → "));
            }
        }
    }
}

#[test]
fn the_leaves_stay_leaves() {
    let graph = imports();
    assert_eq!(
        graph["model"],
        BTreeSet::new(),
        "the result model is a leaf"
    );
    assert_eq!(
        graph["platform"],
        BTreeSet::new(),
        "the platform seam is a leaf: it reads the system and nothing of leakcheck"
    );
    // The engine's phase timer reads its own rss through the seam, which
    // holds every read of /proc.
    let model_and_platform: BTreeSet<String> = ["model".to_string(), "platform".to_string()].into();
    assert_eq!(
        graph["snapshot"], model_and_platform,
        "the snapshot engine needs only the model (and the platform seam)"
    );
    assert!(
        !graph["report"].contains("cli"),
        "the reports read props, not the CLI"
    );
    assert!(!graph["cycle"].contains("cli") && !graph["cycle"].contains("commands"));
}

/// The files of one folder (a subfolder counts as one file, its
/// `mod.rs`) → the siblings each names through `super::` or its full
/// `crate::` path. The folder's own `mod.rs` is the parent (children may
/// use what it declares) and test files are children of the file they
/// test, so neither is a node.
fn sibling_imports(dir: &Path) -> Graph {
    let src = repo_path("src");
    let module_path = dir
        .strip_prefix(&src)
        .unwrap()
        .components()
        .map(|c| c.as_os_str().to_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("::");
    let full_prefix = format!("crate::{module_path}::");
    let mut nodes: BTreeMap<String, std::path::PathBuf> = BTreeMap::new();
    for path in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()) {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        if path.is_dir() && path.join("mod.rs").is_file() {
            nodes.insert(stem, path.join("mod.rs"));
        } else if path.extension().is_some_and(|e| e == "rs")
            && stem != "mod"
            && !stem.ends_with("tests")
        {
            nodes.insert(stem, path);
        }
    }
    let mut graph = Graph::new();
    for (node, file) in &nodes {
        let text = std::fs::read_to_string(file).unwrap();
        // Above a file's own `mod tests`: test code may reach anywhere.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let mut named = BTreeSet::new();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            let found = paths_after(line, "super::").chain(paths_after(line, &full_prefix));
            named.extend(found.filter(|n| nodes.contains_key(n) && n != node));
        }
        graph.insert(node.clone(), named);
    }
    graph
}

fn folders(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for path in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()) {
        if path.is_dir() {
            out.extend(folders(&path));
        }
    }
    out
}

#[test]
fn no_two_files_of_one_folder_import_each_other() {
    let mut checked = 0;
    for dir in folders(&repo_path("src")).into_iter().skip(1) {
        let graph = sibling_imports(&dir);
        checked += graph.len();
        for (file, named) in &graph {
            for other in named {
                if let Some(back) = path_between(&graph, other, file) {
                    panic!(
                        "in {}: {file} → {other}, and back: {}",
                        dir.display(),
                        back.join(" → ")
                    );
                }
            }
        }
    }
    assert!(checked > 100, "files checked: {checked}");
}

#[test]
fn only_the_resolve_step_sees_the_command_line() {
    let commands = repo_path("src/commands");
    for file in rust_files(&commands) {
        if file.starts_with(commands.join("resolve")) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains("crate::cli"),
            "{} reads clap types: settings come from commands/resolve/",
            file.display()
        );
    }
    for module in ["session", "diagnosis", "cycle", "report", "settings"] {
        assert!(!imports()[module].contains("cli"), "{module} names the CLI");
    }
}

#[test]
fn the_file_reader_sees_a_circle_between_siblings() {
    let lines = ["use super::{b::B, c};", "let x = super::a::f();"];
    let found: Vec<String> = lines
        .iter()
        .flat_map(|l| paths_after(l, "super::"))
        .collect();
    assert_eq!(found, ["b", "c", "a"]);
    let mut graph = Graph::new();
    graph.insert("a".into(), ["b".to_string()].into());
    graph.insert("b".into(), ["a".to_string()].into());
    assert_eq!(path_between(&graph, "b", "a").unwrap(), ["b", "a"]);
}

#[test]
fn the_reader_sees_grouped_and_nested_paths() {
    let found: Vec<String> =
        crate_paths("use crate::{model::X, cycle}; let a = crate::report::y();").collect();
    assert_eq!(found, ["model", "cycle", "report"]);
}
