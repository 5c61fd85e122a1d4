//! Attribution a team can act on, after the snapshot engine has named the
//! holder: each allocation site and holder script is mapped through its
//! source map to the original file (`source_map.rs`) and classified as the
//! app's code, a dependency with its version, or Node's (`owner.rs`); the
//! app's frames are listed first.

mod owner;
mod source_map;

use std::collections::HashMap;

pub use owner::{Owners, package_of, read_version};
pub use source_map::SourceMaps;

use crate::inspector::{Inspector, InspectorError};
use crate::model::{AllocationSite, Diagnosis, Owner};

/// Maps, classifies and orders the diagnosis's frames and holders.
pub async fn attribute(inspector: &Inspector, diagnosis: &mut Diagnosis) {
    let mut maps = SourceMaps::default();
    // Without the Debugger domain there are no map URLs: the compiled
    // locations stay, classified all the same.
    if let Ok(urls) = source_map_urls(inspector).await {
        let wanted = diagnosis
            .allocation_sites
            .iter()
            .map(|s| s.url.as_str())
            .chain(diagnosis.holders.iter().filter_map(|h| h.script.as_deref()));
        for url in wanted {
            if let Some(map_url) = urls.get(same_script(url)) {
                maps.load(url, map_url);
            }
        }
    }
    attribute_with(&maps, &mut Owners::default(), diagnosis);
}

/// The pure part of `attribute`, given the loaded maps.
pub fn attribute_with(maps: &SourceMaps, owners: &mut Owners, diagnosis: &mut Diagnosis) {
    for site in &mut diagnosis.allocation_sites {
        // A line found by name was read from the original file already.
        if !site.by_name {
            map_site(maps, site);
        }
        // A bundle's frames belong to the file they were written in.
        let file = site.original.as_ref().map(|o| o.file.clone());
        site.owner = owners
            .of(file.as_deref().unwrap_or(&site.url))
            .or(Some(Owner::App));
    }
    // The app's frames first: what the team can change. Within an owner,
    // the order stays by surviving bytes.
    diagnosis
        .allocation_sites
        .sort_by_key(|s| owner_rank(s.owner.as_ref()));
    for holder in &mut diagnosis.holders {
        let Some(script) = holder.script.clone() else {
            continue;
        };
        holder.original_script = maps.only_source(&script).or_else(|| {
            diagnosis
                .allocation_sites
                .iter()
                .filter(|s| s.url == script)
                .find_map(|s| s.holder_line_original.as_ref().map(|o| o.file.clone()))
        });
        holder.owner = owners.of(holder.original_script.as_deref().unwrap_or(&script));
        rename_minified(holder, &diagnosis.allocation_sites);
    }
}

/// A minifier renames module variables (`propsCache` → `m`): when the
/// storing line of a site in the holder's script maps to an original name
/// at the holder's identifier, the holder takes that name, and keeps the
/// bundle's in `bundled_name`.
fn rename_minified(holder: &mut crate::model::Holder, sites: &[AllocationSite]) {
    let Some(script) = holder.script.as_deref() else {
        return;
    };
    let original = sites
        .iter()
        .filter(|s| same_script(&s.url) == same_script(script))
        .filter_map(|s| s.holder_line_original.as_ref()?.name.as_deref())
        .find(|name| *name != holder.name);
    if let Some(original) = original
        && holder.name.split('.').count() == 1
    {
        holder.bundled_name = Some(std::mem::replace(&mut holder.name, original.to_string()));
    }
}

fn map_site(maps: &SourceMaps, site: &mut AllocationSite) {
    match maps.original(&site.url, site.line, site.column) {
        Ok(found) => site.original = found,
        Err(note) => site.source_map_note = Some(note),
    }
    if let Some(line) = site.holder_line
        && let Ok(found) = maps.original(&site.url, line, site.holder_column.max(1))
    {
        site.holder_line_original = found;
    }
}

/// One key for a script however it is named: `Debugger.scriptParsed`
/// gives a CommonJS module as `file:///srv/a.js`, the sampling profiler
/// and the snapshot as `/srv/a.js`.
fn same_script(url: &str) -> &str {
    url.strip_prefix("file://").unwrap_or(url)
}

fn owner_rank(owner: Option<&Owner>) -> u8 {
    match owner {
        Some(Owner::App) => 0,
        Some(Owner::Dependency { .. }) => 1,
        Some(Owner::Node | Owner::Runtime { .. } | Owner::System) | None => 2,
    }
}

/// The `sourceMapURL` of every loaded script that has one, by script URL,
/// from the `Debugger.scriptParsed` events that enabling the domain sends.
async fn source_map_urls(inspector: &Inspector) -> Result<HashMap<String, String>, InspectorError> {
    Ok(crate::inspector::parsed_scripts(inspector)
        .await?
        .into_iter()
        .filter(|s| !s.source_map_url.is_empty() && !s.url.is_empty())
        .map(|s| (same_script(&s.url).to_string(), s.source_map_url))
        .collect())
}
