//! `leakcheck routes`: the routes a run would check, found as `run` finds
//! them (`crate::routes`), listed with the request each would send and
//! the ones left out with their reason; nothing is measured. The target is
//! started only when a source needs it (the app's router, an OpenAPI URL
//! it serves), and stopped by PID on every path.

use std::fmt::Write as _;

use super::frame::{Frame, RunEnd};
use crate::model::RunResult;
use crate::report::OutputProps;
use crate::routes::SourceChoice;
use crate::routes::find::{Found, Reach, find};
use crate::session::Session;
use crate::settings::RoutesProps;

pub async fn run(props: RoutesProps) -> anyhow::Result<RunEnd> {
    let settings = &props.run;
    let http = crate::net::resolve_http(&settings.target.url, false)?;
    let frame = Frame::open(&OutputProps::default(), None, settings.quiet, false)?;
    let (faults, mut fault) = tokio::sync::watch::channel(None::<String>);
    let mut session = Session::new(settings, http, &frame.progress, faults);
    let mut found: Option<Found> = None;
    let work = async {
        found = discover(&mut session).await?;
        Ok(())
    };
    let measured = frame.guard(work, Some(&mut fault)).await;
    frame.stop(session.target_mut(), "the target").await;
    match measured {
        Ok(Ok(())) => {}
        Ok(Err(error)) => return Err(error),
        Err(signal) => anyhow::bail!("stopped by {signal:?} before the routes were read"),
    }
    let Some(found) = found else {
        anyhow::bail!(
            "no route source found: give --openapi FILE|URL, run it in a Next.js app after `next \
             build`, or give the app's command after `--` so its router can be read"
        );
    };
    let text = listing(&found);
    match &props.json {
        Some(target) => {
            target.write(&serde_json::to_string_pretty(&json_of(&found))?)?;
            if !matches!(target, crate::report::OutputTarget::Stdout) {
                print!("{text}");
            } else {
                eprint!("{text}");
            }
        }
        None => print!("{text}"),
    }
    Ok(RunEnd::Clean)
}

/// Starts the target when a source needs it, and finds the routes.
async fn discover(session: &mut Session<'_>) -> anyhow::Result<Option<Found>> {
    let settings = session.settings;
    let discovery = settings
        .load
        .discovery
        .as_ref()
        .expect("`routes` always discovers");
    let static_source = matches!(discovery.from, SourceChoice::Next)
        || (discovery
            .openapi
            .as_deref()
            .is_some_and(|o| !o.starts_with("http"))
            && matches!(discovery.from, SourceChoice::OpenApi | SourceChoice::Auto));
    let mut probe = None;
    if !static_source && session.launches() {
        session.launch().await?;
        let mut scratch = RunResult::default();
        probe = Some(session.probe(&mut scratch).await?);
    }
    let reach = Reach {
        inspector: probe.as_ref().and_then(|p| p.inspector()),
        command: &settings.target.command,
    };
    find(discovery, reach).await
}

/// The table a person reads: one line per route checked, then the skipped.
fn listing(found: &Found) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} routes declared by {} ({}): {} would be checked, {} skipped",
        found.declared,
        found.origin,
        found.source.name(),
        found.plan.routes.len(),
        found.plan.skipped.len()
    );
    let width = found
        .plan
        .routes
        .iter()
        .filter_map(|r| r.pattern.as_ref().map(String::len))
        .max()
        .unwrap_or(0)
        .max("PATTERN".len());
    let _ = writeln!(out, "{:<7} {:<width$}  REQUEST", "METHOD", "PATTERN");
    for route in &found.plan.routes {
        let _ = writeln!(
            out,
            "{:<7} {:<width$}  {}{}",
            route.method_or("GET"),
            route.pattern.as_deref().unwrap_or(&route.path),
            route.path,
            route
                .body
                .as_deref()
                .map_or(String::new(), |b| format!("  body {b}"))
        );
    }
    for skipped in &found.plan.skipped {
        let _ = writeln!(
            out,
            "skipped {} {}: {}",
            skipped.method, skipped.pattern, skipped.reason
        );
    }
    out
}

fn json_of(found: &Found) -> serde_json::Value {
    serde_json::json!({
        "source": found.source.name(),
        "origin": found.origin,
        "declared": found.declared,
        "routes": found.plan.routes,
        "skipped": found.plan.skipped,
    })
}
