//! Reaching the watched process and leaving it as it was found.
//!
//! `--pid` opens the inspector with SIGUSR1 (on 127.0.0.1) and notes
//! whether it was already open; `--inspect` uses a running one; a command
//! after `--` is started with its inspector on an ephemeral loopback port.
//! On the way out everything the watch installed is removed in the
//! reverse order (the sampling profiler, the observer), the profiler
//! domain disabled, and an inspector leakcheck opened is closed again.

use std::time::Duration;

use serde_json::json;

use super::observer::Observer;
use super::sites::SiteSampler;
use crate::inspector::{Inspector, InspectorError, activate, close_through, resolve_inspector};
use crate::model::Detached;
use crate::process::{LaunchSpec, Target};
use crate::settings::WatchTarget;

/// How long each step of leaving may take: a target that does not answer
/// is left with what could not be removed named.
const LEAVE_STEP: Duration = Duration::from_secs(10);

/// The watched process's inspector session and what is known of it.
pub struct Attached {
    pub inspector: Inspector,
    pub pid: Option<u32>,
    /// leakcheck opened the inspector (SIGUSR1): it closes it on exit.
    pub opened_inspector: bool,
    pub node_version: Option<String>,
    pub cwd: Option<String>,
    /// The runtime, whose protocol `inspector` speaks.
    pub runtime: crate::runtime::Identified,
}

/// Connects to the process `target` names; a launched command is put in
/// `launched` first, so that the caller stops it whatever happens next.
pub async fn attach(
    target: &WatchTarget,
    allow_remote: bool,
    launched: &mut Option<Target>,
    faults: tokio::sync::watch::Sender<Option<String>>,
) -> anyhow::Result<Attached> {
    let (url, opened) = match target {
        WatchTarget::Pid(pid) => {
            let activated = activate(*pid, allow_remote).await?;
            (activated.url, activated.opened)
        }
        WatchTarget::Inspect(spec) => (resolve_inspector(spec, allow_remote).await?, false),
        WatchTarget::Fleet(_) => {
            anyhow::bail!("several processes are watched by `fleet`, each attached by its pid")
        }
        WatchTarget::Launch {
            command,
            ready_timeout,
            grace,
        } => {
            let started = launched.insert(Target::launch(&LaunchSpec {
                command: command.clone(),
                grace: *grace,
                faults: Some(faults),
                node: true,
                node_flags: Vec::new(),
                env: Vec::new(),
            })?);
            (started.app_announced(*ready_timeout).await?, false)
        }
    };
    let expected = launched
        .as_ref()
        .map_or(crate::runtime::Runtime::Node, |t| t.runtime);
    let (inspector, runtime) =
        crate::runtime::identify(Inspector::connect(&url).await?, expected).await;
    let facts = facts_of(&inspector).await?;
    Ok(Attached {
        pid: facts["pid"].as_u64().map(|p| p as u32),
        node_version: runtime.node_version(),
        runtime,
        cwd: facts["cwd"].as_str().map(str::to_string),
        inspector,
        opened_inspector: opened,
    })
}

/// How long the process may take to answer with its pid: a command just
/// launched is attached as soon as its inspector listens, while Node is
/// still bootstrapping, and `process.pid` is then undefined for a moment
/// (seen once in 40 launches).
const FACTS_PATIENCE: Duration = Duration::from_secs(5);
const FACTS_RETRY: Duration = Duration::from_millis(50);
const FACTS: &str =
    "JSON.stringify({ pid: process.pid, version: process.version, cwd: process.cwd() })";

/// The process's pid, Node version and working directory, asked again
/// while its pid is not yet defined (what the watch reports it by).
async fn facts_of(inspector: &Inspector) -> anyhow::Result<serde_json::Value> {
    let started = std::time::Instant::now();
    loop {
        let facts = match inspector.evaluate(FACTS).await {
            Ok(answer) => serde_json::from_str(answer.as_str().unwrap_or("{}")).unwrap_or_default(),
            // `process` itself not yet set up.
            Err(InspectorError::Evaluation { .. }) => serde_json::Value::Null,
            Err(other) => return Err(other.into()),
        };
        if facts["pid"].is_u64() || started.elapsed() > FACTS_PATIENCE {
            return Ok(facts);
        }
        tokio::time::sleep(FACTS_RETRY).await;
    }
}

/// Removes what the watch installed and closes an inspector it opened.
pub async fn leave(
    attached: &Attached,
    observer: Option<&Observer>,
    sampler: Option<&SiteSampler>,
) -> Detached {
    let mut detached = Detached::default();
    if let Some(sampler) = sampler {
        match tokio::time::timeout(LEAVE_STEP, sampler.stop()).await {
            Ok(Ok(())) => detached.sampler_stopped = true,
            _ => detached.left.push(
                "the sampling heap profiler may still run (the target did not answer)".into(),
            ),
        }
    }
    if let Some(observer) = observer {
        match tokio::time::timeout(LEAVE_STEP, observer.remove()).await {
            Ok(Ok(_)) => detached.observer_removed = true,
            _ => detached.left.push(
                "the collection observer may still be installed (the target did not answer)".into(),
            ),
        }
    }
    if attached.inspector.dialect.has_heap_profiler() {
        let _ = tokio::time::timeout(
            LEAVE_STEP,
            attached.inspector.call("HeapProfiler.disable", json!({})),
        )
        .await;
    }
    if attached.opened_inspector {
        close_through(&attached.inspector).await;
        detached.inspector_closed = match attached.pid {
            Some(pid) => inspector_port_closed(pid, &attached.inspector.url).await,
            None => false,
        };
        if !detached.inspector_closed {
            detached.left.push(format!(
                "the inspector leakcheck opened ({}) still listens",
                attached.inspector.url
            ));
        }
    }
    detached
}

/// Whether the inspector's port stopped listening within a second.
async fn inspector_port_closed(pid: u32, url: &str) -> bool {
    let Some(port) = crate::process::inspector_port(url) else {
        return false;
    };
    for _ in 0..20 {
        if !crate::platform::procfs::listening_ports_of(pid).contains(&port) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}
