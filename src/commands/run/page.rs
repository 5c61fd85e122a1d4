//! `leakcheck page`: Chromium started (or connected to), the page opened,
//! the method's cycles of user actions, the diagnosis on retention, and
//! the same result, reports and exit codes as `run`. The browser is
//! stopped by PID and its profile removed on every path, Ctrl-C included.

use anyhow::Context;

use super::diagnosis::diagnose_with;
use super::outcome::{mark_partial_routes, outcome_of, run_end};
use super::{RunEnd, preflight};
use crate::cli::{OutputProps, PageProps};
use crate::commands::signals::{exit_on_a_later_signal, stop_signal};
use crate::inspector::Inspector;
use crate::model::{Outcome, RouteResult, RunResult, SCHEMA_VERSION, Settings, TargetInfo, Unit};
use crate::page::browser::{self, Browser};
use crate::page::{PagePlan, PageProbe, iterate, run_page, wait_loaded};
use crate::report::progress::Progress;
use crate::verdict::Options;

pub async fn run(props: PageProps) -> anyhow::Result<RunEnd> {
    let baseline = preflight::check_outputs(&props.output, props.snapshots.as_deref())?;
    let progress = Progress::new(props.quiet);
    let mut result = new_result(&props);
    let mut slot: Option<Browser> = None;
    let started = std::time::Instant::now();
    let measured = {
        let work = measure(&mut slot, &props, &mut result, &progress);
        tokio::select! {
            outcome = work => Ok(outcome),
            signal = stop_signal() => Err(signal),
        }
    };
    if measured.is_err() {
        exit_on_a_later_signal();
    }
    // The page's session is gone with the measuring future: stop the
    // browser by PID, then drop it, which removes its profile.
    let stopped = match slot.as_mut() {
        Some(browser) => {
            progress.say(&format!("stopping Chromium (pid {})", browser.target.pid));
            Some(browser.target.stop().await)
        }
        None => None,
    };
    result.outcome = outcome_of(measured, slot.as_ref().map(|b| &b.target), stopped.as_ref());
    result.outcome.target_stopped = stopped;
    drop(slot);
    mark_partial_routes(&mut result);
    progress.say(&format!("done in {:.2} s", started.elapsed().as_secs_f64()));
    compare_and_emit(&mut result, baseline, &props.output)?;
    if let Some(error) = &result.outcome.error {
        eprintln!("error: {error}");
    }
    Ok(run_end(&result))
}

fn compare_and_emit(
    result: &mut RunResult,
    baseline: Option<RunResult>,
    output: &OutputProps,
) -> anyhow::Result<()> {
    if let (Some(previous), Some(path)) = (&baseline, &output.baseline) {
        result.comparison = Some(crate::report::baseline::compare(
            previous,
            result,
            path,
            output.tolerance,
        ));
    }
    crate::report::emit_all(result, output)
}

/// Starts or reaches the browser, opens the page, and measures it.
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
    let mut probe = PageProbe::new(page.clone()).await?;
    result.target.probe = Some(crate::model::ProbeKind::Inspector);
    result.target.node_version = browser_version(&page).await;
    progress.say(&format!("opening {}", props.url));
    page.call("Page.navigate", serde_json::json!({ "url": props.url }))
        .await?;
    wait_loaded(&page)
        .await
        .map_err(|e| anyhow::anyhow!("{}: {e}", props.url))?;
    result.routes.push(RouteResult {
        route: props.url.clone(),
        pid: result.target.pid,
        ..RouteResult::default()
    });
    let into = result.routes.last_mut().expect("just pushed");
    let plan = PagePlan {
        actions: props.actions.clone(),
        cycles: props.cycles,
        iterations: props.iterations,
        verdict: Options {
            max_retained: props.max_retained,
            unit: Unit::Iteration,
            ..Options::default()
        },
    };
    run_page(&mut probe, &plan, into, progress)
        .await
        .with_context(|| format!("page {}", props.url))?;
    let leaks = into.verdict.as_ref().is_some_and(|v| v.kind.is_leak());
    if props.diagnose && leaks {
        let (actions, n) = (plan.actions.clone(), plan.iterations);
        let work = Box::pin(async move {
            let done = iterate(&page, &actions, n, |_, _| {}).await;
            done.map(|d| d.ok).map_err(|e| e.to_string())
        });
        let snapshots = props.snapshots.as_deref();
        diagnose_with(
            &mut probe,
            work,
            into,
            snapshots,
            false,
            Unit::Iteration,
            progress,
        )
        .await;
    }
    Ok(())
}

/// "Chrome/148.0.7778.167", from the page's user agent.
async fn browser_version(page: &Inspector) -> Option<String> {
    let agent = page.evaluate("navigator.userAgent").await.ok()?;
    let agent = agent.as_str()?;
    agent
        .split_whitespace()
        .find(|part| part.starts_with("HeadlessChrome/") || part.starts_with("Chrome/"))
        .map(|part| part.trim_start_matches("Headless").to_string())
}

fn new_result(props: &PageProps) -> RunResult {
    RunResult {
        schema_version: SCHEMA_VERSION,
        leakcheck_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        target: TargetInfo {
            url: crate::net::redacted(&props.url),
            ..TargetInfo::default()
        },
        settings: Settings {
            cycles: props.cycles,
            requests_per_cycle: props.iterations,
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
            sequential: None,
        },
        routes: Vec::new(),
        outcome: Outcome::default(),
        comparison: None,
    }
}
