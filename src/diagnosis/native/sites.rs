//! From a record's stacks to what a person acts on: the allocating
//! function, the native code that called it (with the package whose
//! `.node` or `.so` it is), and the JavaScript that called into that code.

use std::collections::HashMap;

use super::perf_map::{PerfMap, js_frame};
use super::trace::{InstructionPointer, Record};
use crate::diagnosis::attribute::Owners;
use crate::model::{JsFrame, NativeFrame, NativeSite, Owner};

/// A stack is listed when it kept at least this much per unit of work: a
/// record of a few bytes per request is a pool or a cache slot, not what
/// moves rss by the kilobytes the off-heap row reports.
pub const MIN_BYTES_PER_UNIT: f64 = 16.0;
/// Sites kept in the report.
const TOP: usize = 5;
/// Frames of a stack kept in the report.
const STACK_FRAMES: usize = 16;

/// The stacks of `record` that kept memory in proportion to `units`, and
/// all that the window left allocated per unit.
pub fn sites(
    record: &Record,
    perf: &PerfMap,
    node_exe: &str,
    units: u64,
) -> (Vec<NativeSite>, f64) {
    let units = units.max(1) as f64;
    let total: i64 = record.growth.iter().map(|g| g.bytes.max(0)).sum();
    let mut owners = Owners::default();
    let mut grouped: HashMap<String, NativeSite> = HashMap::new();
    for growth in record.growth.iter().filter(|g| g.bytes > 0) {
        let stack = record.stack(growth.trace);
        let site = describe(record, perf, node_exe, &stack, &mut owners);
        let key = format!(
            "{}|{:?}|{:?}",
            site.allocator, site.native_frame, site.js_caller
        );
        let entry = grouped.entry(key).or_insert(site);
        entry.bytes_per_unit += growth.bytes as f64 / units;
        entry.allocations_per_unit += growth.allocations as f64 / units;
    }
    let mut sites: Vec<NativeSite> = grouped
        .into_values()
        .filter(|s| s.bytes_per_unit >= MIN_BYTES_PER_UNIT)
        .collect();
    sites.sort_by(|a, b| b.bytes_per_unit.total_cmp(&a.bytes_per_unit));
    sites.truncate(TOP);
    (sites, total as f64 / units)
}

/// One frame as the report needs it.
enum Frame<'a> {
    Native {
        function: &'a str,
        library: &'a str,
        address: u64,
    },
    Js(JsFrame),
    /// V8's own generated code (a builtin, a stub) or an unmapped address.
    Generated(String),
}

fn frames<'a>(
    record: &'a Record,
    perf: &PerfMap,
    stack: &[&'a InstructionPointer],
) -> Vec<Frame<'a>> {
    let mut out = Vec::new();
    for ip in stack {
        let library = record.string(ip.module);
        if library.is_empty() {
            let name = perf.name_at(ip.address);
            out.push(match name.and_then(js_frame) {
                Some(js) => Frame::Js(js),
                None => Frame::Generated(name.map_or(format!("{:#x}", ip.address), String::from)),
            });
            continue;
        }
        if library.contains("libheaptrack") {
            continue;
        }
        match ip.frames.first() {
            Some(frame) => out.push(Frame::Native {
                function: record.string(frame.function),
                library,
                address: ip.address,
            }),
            None => out.push(Frame::Native {
                function: "",
                library,
                address: ip.address,
            }),
        }
    }
    out
}

fn describe(
    record: &Record,
    perf: &PerfMap,
    node_exe: &str,
    stack: &[&InstructionPointer],
    owners: &mut Owners,
) -> NativeSite {
    let frames = frames(record, perf, stack);
    let allocator = match frames.first() {
        Some(Frame::Native { function, .. }) if !function.is_empty() => clean_symbol(function),
        _ => "malloc".to_string(),
    };
    let native_frame = frames.iter().find_map(|frame| match frame {
        Frame::Native {
            function,
            library,
            address,
        } if !is_system(library) => Some(NativeFrame {
            function: if function.is_empty() {
                format!("{address:#x}")
            } else {
                clean_symbol(function)
            },
            library: library.to_string(),
            owner: Some(native_owner(library, node_exe, owners)),
        }),
        _ => None,
    });
    let js_caller = js_caller(&frames, owners);
    let stack = frames
        .iter()
        .take(STACK_FRAMES)
        .map(|frame| match frame {
            Frame::Native {
                function,
                library,
                address,
            } => {
                let name = if function.is_empty() {
                    format!("{address:#x}")
                } else {
                    clean_symbol(function)
                };
                format!("{name} ({})", library.rsplit('/').next().unwrap_or(library))
            }
            Frame::Js(js) => format!("{} {}:{} (JavaScript)", js.function, js.script, js.line),
            Frame::Generated(name) => name.clone(),
        })
        .collect();
    NativeSite {
        bytes_per_unit: 0.0,
        allocations_per_unit: 0.0,
        allocator,
        native_frame,
        js_caller,
        stack,
    }
}

/// The JavaScript that called into the native code: the innermost frame
/// of the app's code, else of a dependency's, else the innermost at all
/// (Node's own JavaScript calls into its bindings too).
fn js_caller(frames: &[Frame], owners: &mut Owners) -> Option<JsFrame> {
    let js: Vec<JsFrame> = frames
        .iter()
        .filter_map(|frame| match frame {
            Frame::Js(js) => Some(JsFrame {
                owner: owners.of(&js.script),
                ..js.clone()
            }),
            _ => None,
        })
        .collect();
    let rank = |frame: &JsFrame| match frame.owner {
        Some(Owner::App) => 0,
        Some(Owner::Dependency { .. }) => 1,
        _ => 2,
    };
    let best = js.iter().map(rank).min()?;
    js.into_iter().find(|frame| rank(frame) == best)
}

/// The C library, the C++ runtime and the loader: where allocation
/// functions live, not who asked for the memory. Node's binary is not
/// one: its frames are Node's own native code (zlib, OpenSSL, Buffers).
fn is_system(library: &str) -> bool {
    let name = library.rsplit('/').next().unwrap_or(library);
    [
        "libc.so",
        "libc-",
        "libstdc++",
        "ld-linux",
        "libgcc_s",
        "libpthread",
        "libm.so",
        "libdl",
    ]
    .iter()
    .any(|system| name.starts_with(system))
}

/// Whose a native library is: a package's (under `node_modules/`), Node's
/// (its executable), the system's (`/lib`, `/usr/lib`), else the app's.
fn native_owner(library: &str, node_exe: &str, owners: &mut Owners) -> Owner {
    if library == node_exe {
        return Owner::Node;
    }
    if library.contains("/node_modules/") {
        return owners.of(library).unwrap_or(Owner::App);
    }
    if ["/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"]
        .iter()
        .any(|dir| library.starts_with(dir))
    {
        return Owner::System;
    }
    Owner::App
}

/// `__GI___strdup` → `strdup`, `__libc_malloc` → `malloc`: glibc's
/// internal aliases of the function a program calls.
fn clean_symbol(symbol: &str) -> String {
    let trimmed = ["__GI___", "__GI_", "__libc_"]
        .iter()
        .find_map(|prefix| symbol.strip_prefix(prefix))
        .unwrap_or(symbol);
    // `operator new(unsigned long)` reads as `operator new`.
    match trimmed.find('(') {
        Some(at) if trimmed.starts_with("operator new") => trimmed[..at].to_string(),
        _ => trimmed.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnosis::native::trace::read;

    /// strdup in libc ← an addon in node_modules ← a JIT frame: the leaf of
    /// the tree (trace 3) is the innermost frame.
    fn record() -> Record {
        let text = "\
s 1f /lib/x86_64-linux-gnu/libc.so.6
s d __GI___strdup
s 2a /srv/node_modules/fast-image/build/addon.node
s d /usr/bin/node
i 7f00 1 2
i 5000 3
i 3e010 0
t 3 0
t 2 1
t 1 2
a 800 3
a 10 1
c 0
+ 0
+ 0
+ 1
";
        read(text.as_bytes(), 0, 1000).unwrap()
    }

    #[test]
    fn a_site_names_the_allocator_the_addon_and_the_javascript_caller() {
        let perf = PerfMap::parse("3e000 100 JS:*resizeImage file:///srv/image.js:9:21\n");
        let (sites, total) = sites(&record(), &perf, "/usr/bin/node", 2);
        assert_eq!(total, (2.0 * 2048.0 + 16.0) / 2.0);
        // The 8-byte site per unit is under the floor.
        assert_eq!(sites.len(), 1, "{sites:#?}");
        let site = &sites[0];
        assert_eq!(site.bytes_per_unit, 2048.0);
        assert_eq!(site.allocations_per_unit, 1.0);
        assert_eq!(site.allocator, "strdup");
        let native = site.native_frame.as_ref().unwrap();
        assert_eq!(native.function, "0x5000");
        assert_eq!(
            native.owner,
            Some(Owner::Dependency {
                name: "fast-image".into(),
                version: None
            })
        );
        let js = site.js_caller.as_ref().unwrap();
        assert_eq!((js.function.as_str(), js.line), ("resizeImage", 9));
        let text = site.describe("request", crate::units::per_request);
        assert_eq!(
            text,
            "2.00 KB per request allocated by `strdup` in addon.node (dependency fast-image), \
             called from JavaScript `resizeImage` (image.js:9), never freed"
        );
    }

    #[test]
    fn glibc_aliases_read_as_the_function_called() {
        assert_eq!(clean_symbol("__GI___strdup"), "strdup");
        assert_eq!(clean_symbol("__libc_malloc"), "malloc");
        assert_eq!(clean_symbol("operator new(unsigned long)"), "operator new");
        assert_eq!(clean_symbol("deflateInit2_"), "deflateInit2_");
    }

    #[test]
    fn node_and_system_libraries_own_their_frames() {
        let mut owners = Owners::default();
        assert_eq!(
            native_owner("/usr/bin/node", "/usr/bin/node", &mut owners),
            Owner::Node
        );
        assert_eq!(
            native_owner(
                "/lib/x86_64-linux-gnu/libz.so.1",
                "/usr/bin/node",
                &mut owners
            ),
            Owner::System
        );
        assert_eq!(
            native_owner("/srv/app/libmine.so", "/usr/bin/node", &mut owners),
            Owner::App
        );
    }
}
