//! `-j N`: routes checked side by side on one machine. Each of N workers
//! owns a session, and so a target of its own on a port of its own: the
//! first is the run's (it may already run: route discovery started it);
//! the others' URL and command carry a free loopback port in place of the
//! URL's (every word that is the port, or ends in `:PORT` or `=PORT`), and
//! their target gets it as `PORT` too. The routes are dealt to the workers
//! by the shards' rule (`routes::shard`: equal estimated time), each worker
//! checks its routes as a one-worker run would (`measure`), and the routes
//! are put back in the run's order.
//!
//! The targets share the machine: a verdict reads the target's own
//! readings, not the machine's, so it does not change with `-j` while each
//! route has a core for its target and one for its load (the default is
//! half the cores); BENCHMARKS.md compares `-j 1` and `-j 2`.

use anyhow::Context;

use super::measure;
use crate::cycle::CyclePlan;
use crate::model::RunResult;
use crate::net::{HttpTarget, resolve_http};
use crate::probe::Probe;
use crate::session::Session;
use crate::settings::RunSettings;

/// One more worker's own settings, address and plan.
struct Worker {
    settings: RunSettings,
    http: HttpTarget,
    plan: CyclePlan,
}

/// Checks `routes` with `jobs` workers; `session` (and `probe`, when
/// discovery started its target) is the first worker's.
pub(super) async fn measure_side_by_side(
    session: &mut Session<'_>,
    plan: &CyclePlan,
    routes: &[String],
    result: &mut RunResult,
    probe: Option<Box<dyn Probe>>,
    jobs: usize,
) -> anyhow::Result<()> {
    let groups = deal(routes, result, jobs);
    let mut workers = Vec::new();
    for _ in 1..groups.len() {
        workers.push(worker_on_free_port(session.settings, &session.http, plan)?);
    }
    session.progress.say(&format!(
        "{} routes side by side in {} targets (-j {jobs}), ports {}",
        routes.len(),
        groups.len(),
        std::iter::once(session.http.addr.port())
            .chain(workers.iter().map(|w| w.http.addr.port()))
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let mut sessions: Vec<Session<'_>> = workers
        .iter()
        .map(|w| {
            let (faults, _) = tokio::sync::watch::channel(None::<String>);
            Session::new(&w.settings, w.http.clone(), session.progress, faults)
        })
        .collect();
    let template = RunResult {
        routes: Vec::new(),
        ..result.clone()
    };
    let mut parts: Vec<RunResult> = vec![template; groups.len()];
    let (first_part, other_parts) = parts.split_first_mut().expect("one group at least");
    let first = measure(session, plan, &groups[0], first_part, probe);
    let others = sessions
        .iter_mut()
        .zip(other_parts.iter_mut())
        .zip(workers.iter().zip(&groups[1..]))
        .map(|((worker_session, part), (worker, group))| async move {
            let measured = measure(worker_session, &worker.plan, group, part, None).await;
            if let Some(target) = worker_session.target_mut() {
                target.stop().await;
            }
            measured
        });
    let (first, others) = tokio::join!(first, futures_util::future::join_all(others));
    // Every route measured, in the run's order, whatever failed.
    let mut measured: Vec<_> = parts.into_iter().flat_map(|p| p.routes).collect();
    measured.sort_by_key(|r| routes.iter().position(|name| *name == r.route));
    result.routes = measured;
    first?;
    for outcome in others {
        outcome?;
    }
    Ok(())
}

/// The routes of each worker, by the shards' rule (empty groups dropped).
fn deal(routes: &[String], result: &RunResult, jobs: usize) -> Vec<Vec<String>> {
    let mut groups =
        crate::routes::shard::split(&super::discover::paced(routes, result), jobs as u32);
    groups.retain(|g| !g.is_empty());
    groups
}

/// A worker whose target listens on a free loopback port.
fn worker_on_free_port(
    settings: &RunSettings,
    http: &HttpTarget,
    plan: &CyclePlan,
) -> anyhow::Result<Worker> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .context("no free loopback port for a -j worker")?
        .port();
    let settings = on_port(settings, http.addr.port(), port)?;
    let http = resolve_http(&settings.target.url, settings.target.allow_remote)?;
    let mut plan = plan.clone();
    plan.load.addr = http.addr;
    plan.load.host = http.host.clone();
    Ok(Worker {
        settings,
        http,
        plan,
    })
}

/// `settings` with the URL's port `from` replaced by `to` in the URL and
/// the command, and `PORT=to` in the target's environment.
fn on_port(settings: &RunSettings, from: u16, to: u16) -> anyhow::Result<RunSettings> {
    let mut moved = settings.clone();
    let mut url = url::Url::parse(&settings.target.url)?;
    url.set_port(Some(to))
        .map_err(|_| anyhow::anyhow!("--url {} has no port to move", settings.target.url))?;
    moved.target.url = url.to_string();
    moved.target.command = command_on_port(&settings.target.command, from, to);
    moved.target.env.push(("PORT".into(), to.to_string()));
    Ok(moved)
}

fn command_on_port(command: &[String], from: u16, to: u16) -> Vec<String> {
    let (from, to) = (from.to_string(), to.to_string());
    command
        .iter()
        .map(|word| {
            if *word == from {
                return to.clone();
            }
            for mark in [':', '='] {
                if let Some(head) = word.strip_suffix(&format!("{mark}{from}")) {
                    return format!("{head}{mark}{to}");
                }
            }
            word.clone()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn the_port_moves_where_the_command_names_it_and_nowhere_else() {
        assert_eq!(
            command_on_port(&words("node server.js 3000"), 3000, 41000),
            words("node server.js 41000")
        );
        assert_eq!(
            command_on_port(
                &words("node app.js --port=3000 --host 127.0.0.1:3000"),
                3000,
                4
            ),
            words("node app.js --port=4 --host 127.0.0.1:4")
        );
        // Not a word that merely contains the digits.
        assert_eq!(
            command_on_port(&words("node v30001.js 13000"), 3000, 4),
            words("node v30001.js 13000")
        );
    }
}
