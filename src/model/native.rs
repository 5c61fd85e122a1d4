//! What the native allocation recorder found: the malloc'd memory a cycle
//! left allocated, by the native code that asked for it and the JavaScript
//! that called that code (`crate::diagnosis::native` fills it).

use serde::{Deserialize, Serialize};

use super::Owner;

/// The native diagnosis of one route: a fresh process under the recorder,
/// a warm-up cycle, then the measured one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NativeDiagnosis {
    /// `heaptrack 1.4.0`.
    pub recorder: String,
    /// Units of work of the measured cycle.
    pub units: u64,
    /// Bytes the measured cycle allocated and did not free, over all
    /// stacks, per unit of work.
    pub unfreed_bytes_per_unit: f64,
    /// The stacks that keep memory in proportion to the work, largest first.
    pub sites: Vec<NativeSite>,
    /// Seconds: the recorded process' start, its cycles and the reading
    /// of the record.
    pub seconds: f64,
    /// When the sites do not explain the growth: what the allocator A/B
    /// found (`fragmentation.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocator: Option<AllocatorTrial>,
}

/// A native stack whose allocations stayed, per unit of work.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NativeSite {
    pub bytes_per_unit: f64,
    pub allocations_per_unit: f64,
    /// The allocating function the stack starts in (`malloc`, `strdup`,
    /// `operator new`).
    pub allocator: String,
    /// The first frame outside the C library and the allocator: the native
    /// code that asked for the memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_frame: Option<NativeFrame>,
    /// The JavaScript function that called into it, from V8's perf map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub js_caller: Option<JsFrame>,
    /// The stack, innermost first, one frame a line (at most 16).
    pub stack: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NativeFrame {
    /// The symbol, or the address when the library has none.
    pub function: String,
    /// The library or executable: `…/koffi.node`, `/usr/bin/node`.
    pub library: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JsFrame {
    /// `resizeImage`, or `(anonymous)`.
    pub function: String,
    /// The script's URL as V8 names it.
    pub script: String,
    /// Where the function is defined (1-based).
    pub line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
}

/// The check rerun with the target under other allocator settings, to tell
/// allocator fragmentation from a leak.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AllocatorTrial {
    /// Each setting tried and the rss growth per unit it gave.
    pub trials: Vec<AllocatorSetting>,
    /// The setting under which the growth went away, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_by: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AllocatorSetting {
    /// `MALLOC_ARENA_MAX=2`, `LD_PRELOAD=…/libjemalloc.so.2`.
    pub setting: String,
    /// Fitted after-GC rss growth per unit under it.
    pub rss_bytes_per_unit: f64,
    /// Whether that growth was still retention by the verdict's rule.
    pub still_grows: bool,
}

impl NativeSite {
    /// "2.00 KB per request allocated by `strdup`, in koffi.node
    /// (@koromix/koffi-linux-x64@3.3.4), called from JavaScript
    /// `resizeImage` (native-leak.mjs:9), never freed"
    pub fn describe(&self, unit: &str, per_unit: impl Fn(f64) -> String) -> String {
        let mut text = format!(
            "{} per {unit} allocated by `{}`",
            per_unit(self.bytes_per_unit),
            self.allocator
        );
        if let Some(frame) = &self.native_frame {
            let library = frame.library.rsplit('/').next().unwrap_or(&frame.library);
            text.push_str(&format!(" in {library}"));
            if !frame.function.starts_with("0x") && frame.function != self.allocator {
                text.push_str(&format!(" `{}`", frame.function));
            }
            if let Some(owner) = &frame.owner {
                text.push_str(&format!(" ({})", owner.describe_native()));
            }
        }
        if let Some(js) = &self.js_caller {
            let script = js.script.rsplit('/').next().unwrap_or(&js.script);
            text.push_str(&format!(
                ", called from JavaScript `{}` ({script}:{})",
                js.function, js.line
            ));
        }
        text.push_str(", never freed");
        text
    }
}
