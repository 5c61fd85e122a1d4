//! The diagnosis as every report shows it, built once: the holders grouped
//! by the object that holds, the allocation sites, and the caveat. Each
//! format (terminal, HTML, Markdown) renders this view in its own markup,
//! so the three never disagree on what is listed.

use crate::model::{AllocationSite, Diagnosis, HolderKind};
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
    pub kind: HolderKind,
    /// The script that declares a module or closure variable.
    pub script: Option<&'a str>,
    /// "30000 new concatenated string, 15000 new string".
    pub new_objects: String,
    pub new_kb: u64,
    pub retained_kb: u64,
    pub holder_class: &'a str,
    pub holder_id: u32,
    /// The retainer path on one line, root first.
    pub path: &'a str,
}

pub struct DiagnosisView<'a> {
    pub requests: u64,
    /// Snapshot sizes in MB (2^20 bytes), before and after.
    pub snapshot_mb: [f64; 2],
    pub rss_before_mb: f64,
    pub rss_after_mb: f64,
    pub holders: Vec<HolderLine<'a>>,
    pub sites: &'a [AllocationSite],
    /// Set when the sites may be charged to an inlining caller.
    pub caveat: Option<&'static str>,
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
                    kind: first.kind,
                    script: first.script.as_deref(),
                    new_objects: group
                        .iter()
                        .map(|h| format!("{} new {}", h.objects, h.class))
                        .collect::<Vec<_>>()
                        .join(", "),
                    new_kb: kb(group.iter().map(|h| h.new_bytes).sum()),
                    retained_kb: kb(first.retained_bytes),
                    holder_class: &first.holder_class,
                    holder_id: first.holder_id,
                    path: &first.path_text,
                }
            })
            .collect();
        let sites = &d.allocation_sites[..d.allocation_sites.len().min(SITES_SHOWN)];
        DiagnosisView {
            requests: d.requests,
            snapshot_mb: d.snapshot_bytes.map(|b| b as f64 / MB),
            rss_before_mb: d.target_rss_before as f64 / MB,
            rss_after_mb: d.target_rss_after as f64 / MB,
            holders,
            sites,
            caveat: (!sites.is_empty() && !d.sites_without_inlining).then_some(INLINING_CAVEAT),
        }
    }
}
