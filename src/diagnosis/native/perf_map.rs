//! V8's perf map (`/tmp/perf-PID.map`, written with `--perf-basic-prof`):
//! `START SIZE NAME` a line, hex, for each piece of code V8 generates. A
//! native stack through JavaScript has anonymous addresses there; the map
//! turns them into `JS:*resizeImage file:///srv/image.js:9:21`.
//! `--interpreted-frames-native-stack` gives interpreted functions code of
//! their own, so they are found too, not only the optimised ones.

use crate::model::JsFrame;

/// The code ranges of one process, sorted by start, each with its line
/// number: V8 reuses the memory of code it frees, and the later line is
/// the code that is there now.
#[derive(Debug, Default)]
pub struct PerfMap {
    ranges: Vec<CodeRange>,
}

#[derive(Debug)]
struct CodeRange {
    start: u64,
    end: u64,
    line: usize,
    name: String,
}

/// Ranges looked at below an address: code objects are small, so the one
/// covering an address starts among the nearest starts below it.
const NEAREST: usize = 256;

impl PerfMap {
    pub fn parse(text: &str) -> PerfMap {
        let mut ranges: Vec<CodeRange> = text
            .lines()
            .enumerate()
            .filter_map(|(line, text)| {
                let mut fields = text.splitn(3, ' ');
                let start = u64::from_str_radix(fields.next()?, 16).ok()?;
                let size = u64::from_str_radix(fields.next()?, 16).ok()?;
                let name = fields.next()?.trim().to_string();
                Some(CodeRange {
                    start,
                    end: start.checked_add(size)?,
                    line,
                    name,
                })
            })
            .collect();
        ranges.sort_by_key(|r| r.start);
        PerfMap { ranges }
    }

    /// The name of the code at `address`: of the ranges that cover it, the
    /// one written last.
    pub fn name_at(&self, address: u64) -> Option<&str> {
        let after = self.ranges.partition_point(|r| r.start <= address);
        self.ranges[..after]
            .iter()
            .rev()
            .take(NEAREST)
            .filter(|r| address < r.end)
            .max_by_key(|r| r.line)
            .map(|r| r.name.as_str())
    }
}

/// The JavaScript function of a perf map name: `JS:*resizeImage
/// file:///srv/image.js:9:21` (Node 20+), `LazyCompile:~f /srv/a.js:3:10`
/// (older V8). Builtins, stubs and handlers are not JavaScript.
pub fn js_frame(name: &str) -> Option<JsFrame> {
    let rest = ["JS:", "LazyCompile:", "Function:"]
        .iter()
        .find_map(|prefix| name.strip_prefix(prefix))?;
    // The tier mark: `*` optimised, `^` baseline, `~` interpreted, `+` Maglev;
    // V8 14 (Node 26) follows Maglev's and TurboFan's with `'`
    // (`JS:*'resizeImage …`).
    let rest = rest.trim_start_matches(['*', '^', '~', '+', '\'']);
    let (function, location) = match rest.rsplit_once(' ') {
        Some((function, location)) => (function, location),
        None => ("", rest),
    };
    let mut parts = location.rsplitn(3, ':');
    let _column = parts.next()?;
    let line: u32 = parts.next()?.parse().ok()?;
    let script = parts.next()?.to_string();
    Some(JsFrame {
        function: if function.is_empty() {
            "(anonymous)".to_string()
        } else {
            function.to_string()
        },
        script,
        line,
        owner: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_resolve_to_the_code_that_covers_them() {
        let map = PerfMap::parse(
            "7f0574020800 7c JS:^resizeImage file:///srv/image.js:9:21\n\
             7f0574020000 400 Builtin:InterpreterEntryTrampoline\n\
             garbage line\n",
        );
        assert_eq!(
            map.name_at(0x7f0574020810),
            Some("JS:^resizeImage file:///srv/image.js:9:21")
        );
        assert_eq!(
            map.name_at(0x7f0574020010),
            Some("Builtin:InterpreterEntryTrampoline")
        );
        assert_eq!(map.name_at(0x7f0574030000), None);
        assert_eq!(map.name_at(1), None);
        // Code freed and its memory reused: the later line is what runs.
        let reused = PerfMap::parse(
            "1000 100 JS:~ node:internal/modules/esm/resolve:1:1\n\
             1040 20 JS:*handle file:///srv/a.mjs:13:34\n",
        );
        assert_eq!(
            reused.name_at(0x1050),
            Some("JS:*handle file:///srv/a.mjs:13:34")
        );
        assert_eq!(
            reused.name_at(0x1010),
            Some("JS:~ node:internal/modules/esm/resolve:1:1")
        );
    }

    #[test]
    fn js_names_give_function_script_and_line() {
        let frame = js_frame("JS:*resizeImage file:///srv/image.js:9:21").unwrap();
        assert_eq!(
            (frame.function.as_str(), frame.script.as_str(), frame.line),
            ("resizeImage", "file:///srv/image.js", 9)
        );
        let anonymous = js_frame("JS:~ file:///srv/a.mjs:13:34").unwrap();
        assert_eq!(anonymous.function, "(anonymous)");
        assert_eq!(anonymous.line, 13);
        assert!(js_frame("Builtin:JSEntry").is_none());
        assert!(js_frame("JS:~").is_none());
        // Node 26's marks of Maglev and TurboFan code.
        for name in [
            "JS:+'resizeImage file:///a.mjs:1:21",
            "JS:*'resizeImage file:///a.mjs:1:21",
        ] {
            assert_eq!(js_frame(name).unwrap().function, "resizeImage", "{name}");
        }
    }
}
