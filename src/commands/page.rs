//! `leakcheck page`: Chromium started (or connected to), the page opened,
//! the method's loop over the user's actions (`cycle::run_route`, as for a
//! server), the diagnosis on retention, and the same result, reports and
//! exit codes as `run` (`frame.rs`). The browser is stopped by PID and its
//! profile removed on every path, Ctrl-C included.

use anyhow::Context;

use super::frame::{Frame, RunEnd};
use crate::cycle::{LoopPlan, run_route};
use crate::diagnosis::{DiagnosisProps, diagnose_route, wants_diagnosis};
use crate::inspector::Inspector;
use crate::model::{
    Finding, FindingKind, RouteResult, RunResult, SequentialSettings, Settings, TargetInfo, Unit,
};
use crate::page::browser::{self, Browser};
use crate::page::listeners::{self, Census};
use crate::page::{Action, Dialogs, Network, PageActions, PageProbe, links};
use crate::report::progress::Progress;
use crate::settings::{PageProps, PageScenario};
use crate::verdict::{Noise, Options};

pub async fn run(props: PageProps) -> anyhow::Result<RunEnd> {
    let frame = Frame::open(&props.output, props.snapshots.as_deref(), props.quiet, true)?;
    let mut result = new_result(&props);
    let mut slot: Option<Browser> = None;
    let work = measure(&mut slot, &props, &mut result, &frame.progress);
    let measured = frame.guard(work, None).await;
    // The page's session is gone with the measuring future: stop the
    // browser by PID, then drop it, which removes its profile.
    let stopped = frame
        .stop(slot.as_mut().map(|b| &mut b.target), "Chromium")
        .await;
    frame.record(
        &mut result,
        measured,
        slot.as_ref().map(|b| &b.target),
        stopped,
    );
    result
        .outcome
        .target_output
        .retain(|line| !crate::page::browser::is_noise(line));
    drop(slot);
    frame.close(result)
}

/// The loop's plan for a page: iterations are the unit of work.
fn loop_plan(props: &PageProps) -> LoopPlan {
    LoopPlan {
        cycles: props.cycles,
        verdict: Options {
            max_retained: props.max_retained,
            unit: Unit::Iteration,
            resolution: Some(props.resolution),
            noise: Noise::Page,
            ..Options::default()
        },
        loop_stats: props.loop_stats,
        sequential: props.sequential,
        stall_timeout: props.timeout,
        reading_timeout: props.inspector_timeout,
        counters: false,
        peak: props.loop_stats,
        memory_limit: None,
        cycle_time: props.cycle_time,
        deadline: None,
    }
}

/// Starts or reaches the browser, opens the page, and measures each of
/// its routes: the action list, or every link (`--links`).
async fn measure(
    slot: &mut Option<Browser>,
    props: &PageProps,
    result: &mut RunResult,
    progress: &Progress,
) -> anyhow::Result<()> {
    let endpoint = match &props.connect {
        Some(url) => url.clone(),
        None => {
            let executable = browser::find(props.chrome.as_deref())?;
            progress.say(&format!("starting {} (headless)", executable.display()));
            let started = slot.insert(browser::launch(&executable, props.grace).await?);
            result.target.command = started.target.command.clone();
            result.target.pid = Some(started.target.pid);
            started.endpoint.clone()
        }
    };
    let page = Inspector::connect(&browser::first_page(&endpoint).await?).await?;
    let mut probe = PageProbe::new(page.clone(), slot.as_ref().map(|b| b.target.pid)).await?;
    // Before the page opens: one that alerts on load would block it.
    let dialogs = Dialogs::dismiss(&page);
    let network = Network::watch(&page).await?;
    result.target.probe = Some(crate::model::ProbeKind::Inspector);
    result.target.node_version = browser_version(&page).await;
    let tab = Tab {
        page,
        network,
        dialogs,
    };
    let routes = page_routes(&tab, props, progress).await?;
    let routes = this_shard(props.shard, routes, result, progress);
    result.settings.routes = routes.iter().map(|r| r.name.clone()).collect();
    for route in routes {
        measure_route(&tab, &mut probe, props, route, result, progress).await?;
    }
    Ok(())
}

/// `--shard I/N` of the links (`routes::shard`'s rule, every link of a
/// weight: links are not timed), recorded for `report --merge`.
fn this_shard(
    shard: Option<crate::routes::shard::Shard>,
    routes: Vec<PageRoute>,
    result: &mut RunResult,
    progress: &Progress,
) -> Vec<PageRoute> {
    let Some(shard) = shard else {
        return routes;
    };
    let weighed: Vec<(String, Option<f64>)> =
        routes.iter().map(|r| (r.name.clone(), None)).collect();
    let mine =
        crate::routes::shard::split(&weighed, shard.count).swap_remove(shard.index as usize - 1);
    result.settings.shard = Some(crate::model::ShardInfo {
        index: shard.index,
        count: shard.count,
        all_routes: weighed.into_iter().map(|(name, _)| name).collect(),
    });
    let kept: Vec<PageRoute> = routes
        .into_iter()
        .filter(|r| mine.contains(&r.name))
        .collect();
    progress.say(&format!(
        "shard {}/{}: {} of the links",
        shard.index,
        shard.count,
        kept.len()
    ));
    kept
}

/// The browser tab every route runs in.
struct Tab {
    page: Inspector,
    network: Network,
    dialogs: Dialogs,
}

/// One route of the page: its name in the report and its iteration.
struct PageRoute {
    name: String,
    actions: Vec<Action>,
}

/// The action list as one route, or one route per link of the start page.
async fn page_routes(
    tab: &Tab,
    props: &PageProps,
    progress: &Progress,
) -> anyhow::Result<Vec<PageRoute>> {
    let max = match &props.scenario {
        PageScenario::Actions(actions) => {
            return Ok(vec![PageRoute {
                name: props.url.clone(),
                actions: actions.clone(),
            }]);
        }
        PageScenario::Links { max } => *max,
    };
    open_and_set_up(tab, props, progress).await?;
    let found = links::find(&tab.page).await?;
    if found.is_empty() {
        anyhow::bail!(
            "{} has no visible link to another page of its origin for --links to follow: give \
             the iteration with --action instead",
            props.url
        );
    }
    if found.len() as u64 > max {
        progress.say(&format!(
            "{} links found; following the first {max} (--max-links)",
            found.len()
        ));
    }
    Ok(found
        .iter()
        .take(max as usize)
        .map(|link| PageRoute {
            name: link.route(&props.url),
            actions: link.actions(),
        })
        .collect())
}

/// Opens the start URL afresh and runs `--setup`.
async fn open_and_set_up(tab: &Tab, props: &PageProps, progress: &Progress) -> anyhow::Result<()> {
    progress.say(&format!("opening {}", props.url));
    crate::page::open(&tab.page, &props.url)
        .await
        .map_err(|e| anyhow::anyhow!("{e}: check the URL, and that the page is served"))?;
    tab.network.forget_all();
    for action in &props.setup {
        action
            .perform_within(&tab.page, &tab.network, props.timeout)
            .await
            .with_context(|| format!("--setup {}", action.describe()))?;
    }
    Ok(())
}

/// The method's loop over one route, its diagnosis, then `--teardown`.
async fn measure_route(
    tab: &Tab,
    probe: &mut PageProbe,
    props: &PageProps,
    route: PageRoute,
    result: &mut RunResult,
    progress: &Progress,
) -> anyhow::Result<()> {
    open_and_set_up(tab, props, progress).await?;
    result.routes.push(RouteResult {
        route: route.name.clone(),
        pid: result.target.pid,
        ..RouteResult::default()
    });
    let into = result.routes.last_mut().expect("just pushed");
    let start_url = tab
        .page
        .evaluate("location.href")
        .await?
        .as_str()
        .map_or_else(|| props.url.clone(), str::to_string);
    let mut workload = PageActions {
        dialogs: tab.dialogs.clone(),
        page: tab.page.clone(),
        network: tab.network.clone(),
        actions: route.actions,
        iterations: props.iterations,
        stall_timeout: props.timeout,
        start_url,
    };
    // Counting listeners holds every element for a moment: before the
    // baseline's collection, and released after.
    let listeners_before = Census::take(&tab.page).await.ok();
    run_route(probe, &loop_plan(props), &mut workload, into, progress)
        .await
        .with_context(|| format!("page {}", route.name))?;
    if let Some(before) = listeners_before {
        name_listeners(&tab.page, &before, into).await;
    }
    if props.collections {
        check_collections(probe, &mut workload, into, progress).await;
    }
    if wants_diagnosis(props.diagnose, into, probe) {
        let diagnosis = DiagnosisProps {
            snapshots_dir: props.snapshots.as_deref(),
            owns_target: false,
            unit: Unit::Iteration,
            noise: crate::verdict::Noise::Page,
            resolution: None,
            progress,
        };
        diagnose_route(probe, &mut workload, into, diagnosis).await;
    }
    // In the page's terms: the detached nodes and the listeners that grew.
    crate::verdict::page_action::name_page_holders(into);
    if into.is_leak()
        && let Some(action) = crate::verdict::page_action::for_page(into, Unit::Iteration.name())
        && let Some(verdict) = into.verdict.as_mut()
    {
        verdict.action = action;
    }
    for action in &props.teardown {
        action
            .perform_within(&tab.page, &tab.network, props.timeout)
            .await
            .with_context(|| format!("--teardown {}", action.describe()))?;
    }
    Ok(())
}

/// Names the event listeners that piled up over the route's cycles.
async fn name_listeners(page: &Inspector, before: &Census, into: &mut RouteResult) {
    let Ok(after) = Census::take(page).await else {
        return;
    };
    let units: u64 = into.cycles.iter().map(|c| c.units).sum();
    let scripts = listeners::script_urls(page).await;
    into.listeners = after.grown_since(before, units, LISTENERS_PER_ITERATION, &scripts);
}

/// Listeners of one type on one target growing by at least this many per
/// iteration are named: the `handle-growth` threshold of a server's
/// handles, half a listener per unit.
const LISTENERS_PER_ITERATION: f64 = 0.5;

/// The collection check, when the bytes did not call a leak and every
/// cycle did its work: a collection still growing past any reasonable cap
/// turns the verdict into `collection-growth`; one still growing below it
/// when the check's work ran out makes a clean verdict inconclusive. A
/// check that fails is a finding; the byte verdict stands.
async fn check_collections(
    probe: &mut PageProbe,
    workload: &mut PageActions,
    into: &mut RouteResult,
    progress: &Progress,
) {
    let Some(verdict) = into.verdict.as_ref() else {
        return;
    };
    if verdict.kind.is_leak() || into.cycles.iter().any(|c| c.did_no_work()) {
        return;
    }
    let say = |message: &str| progress.say(&format!("{}: {message}", into.route));
    let first = into.cycles.len() as u32 + 1;
    let most_units =
        crate::diagnosis::follow_up_units(into, crate::diagnosis::CHECK_FOLLOW_UP_SECONDS);
    let checked =
        crate::diagnosis::snapshots::check_collections(probe, workload, first, most_units, &say)
            .await;
    match checked {
        Ok(check) => {
            if let Some(verdict) = into.verdict.as_mut() {
                crate::verdict::collections::apply(
                    verdict,
                    &check.collections,
                    Unit::Iteration,
                    check.intervals,
                );
            }
            into.collections = check.collections;
            // A page whose only growth filled a capped history: the heap
            // after the cap decides, not the budget's undecided readings.
            let capped = into.collections.clone();
            if crate::diagnosis::after_cap::wants_after_cap(into, &capped) {
                say("every grown collection stopped at a cap: reading the heap after it");
                let noise = crate::verdict::Noise::Page;
                let judged = crate::diagnosis::after_cap::AfterCap {
                    noise,
                    resolution: crate::diagnosis::after_cap::default_resolution(noise),
                    unit: Unit::Iteration,
                    cycle_time: crate::diagnosis::DIAGNOSIS_CYCLE_TIME,
                };
                let next = first + check.intervals + 1;
                crate::diagnosis::after_cap::judge_after_cap(
                    probe, workload, into, &capped, next, judged,
                )
                .await;
            }
        }
        Err(error) => {
            if let Some(verdict) = into.verdict.as_mut() {
                verdict.findings.push(Finding::new(
                    FindingKind::DiagnosisFailed,
                    format!(
                        "the collection check failed: {:#}",
                        anyhow::Error::new(error)
                    ),
                ));
            }
        }
    }
}

/// "Chrome/148.0.7778.167", from the page's user agent.
/// "Chrome/156.0.8078.114": the browser's own product string (the user
/// agent's is reduced to `156.0.0.0`), the user agent's without it.
async fn browser_version(page: &Inspector) -> Option<String> {
    let from_browser = page.call("Browser.getVersion", serde_json::json!({})).await;
    let product = from_browser
        .ok()
        .and_then(|v| v["product"].as_str().map(String::from));
    if let Some(product) = product.filter(|p| p.contains('/')) {
        return Some(product.trim_start_matches("Headless").to_string());
    }
    let agent = page.evaluate("navigator.userAgent").await.ok()?;
    let agent = agent.as_str()?;
    agent
        .split_whitespace()
        .find(|part| part.starts_with("HeadlessChrome/") || part.starts_with("Chrome/"))
        .map(|part| part.trim_start_matches("Headless").to_string())
}

fn new_result(props: &PageProps) -> RunResult {
    RunResult::starting(
        TargetInfo {
            url: crate::net::redacted(&props.url),
            ..TargetInfo::default()
        },
        Settings {
            cycles: props.cycles,
            requests_per_cycle: props.iterations,
            cycle_time_s: props.cycle_time.map(|t| t.as_secs_f64()),
            connections: 1,
            routes: vec![props.url.clone()],
            method: "page".into(),
            fresh: false,
            max_retained_bytes_per_request: props.max_retained,
            unit: Unit::Iteration,
            scenario: None,
            load_cmd: None,
            abort: None,
            soak: None,
            watch: None,
            sequential: props.sequential.map(|seq| SequentialSettings {
                cycle_requests: props.iterations,
                resolution_bytes_per_request: seq.resolution,
                max_requests: u64::from(seq.max_cycles) * props.iterations,
            }),
            discovery: None,
            shard: None,
            invocation: None,
        },
    )
}
