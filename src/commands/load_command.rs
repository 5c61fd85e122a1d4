//! `leakcheck load`: one load run with a progress bar, a summary and an
//! optional JSON report. Ctrl-C stops sending and still prints what was
//! measured.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::load::{LoadPlan, LoadRun, RequestSpec, Stop};
use crate::net::resolve_http;
use crate::report::emit_summary;
use crate::report::load_view::{LoadSetting, load_json, load_summary};
use crate::settings::LoadProps;

pub async fn run(props: LoadProps) -> anyhow::Result<()> {
    let http = resolve_http(&props.url, props.allow_remote)?;
    let spec = |path: &str, weight: u32| RequestSpec {
        method: props.request.method.clone(),
        path: path.to_string(),
        headers: props.request.headers.clone(),
        body: props.request.body.clone(),
        weight,
    };
    let mut requests = vec![spec(&http.path, 1)];
    requests.extend(
        props
            .routes
            .iter()
            .map(|(path, weight)| spec(path, *weight)),
    );
    let scenario = match &props.request.scenario {
        Some(path) => Some(std::sync::Arc::new(crate::load::Scenario::load_with(
            path,
            &http.host,
            &props.request.headers,
        )?)),
        None => None,
    };
    let plan = LoadPlan {
        addr: http.addr,
        host: http.host.clone(),
        requests,
        connections: props.connections,
        stop: props.stop,
        rate: props.rate,
        timeout: props.request.timeout,
        scenario,
        abort: props.request.abort,
    };
    let run = LoadRun::start(plan);
    let progress = run.progress.clone();
    let bar = progress_bar(props.stop, props.quiet);
    let mut finished = std::pin::pin!(run.finish());
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let mut interrupted = false;
    // One listener for the whole run: a new one per tick could miss a
    // signal that arrives between two ticks.
    let mut stop = std::pin::pin!(crate::commands::signals::stop_signal());
    let mut signal = None;
    let report = loop {
        tokio::select! {
            report = &mut finished => break report?,
            _ = tick.tick() => bar.set_position(progress.completed()),
            received = &mut stop, if !interrupted => {
                interrupted = true;
                signal = Some(received);
                progress.stop();
            }
        }
    };
    bar.finish_and_clear();
    let shown_url = crate::net::redacted(&props.url);
    let setting = LoadSetting {
        url: &shown_url,
        connections: props.connections,
        stop: props.stop,
        rate: props.rate,
    };
    let summary = load_summary(&setting, &report);
    emit_summary(&summary, props.json.as_ref(), || {
        load_json(&setting, &report)
    })?;
    if let Some(signal) = signal {
        anyhow::bail!("interrupted by {signal}; the figures above cover what was sent");
    }
    if report.stalled {
        anyhow::bail!(
            "the server stopped answering: every request of the last {} s timed out",
            props.request.timeout.as_secs_f64()
        );
    }
    Ok(())
}

fn progress_bar(stop: Stop, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = match stop {
        Stop::Requests(n) => ProgressBar::new(n),
        Stop::Duration(_) => ProgressBar::new_spinner(),
    };
    bar.set_style(
        ProgressStyle::with_template(
            "[{elapsed_precise}] [{bar:30}] {pos}/{len} requests {per_sec}",
        )
        .expect("constant template")
        .progress_chars("=> "),
    );
    bar
}
