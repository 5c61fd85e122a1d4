//! Framework knowledge, read by the snapshot engine that names holders
//! (it depends on nothing but the model): the objects of Express, Koa, Fastify, Nest,
//! socket.io, RxJS, Next.js and Node's HTTP server as their users name
//! them, read from `frameworks/` (one YAML file per framework, beside the
//! known-leak catalogue and reviewed like it).
//!
//! A retainer path reads as the engine reaches an object
//! (`<symbol owner_symbol>._events.request._router.stack`); a person reads
//! it as the code they wrote (`app._router.stack`, Express's middleware
//! stack). Each file lists:
//!
//! - `objects`: how to recognise an object people name in a heap snapshot
//!   (the name V8 gives the node: a closure's function name or an object's
//!   constructor, and properties it must have), and the name they use;
//! - `holders`: a property path from such an object down to a holder, what
//!   that holder is in the framework's words, its kind (which chooses the
//!   action) and, where the framework has one, the action that applies.
//!
//! `framework_names.rs` applies them to the graph.

use std::sync::LazyLock;

use serde::Deserialize;

use crate::model::HolderKind;

/// `(file, text)` of `frameworks/<file>.yaml`.
macro_rules! framework {
    ($file:literal) => {
        (
            $file,
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/frameworks/",
                $file,
                ".yaml"
            )),
        )
    };
}

/// Every framework, compiled into the binary. Adding one: write
/// `frameworks/<name>.yaml`, list it here, and test it with the real
/// package (tests/it/frameworks.rs).
const FILES: [(&str, &str); 8] = [
    framework!("node"),
    framework!("express"),
    framework!("koa"),
    framework!("fastify"),
    framework!("nest"),
    framework!("socketio"),
    framework!("rxjs"),
    framework!("nextjs"),
];

/// One framework's file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Framework {
    /// As its users write it: `Express`, `socket.io`.
    pub framework: String,
    pub objects: Vec<KnownObject>,
    #[serde(default)]
    pub holders: Vec<KnownHolder>,
}

/// An object people name, and how its heap snapshot node is recognised.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownObject {
    /// What the code calls it: `app`, `fastify`, `io`.
    pub name: String,
    /// A closure whose function has this name (`function app(req, res)`).
    #[serde(default)]
    pub function: Option<String>,
    /// An object made by this constructor (`class Application`).
    #[serde(default)]
    pub class: Option<String>,
    /// Properties (or symbol-keyed slots: `<symbol fastify.hooks>`) it has,
    /// all of them: what tells the framework's object from another of the
    /// same name.
    pub has: Vec<String>,
    /// What its plain properties are to its users (`a Fastify decorator`).
    #[serde(default)]
    pub members: Option<String>,
}

/// A holder inside a framework: what it is, and what to do about it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownHolder {
    /// A known object's name, then the properties from it to the holder:
    /// `[app, _router, stack]`.
    pub path: Vec<String>,
    /// The holder as its users write it: `app._router.stack`.
    pub name: String,
    /// What it is, in the framework's words: `Express's middleware stack`.
    pub what: String,
    pub kind: HolderKind,
    /// The fix that applies, with `{unit}` for the unit of work.
    pub action: String,
}

/// The frameworks, parsed once. The files are checked by this crate's
/// tests, so a malformed one is a build that does not ship.
pub fn frameworks() -> &'static [Framework] {
    static PARSED: LazyLock<Vec<Framework>> = LazyLock::new(|| {
        FILES
            .iter()
            .filter_map(|(_, text)| parse(text).ok())
            .collect()
    });
    &PARSED
}

fn parse(text: &str) -> anyhow::Result<Framework> {
    let framework: Framework = serde_saphyr::from_str(text)?;
    for object in &framework.objects {
        if object.function.is_none() && object.class.is_none() && object.has.is_empty() {
            anyhow::bail!(
                "object `{}` names no function, class or property: it would match any object",
                object.name
            );
        }
    }
    for holder in &framework.holders {
        let Some(first) = holder.path.first() else {
            anyhow::bail!("holder `{}` has an empty path", holder.name);
        };
        if holder.path.len() < 2 || !framework.objects.iter().any(|o| o.name == *first) {
            anyhow::bail!(
                "holder `{}`: its path starts at a known object and names at least one property",
                holder.name
            );
        }
    }
    Ok(framework)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_parses_and_is_listed() {
        for (file, text) in FILES {
            parse(text).unwrap_or_else(|e| panic!("frameworks/{file}.yaml: {e}"));
        }
        assert_eq!(frameworks().len(), FILES.len());
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("frameworks");
        for file in std::fs::read_dir(dir).unwrap() {
            let name = file.unwrap().file_name().to_string_lossy().into_owned();
            let stem = name
                .strip_suffix(".yaml")
                .expect("only .yaml in frameworks/");
            assert!(
                FILES.iter().any(|(listed, _)| *listed == stem),
                "frameworks/{name} is not listed in src/known/frameworks.rs FILES"
            );
        }
    }

    #[test]
    fn a_holder_must_start_at_a_known_object() {
        let text = "framework: X\nobjects:\n  - {name: app, function: app, has: []}\n\
                    holders:\n  - {path: [server, stack], name: s, what: w, kind: middleware stack, action: a}\n";
        let error = parse(text).unwrap_err().to_string();
        assert!(error.contains("starts at a known object"), "{error}");
        let anything = "framework: X\nobjects:\n  - {name: app, has: []}\n";
        assert!(
            parse(anything)
                .unwrap_err()
                .to_string()
                .contains("any object")
        );
    }
}
