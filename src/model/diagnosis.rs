//! What holds a route's retention, as data: the grown classes of two heap
//! snapshots, the holders the snapshot engine named, and the allocation
//! sites the sampling heap profiler saw survive. The snapshot engine fills
//! `ClassDiff` and `Holder` directly (they are also what `leakcheck
//! inspect` and `diff` print), so they live here, at the bottom, and the
//! engine depends on this plain-data module and nothing else of the crate.

use serde::{Deserialize, Serialize};

/// What holds a route's retention, from two heap snapshots around one more
/// cycle and the sampling heap profiler during it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// The worker thread or child process diagnosed (`worker 1`, `pid
    /// 4242`); absent for the main isolate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolate: Option<String>,
    /// Requests of the extra cycle.
    pub requests: u64,
    /// Grown classes (Comparison view), largest size delta first.
    pub classes: Vec<ClassDiff>,
    /// What holds the new objects of the top grown classes.
    pub holders: Vec<Holder>,
    /// Frames whose allocations during the cycle survived collection.
    pub allocation_sites: Vec<AllocationSite>,
    /// Arrays, Maps, Sets and plain Objects whose entry count grew by at
    /// least one per unit of the cycle, named as holders are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub collections: Vec<Collection>,
    /// The cycle ran with inlining off, so a handler's allocations are
    /// charged to it, not to the caller V8 inlined it into (only on a
    /// target leakcheck launched).
    #[serde(default)]
    pub sites_without_inlining: bool,
    /// Snapshot sizes, bytes: before and after the cycle.
    pub snapshot_bytes: [u64; 2],
    /// Where the snapshots were written (`--snapshots DIR`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub snapshot_files: Vec<String>,
    /// Seconds: snapshots (transfer, target paused, parse overlapped), analysis.
    pub snapshot_seconds: f64,
    pub analysis_seconds: f64,
    /// The target's rss before the first snapshot and after the second:
    /// what writing snapshots cost it.
    pub target_rss_before: u64,
    pub target_rss_after: u64,
    /// Seconds reading the sampling heap profile.
    #[serde(default)]
    pub profile_seconds: f64,
    /// What the diagnosis could not add (the allocation sites when the
    /// profile failed), each with why; the rest stands without it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// DOM elements still in the document, net new between the snapshots,
    /// over every tag (a page adding an element with a new name each time
    /// grows no single class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elements: Option<ElementGrowth>,
    /// The catalogue's entry this diagnosis matches (`known-leaks/`), at a
    /// version it affects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_leak: Option<super::KnownLeak>,
}

/// Elements (`<div class="x">`, not `Detached …`) net new between two
/// snapshots, summed over their classes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ElementGrowth {
    /// New minus deleted, over every element class that grew.
    pub added: u64,
    /// How many element classes grew.
    pub classes: u64,
    /// The class that grew most.
    pub example: String,
}

impl ElementGrowth {
    /// From every class of a comparison (not only the top rows).
    pub fn of(classes: &[ClassDiff]) -> Option<ElementGrowth> {
        let grown: Vec<&ClassDiff> = classes
            .iter()
            .filter(|c| c.class.starts_with('<') && c.delta_count > 0)
            .collect();
        let example = grown.iter().max_by_key(|c| c.delta_count)?;
        Some(ElementGrowth {
            added: grown.iter().map(|c| c.delta_count as u64).sum(),
            classes: grown.len() as u64,
            example: example.class.clone(),
        })
    }
}

/// Whether what a class names is the engine's, not the app's: compiled
/// code and feedback (a router's `matchRoute` re-optimised under load was
/// named as the holder of a page's leak), object shapes, and Blink's and
/// V8's C++ structures (`blink::HeapHashTableBacking<…>`).
pub fn is_engine_class(class: &str) -> bool {
    matches!(
        class,
        "(compiled code)" | "(object shape)" | "(system)" | "system / WeakArrayList"
    ) || class.contains("::")
}

impl Diagnosis {
    /// The allocation site whose storing line the diagnosis named (where
    /// what grows is kept, not only allocated).
    pub fn storing_site(&self) -> Option<&AllocationSite> {
        self.allocation_sites
            .iter()
            .find(|s| s.holder_line.is_some())
    }

    /// Holders grouped by the object that holds (one holder is listed per
    /// grown class, and one variable often holds several classes), in the
    /// order of their largest class.
    pub fn holders_by_object(&self) -> Vec<Vec<&Holder>> {
        let mut groups: Vec<Vec<&Holder>> = Vec::new();
        for holder in &self.holders {
            match groups
                .iter_mut()
                .find(|g| g[0].holder_id == holder.holder_id)
            {
                Some(group) => group.push(holder),
                None => groups.push(vec![holder]),
            }
        }
        groups
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AllocationSite {
    pub function: String,
    pub url: String,
    /// 1-based, as editors count.
    pub line: u32,
    pub column: u32,
    /// Sampled bytes still alive after the cycle's collection.
    pub bytes: u64,
    /// The line of this function that names the holder (its text beside
    /// it), found in the script's source: the line a user goes to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_line_text: Option<String>,
    /// Found by the holder's name in the app's source, not sampled (Bun,
    /// whose engine samples no allocations): `line` is the storing line
    /// and there is no allocating function or byte count.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_name: bool,
    /// The inspector's id of the script, to read its source; not reported.
    #[serde(skip)]
    pub script_id: String,
    /// Where the text of `holder_line` starts (1-based), to map it through
    /// a source map; not reported.
    #[serde(skip)]
    pub holder_column: u32,
    /// Whose code this is: the app's, a dependency's, or Node's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// The function's place in the original source, through the script's
    /// source map (`src/audit.ts:20`); `line` and `column` stay compiled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<SourceLocation>,
    /// `holder_line` in the original source, with its text when the
    /// original file can be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_line_original: Option<SourceLocation>,
    /// Why the original location is missing although the script names a
    /// source map (unreadable, malformed, no mapping for the line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_map_note: Option<String>,
}

impl AllocationSite {
    /// `server.mjs:12`, or `src/audit.ts:20 (dist/audit.js:14)` when mapped.
    pub fn location(&self) -> String {
        let compiled = format!("{}:{}:{}", self.url, self.line, self.column);
        match &self.original {
            Some(original) => format!("{original} (compiled {compiled})"),
            None => compiled,
        }
    }
}

/// A place in a source file, 1-based as editors count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceLocation {
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// The line's text, when the file could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The original name of the identifier there, when the map gives one
    /// (a minifier renamed `propsCache` to `m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl std::fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Whose code a frame or a holder's script is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Owner {
    /// The application's own code: what the team changes.
    App,
    /// A package under `node_modules/`, with the version its
    /// `package.json` gives.
    Dependency {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        version: Option<String>,
    },
    /// Node's own JavaScript (`node:` URLs), or its binary for a native frame.
    Node,
    /// Another runtime's own JavaScript: Deno's `ext:` modules.
    Runtime { name: String },
    /// A shared library of the system (`/lib/…/libz.so.1`): a native frame only.
    System,
}

impl Owner {
    /// `express@4.21.2`, `your code`, `Node`.
    pub fn describe(&self) -> String {
        match self {
            Owner::App => "your code".to_string(),
            Owner::Dependency { name, version } => match version {
                Some(version) => format!("{name}@{version}"),
                None => name.clone(),
            },
            Owner::Node => "Node".to_string(),
            Owner::Runtime { name } => name.clone(),
            Owner::System => "a system library".to_string(),
        }
    }

    /// For a native frame: "dependency koffi@2.9.0", "Node", "a system library".
    pub fn describe_native(&self) -> String {
        match self {
            Owner::Dependency { .. } => format!("dependency {}", self.describe()),
            _ => self.describe(),
        }
    }
}

/// One class in DevTools' Comparison view: objects new in the later
/// snapshot, objects gone from the earlier one, and the sizes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassDiff {
    pub class: String,
    pub new_count: u64,
    pub deleted_count: u64,
    pub delta_count: i64,
    pub alloc_size: u64,
    pub freed_size: u64,
    pub size_delta: i64,
}

/// What kind of slot keeps a holder: where in the code to look.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum HolderKind {
    #[serde(rename = "closure or module variable")]
    ClosureVariable,
    #[serde(rename = "global property")]
    GlobalProperty,
    #[serde(rename = "object property")]
    ObjectProperty,
    #[serde(rename = "Map/Set entries")]
    MapSetEntries,
    #[serde(rename = "event listener list")]
    EventListenerList,
    #[serde(rename = "timer list")]
    TimerList,
    /// A framework's list of middleware that every request walks
    /// (Express's `app._router.stack`, Koa's `app.middleware`).
    #[serde(rename = "middleware stack")]
    MiddlewareStack,
    /// A framework's table of routes, namespaces or modules.
    #[serde(rename = "route table")]
    RouteTable,
    /// A framework's list of hooks, interceptors, pipes or guards.
    #[serde(rename = "hook list")]
    HookList,
    /// The subscribers of an observable (an RxJS Subject's `observers`).
    #[serde(rename = "subscription list")]
    SubscriptionList,
    #[serde(rename = "internal")]
    #[default]
    Internal,
}

impl HolderKind {
    pub fn name(self) -> &'static str {
        match self {
            HolderKind::ClosureVariable => "closure or module variable",
            HolderKind::GlobalProperty => "global property",
            HolderKind::ObjectProperty => "object property",
            HolderKind::MapSetEntries => "Map/Set entries",
            HolderKind::EventListenerList => "event listener list",
            HolderKind::TimerList => "timer list",
            HolderKind::MiddlewareStack => "middleware stack",
            HolderKind::RouteTable => "route table",
            HolderKind::HookList => "hook list",
            HolderKind::SubscriptionList => "subscription list",
            HolderKind::Internal => "internal",
        }
    }
}

impl std::fmt::Display for HolderKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One step of a retainer path, root first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathStep {
    pub edge_type: String,
    pub edge_name: String,
    pub node_type: String,
    pub node_name: String,
    pub node_id: u32,
}

/// The object that keeps a grown class's new objects, and the variable
/// that keeps that object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Holder {
    /// The grown class whose new objects it holds.
    pub class: String,
    /// The variable or property that keeps it: `kept`, `globalThis.cache`, `bus._events.data`.
    pub name: String,
    pub kind: HolderKind,
    /// The holder object: `Array`, `Map`, ….
    pub holder_class: String,
    pub holder_id: u32,
    /// When the variable's value is replaced each request (`log += …`,
    /// `list = { prev: list }`): the variable or property, a slot of the
    /// holder object, that leads to what is new. `name` ends with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<String>,
    /// New objects of the class under this holder, and their self sizes.
    pub objects: u64,
    pub new_bytes: u64,
    /// Everything the holder keeps alive.
    pub retained_bytes: u64,
    /// For a module or closure variable: the script that declares it.
    pub script: Option<String>,
    /// That script's original source, through its source map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_script: Option<String>,
    /// The holder's name in the compiled bundle, when its source map gave
    /// the original one (`name` is then the original: `propsCache`, not `m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundled_name: Option<String>,
    /// Whose code declares the holder (from its script).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// Where the holder is a framework's object, what it is to that
    /// framework's users; `name` is then written as they write it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework: Option<FrameworkHolder>,
    /// Root first.
    pub path: Vec<PathStep>,
    /// The path on one line, DevTools style.
    pub path_text: String,
    /// What the holder points at, when another class holds the grown
    /// one: a list of dialogs keeps `Detached <div class="dialog">`
    /// nodes, whose `<p>`s are `class`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_class: Option<String>,
    /// The new subtrees it holds (one per dialog kept).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub roots: u64,
}

impl Holder {
    /// What the holder is, in the words its users know: the framework's
    /// (`Express's middleware stack`) where one recognised it, else its
    /// kind (`Map/Set entries`).
    pub fn kind_words(&self) -> &str {
        self.framework
            .as_ref()
            .map_or(self.kind.name(), |f| f.what.as_str())
    }
}

/// A holder recognised inside a framework (`frameworks/*.yaml`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameworkHolder {
    /// `Express`, `Koa`, `socket.io`.
    pub framework: String,
    /// In the framework's words: `Express's middleware stack`.
    pub what: String,
    /// The engine's name of the path the framework name replaced:
    /// `<symbol owner_symbol>._events.request._router.stack`.
    pub path_name: String,
    /// The fix that applies to this holder, with `{unit}` for the unit of
    /// work; none when the holder's kind says it (a decorator's Map).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
}

/// A collection whose entry count grew with the work
/// (`snapshot/collections.rs`): `recentSearches: Map +1.00 per iteration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Collection {
    /// The variable or property that holds it, as a holder is named.
    pub name: String,
    /// `Array`, `Map`, `Set` or `Object`.
    pub kind: String,
    pub entries_before: u64,
    pub entries_after: u64,
    /// Entries gained per unit of work (request or iteration).
    pub per_unit: f64,
    /// The script whose closure holds it, when a closure does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// Its heap snapshot node id.
    pub node_id: u32,
    /// The retainer path it was named by.
    pub path: String,
    /// What following it decided: still growing past any reasonable cap
    /// (a leak), stopped at a cap, or neither when the check ran out.
    #[serde(default)]
    pub state: CollectionState,
}

/// Where a collection that grew ended up when the check followed it
/// (`diagnosis/snapshots/collections.rs` states the rule).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollectionState {
    /// Kept growing past the bound no reasonable cap explains: a leak.
    #[default]
    Growing,
    /// Stopped growing (or slowed to under half its rate): a bounded
    /// history or LRU, its cap at `entries_after`.
    Capped,
    /// Still growing at its rate, below the bound, when the check's work
    /// ran out: more iterations would decide it.
    Undecided,
}

impl CollectionState {
    pub fn name(self) -> &'static str {
        match self {
            CollectionState::Growing => "growing",
            CollectionState::Capped => "capped",
            CollectionState::Undecided => "undecided",
        }
    }
}

/// Event listeners of one type on one target that grew with the work
/// (`page/listeners.rs`): `resize on Window +1.00 per iteration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListenerGrowth {
    /// The event type: `resize`, `click`.
    pub event: String,
    /// What it is on, as DevTools describes it: `Window`, `#document`,
    /// `div#persistent`.
    pub target: String,
    pub before: u64,
    pub after: u64,
    pub per_unit: f64,
    /// Where the last of them was added: `URL:LINE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_at: Option<String>,
}
