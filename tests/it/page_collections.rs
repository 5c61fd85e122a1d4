//! What a page keeps that its JS heap bytes do not show: entries of a
//! collection too small for the byte series (a search memo), buffers kept
//! off the JS heap (a gallery's pixels), and a heavy page that frees all
//! of it (clean); and on a server, the URL-keyed cache named as a
//! collection that grows per request.

use leakcheck::model::{FindingKind, Series, VerdictKind};

use crate::page_util::*;
use crate::util::*;

const SEARCH: [&str; 2] = ["type input[name=q] shoes", "click #go"];
const OPEN_CLOSE: [&str; 2] = ["click #open", "click #close"];

#[test]
fn a_memo_too_small_for_the_bytes_is_a_growing_collection_and_its_bounded_twin_is_not() {
    if !chromium_installed() {
        return;
    }
    // 3 × 50 searches: about 1 KB each, under what 150 iterations resolve.
    let finished = page_run("search.html", &SEARCH, &["--cycles", "3", "-n", "50"]);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    validate(&finished.stdout);
    let result = finished.result();
    let route = &result.routes[0];
    let verdict = verdict_of(route);
    assert_eq!(verdict.kind, VerdictKind::CollectionGrowth, "{verdict:#?}");
    assert!(
        verdict
            .summary
            .starts_with("recentSearches: Map +1.00 per iteration"),
        "{}",
        verdict.summary
    );
    assert!(verdict.has_finding(FindingKind::BytesBelowResolution));
    let memo = &route.collections[0];
    assert_eq!(
        (memo.name.as_str(), memo.kind.as_str()),
        ("recentSearches", "Map")
    );
    assert!((memo.per_unit - 1.0).abs() < 0.01, "{memo:#?}");
    assert_eq!(
        memo.entries_after - memo.entries_before,
        100,
        "two cycles of 50"
    );

    let bounded = page_run("search-fixed.html", &SEARCH, &[]);
    assert_eq!(bounded.code, 0, "{}", bounded.stderr);
    let result = bounded.result();
    let route = &result.routes[0];
    assert_eq!(verdict_of(route).kind, VerdictKind::NoRetention);
    assert!(route.collections.is_empty(), "{:#?}", route.collections);
}

#[test]
fn a_pixel_buffer_kept_per_photo_is_off_heap_retention_held_by_its_list() {
    if !chromium_installed() {
        return;
    }
    let finished = page_run("gallery.html", &OPEN_CLOSE, &["--cycles", "3", "-n", "20"]);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let result = finished.result();
    let route = &result.routes[0];
    let verdict = verdict_of(route);
    assert_eq!(verdict.kind, VerdictKind::OffHeapRetention, "{verdict:#?}");
    assert_eq!(verdict.figure.metric, Series::ARRAY_BUFFERS);
    let per_photo = verdict.figure.bytes_per_request;
    assert!((per_photo - 262_144.0).abs() < 4096.0, "{per_photo}");
    let diagnosis = route.diagnosis.as_ref().expect("a diagnosis");
    assert_eq!(
        diagnosis.holders[0].name, "recentlyViewed",
        "{:#?}",
        diagnosis.holders
    );
    assert!(
        diagnosis
            .collections
            .iter()
            .any(|c| c.name == "recentlyViewed"),
        "{:#?}",
        diagnosis.collections
    );
}

#[test]
fn a_heavy_page_that_frees_everything_is_clean() {
    if !chromium_installed() {
        return;
    }
    let finished = page_run("heavy-clean.html", &OPEN_CLOSE, &[]);
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let result = finished.result();
    let route = &result.routes[0];
    assert_eq!(verdict_of(route).kind, VerdictKind::NoRetention);
    assert!(route.collections.is_empty() && route.listeners.is_empty());
}

#[test]
fn a_servers_url_keyed_cache_is_named_as_a_collection_growing_per_request() {
    let port = free_port();
    let finished = RunArgs::new(port)
        .routes(&["/item?id={n}"])
        .requests("2000")
        .args(&["--resolution", "128B"])
        .run(&target_command("traffic-server.mjs", port));
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let result = finished.result();
    let diagnosis = result.routes[0].diagnosis.as_ref().expect("a diagnosis");
    let cache = diagnosis
        .collections
        .iter()
        .find(|c| c.name == "cache")
        .unwrap_or_else(|| panic!("{:#?}", diagnosis.collections));
    assert_eq!(cache.kind, "Map");
    assert!((cache.per_unit - 1.0).abs() < 0.01, "{cache:#?}");
}
