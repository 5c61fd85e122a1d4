//! The action language of `leakcheck page` beyond single clicks: where an
//! iteration ends, setup and teardown, visible matches, idle waits, and
//! every link of a page as its own route.

use leakcheck::model::FindingKind;

use crate::page_util::*;
use crate::util::*;

#[test]
fn iterations_that_end_on_another_url_are_named_and_failed_ones_go_back() {
    if !chromium_installed() {
        return;
    }
    // Each pass clicks a link away and stays there; the next pass finds no
    // link on that page, fails, and is taken back to the start URL.
    let finished = page_run(
        "away.html",
        &["click #away", "wait 300"],
        &["--cycles", "2", "-n", "4", "--no-diagnose"],
    );
    let result = finished.result();
    let route = &result.routes[0];
    let ended: u64 = route.cycles.iter().map(|c| c.load.ended_away).sum();
    let returned: u64 = route.cycles.iter().map(|c| c.load.returned_to_start).sum();
    assert!(ended >= 4, "{:#?}", route.cycles);
    assert!(returned >= 2, "{:#?}", route.cycles);
    assert!(
        route.cycles[0]
            .load
            .ended_away_at
            .as_deref()
            .is_some_and(|url| url.ends_with("/fixed.html")),
        "{:#?}",
        route.cycles[0].load
    );
    let verdict = verdict_of(route);
    let finding = verdict
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::LeftStartUrl)
        .unwrap_or_else(|| panic!("{:#?}", verdict.findings));
    assert!(
        finding.message.contains("not at the start URL"),
        "{finding:?}"
    );
    validate(&finished.stdout);
}

#[test]
fn back_from_the_start_url_fails_the_iteration_instead_of_leaving_the_page() {
    if !chromium_installed() {
        return;
    }
    let finished = page_run(
        "stuck-link.html",
        &["click #stuck", "back"],
        &[
            "--cycles",
            "3",
            "-n",
            "5",
            "--no-diagnose",
            "--timeout",
            "3s",
        ],
    );
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let result = finished.result();
    let cycle = &result.routes[0].cycles[0];
    assert_eq!(cycle.load.iterations, Some(0), "{:#?}", cycle.load);
    assert!(
        cycle.load.failure_reasons[0].contains("still at the start URL"),
        "{:#?}",
        cycle.load.failure_reasons
    );
    // The page was never left: no iteration ended elsewhere.
    assert_eq!(cycle.load.ended_away, 0);
}
