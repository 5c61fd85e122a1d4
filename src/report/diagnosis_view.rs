//! The diagnosis as every report shows it, built once: the holders grouped
//! by the object that holds, the allocation sites, and the caveat. Each
//! format (terminal, HTML, Markdown) renders this view in its own markup,
//! so the three never disagree on what is listed.

use crate::model::{AllocationSite, CollectionState, Diagnosis, Holder, Owner};
use crate::units::{MB, kb};

/// Holders shown: one variable often holds several grown classes, and
/// three distinct holders cover every leak seen in the test targets.
pub const HOLDERS_SHOWN: usize = 3;
/// Allocation sites shown: the handler, its helper and one more frame.
pub const SITES_SHOWN: usize = 3;

/// Said beside the allocation sites when the cycle ran with inlining on.
pub const INLINING_CAVEAT: &str =
    "an attached target's JIT is left as it is, so a function V8 inlined is charged to its caller";

/// One holding object and what it keeps.
pub struct HolderLine<'a> {
    /// The variable or property: `keptRequests`, `globalThis.cache`.
    pub name: &'a str,
    /// What it is: `Express's middleware stack`, `Map/Set entries`.
    pub kind: &'a str,
    /// The script that declares a module or closure variable: its
    /// original source first when a source map names it.
    pub script: Option<String>,
    /// "inside tiny-registry@1.4.2, reached from your code at app.mjs:12"
    /// when the holder is a dependency's.
    pub owner: Option<String>,
    /// "30000 new concatenated string, 15000 new string".
    pub new_objects: String,
    pub new_kb: u64,
    pub retained_kb: u64,
    pub holder_class: &'a str,
    pub holder_id: u32,
    /// The retainer path on one line, root first.
    pub path: &'a str,
}

/// One allocation site, worded once for every format.
pub struct SiteLine<'a> {
    pub function: &'a str,
    /// `src/audit.ts:20 (compiled dist/audit.js:14:3)` or `app.mjs:12:3`.
    pub location: String,
    /// `your code`, `express@4.21.2`, `Node`.
    pub owner: String,
    pub kb: u64,
    /// "line 21: `history = …`", in the original source when mapped.
    pub stored: Option<String>,
    /// Why the source map did not give the original place.
    pub note: Option<&'a str>,
    /// Found by the holder's name in the source, not sampled.
    pub by_name: bool,
}

pub struct DiagnosisView<'a> {
    /// The worker thread or child process diagnosed, if not the main one.
    pub isolate: Option<&'a str>,
    pub requests: u64,
    /// Snapshot sizes in MB (2^20 bytes), before and after.
    pub snapshot_mb: [f64; 2],
    pub rss_before_mb: f64,
    pub rss_after_mb: f64,
    pub holders: Vec<HolderLine<'a>>,
    pub sites: Vec<SiteLine<'a>>,
    /// Set when the sites may be charged to an inlining caller.
    pub caveat: Option<&'static str>,
    /// No snapshot was taken: the sites come from sampling profiles alone
    /// (`leakcheck watch`).
    pub from_profiles_only: bool,
    /// What a site's KB are: alive after the cycle, or grown over the watch.
    pub site_bytes: &'static str,
}

impl<'a> DiagnosisView<'a> {
    pub fn new(d: &'a Diagnosis) -> DiagnosisView<'a> {
        let holders = d
            .holders_by_object()
            .into_iter()
            .take(HOLDERS_SHOWN)
            .map(|group| {
                let first = group[0];
                HolderLine {
                    name: &first.name,
                    kind: first.kind_words(),
                    script: script_of(first),
                    owner: owner_phrase(first, &d.allocation_sites),
                    new_objects: new_objects(&group),
                    new_kb: kb(group.iter().map(|h| h.new_bytes).sum()),
                    retained_kb: kb(first.retained_bytes),
                    holder_class: &first.holder_class,
                    holder_id: first.holder_id,
                    path: &first.path_text,
                }
            })
            .collect();
        let sites: Vec<SiteLine> = d
            .allocation_sites
            .iter()
            .take(SITES_SHOWN)
            .map(site_line)
            .collect();
        DiagnosisView {
            from_profiles_only: d.snapshot_bytes == [0, 0] && d.holders.is_empty(),
            site_bytes: match d.snapshot_bytes == [0, 0] && d.holders.is_empty() {
                true => "sampled, grew over the watch",
                false => "sampled, still alive",
            },
            isolate: d.isolate.as_deref(),
            requests: d.requests,
            snapshot_mb: d.snapshot_bytes.map(|b| b as f64 / MB),
            rss_before_mb: d.target_rss_before as f64 / MB,
            rss_after_mb: d.target_rss_after as f64 / MB,
            holders,
            caveat: (sites.iter().any(|s| !s.by_name) && !d.sites_without_inlining)
                .then_some(INLINING_CAVEAT),
            sites,
        }
    }
}

/// V8's node for an ArrayBuffer's backing store: its self size is the
/// memory the buffer owns outside the V8 heap.
const BACKING_STORE_CLASS: &str = "system / JSArrayBufferData";

/// "400 new system / JSArrayBufferData, 400 new Buffer (25.0 MB of it off
/// the V8 heap, in backing stores)": the held objects, and what of their
/// size is off the heap, which is what an off-heap row is about.
fn new_objects(group: &[&Holder]) -> String {
    let mut text = group
        .iter()
        .map(|h| format!("{} new {}", h.objects, h.class))
        .collect::<Vec<_>>()
        .join(", ");
    let off_heap: u64 = group
        .iter()
        .filter(|h| h.class == BACKING_STORE_CLASS)
        .map(|h| h.new_bytes)
        .sum();
    if off_heap > 0 {
        text.push_str(&format!(
            " ({} of it off the V8 heap, in backing stores)",
            crate::units::mb(off_heap as f64)
        ));
    }
    text
}

fn script_of(holder: &Holder) -> Option<String> {
    let script = holder.script.as_deref()?;
    Some(match &holder.original_script {
        Some(original) => format!("{original} (compiled {script})"),
        None => script.to_string(),
    })
}

/// Said when a dependency's code holds the growth: which package, and the
/// app's own frame that feeds it (the team's way in).
fn owner_phrase(holder: &Holder, sites: &[AllocationSite]) -> Option<String> {
    let owner @ Owner::Dependency { .. } = holder.owner.as_ref()? else {
        return None;
    };
    let from = sites
        .iter()
        .find(|s| s.owner == Some(Owner::App))
        .map(|s| match &s.original {
            Some(original) => format!(", reached from your code at {original}"),
            None => format!(", reached from your code at {}:{}", short(&s.url), s.line),
        })
        .unwrap_or_default();
    Some(format!("held inside {}{from}", owner.describe()))
}

/// `file:///srv/app/server.mjs` → `server.mjs`, for a phrase.
fn short(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or(url)
}

fn site_line(site: &AllocationSite) -> SiteLine<'_> {
    let stored =
        site.holder_line.map(
            |line| match (&site.holder_line_original, &site.holder_line_text) {
                (Some(original), _) => format!(
                    "{original}: {}",
                    original
                        .text
                        .as_deref()
                        .or(site.holder_line_text.as_deref())
                        .unwrap_or("")
                ),
                (None, Some(text)) => format!("line {line}: {text}"),
                (None, None) => format!("line {line}"),
            },
        );
    SiteLine {
        function: &site.function,
        location: site.location(),
        owner: site
            .owner
            .as_ref()
            .map_or_else(|| "unknown".to_string(), Owner::describe),
        kb: kb(site.bytes),
        stored,
        note: site.source_map_note.as_deref(),
        by_name: site.by_name,
    }
}

/// One line per worker thread or child process of a route:
/// "worker 1 (worker.mjs): after-GC heapUsed 4.2 → 6.6 → 9.1 MB: retention, 0.52 KB per request".
pub fn isolate_lines(route: &crate::model::RouteResult, unit: &str) -> Vec<String> {
    route
        .isolates
        .iter()
        .map(|i| {
            let series: Vec<String> = i
                .after_gc_heap_used
                .iter()
                .map(|b| format!("{:.1}", *b as f64 / MB))
                .collect();
            format!(
                "{}: after-GC heapUsed {} MB: {}, {} per {unit}",
                i.describe(),
                series.join(" → "),
                i.verdict.kind,
                crate::units::per_request(i.verdict.figure.bytes_per_request)
            )
        })
        .collect()
}

/// What grew by entry or by listener, one line each: the collection
/// check's collections (or, without it, the diagnosis'), then the event
/// listeners that piled up, by type and target.
/// "collection `recentSearches`: Map +1.00 per iteration (150 → 250 entries)",
/// "listeners `resize` on Window: +1.00 per iteration (0 → 75), added at app.js:12".
pub fn growth_lines(route: &crate::model::RouteResult, unit: &str) -> Vec<String> {
    let collections = match (&route.collections, &route.diagnosis) {
        (found, _) if !found.is_empty() => found.as_slice(),
        (_, Some(d)) => d.collections.as_slice(),
        _ => &[],
    };
    let mut lines: Vec<String> = collections
        .iter()
        .map(|c| {
            let place = c
                .script
                .as_deref()
                .map_or(String::new(), |s| format!(", in {s}"));
            match c.state {
                CollectionState::Capped => format!(
                    "collection `{}`: {} stopped at {} entries, a cap ({} at first){place}",
                    c.name, c.kind, c.entries_after, c.entries_before
                ),
                state => format!(
                    "collection `{}`: {} +{:.2} per {unit} ({} → {} entries){}{place}",
                    c.name,
                    c.kind,
                    c.per_unit,
                    c.entries_before,
                    c.entries_after,
                    match state {
                        CollectionState::Undecided => ", still growing below its bound",
                        _ => "",
                    },
                ),
            }
        })
        .collect();
    lines.extend(route.listeners.iter().map(|l| {
        format!(
            "listeners `{}` on {}: +{:.2} per {unit} ({} → {}){}",
            l.event,
            l.target,
            l.per_unit,
            l.before,
            l.after,
            l.added_at
                .as_deref()
                .map_or(String::new(), |at| format!(", added at {at}"))
        )
    }));
    lines
}

/// The native diagnosis, one line for the record and one per site:
/// "native allocations (heaptrack 1.4.0, a fresh process, 2500 requests):
/// 1.96 KB per request left allocated", "2.00 KB per request allocated by
/// `strdup` in koffi.node …".
pub fn native_lines(route: &crate::model::RouteResult, unit: &str) -> Vec<String> {
    let Some(native) = &route.native else {
        return Vec::new();
    };
    let per = crate::units::per_request;
    let mut lines = vec![format!(
        "native allocations ({}, a fresh process, {} {unit}s): {} per {unit} left allocated{}",
        native.recorder,
        native.units,
        per(native.unfreed_bytes_per_unit),
        if native.sites.is_empty() {
            ", no stack in proportion to the work"
        } else {
            ""
        }
    )];
    lines.extend(native.sites.iter().map(|s| s.describe(unit, per)));
    lines
}
