//! The target of one run, owned in one place: the process leakcheck
//! launched (or none, when it attaches), the HTTP address it serves, the
//! channel its faults arrive on, and the progress the user watches. The
//! loop, the snapshot diagnosis, the native recorder and the allocator
//! trial all start, restart, read and stop the target through a
//! `Session`, so a new way of running the target (a heap limit, a fresh
//! process for a diagnosis) is a change here and nowhere else.
//!
//! The session never outlives its run: whatever happens, the command's
//! frame stops the target it holds by PID (`target_mut`).

pub mod attach;
pub mod ports;

use std::time::Duration;

use anyhow::bail;
use tokio::sync::watch;

use crate::inspector::Inspector;
use crate::model::RunResult;
use crate::net::HttpTarget;
use crate::platform::procfs;
use crate::probe::parts::ChildInspectors;
use crate::probe::{InspectorProbe, Probe, ProcProbe};
use crate::process::{LaunchSpec, Target};
use crate::report::progress::Progress;
use crate::runtime::Runtime;
use crate::settings::RunSettings;
use ports::wait_port_free;

/// How long a launched target may take to announce an inspector once it
/// serves; a command that is not Node never does, and gets the proc probe.
const INSPECTOR_GRACE: Duration = Duration::from_secs(1);

/// What a fresh process of the target gets beyond the command: Node flags
/// (the native recorder's perf map) and environment (a recorder's or an
/// allocator's `LD_PRELOAD`).
#[derive(Default)]
pub struct Fresh {
    pub node_flags: Vec<String>,
    pub env: Vec<(String, String)>,
}

pub struct Session<'a> {
    pub settings: &'a RunSettings,
    pub http: HttpTarget,
    pub progress: &'a Progress,
    slot: Option<Target>,
    faults: watch::Sender<Option<String>>,
}

impl<'a> Session<'a> {
    /// A session with no process yet; a launched target reports its
    /// death on `faults`.
    pub fn new(
        settings: &'a RunSettings,
        http: HttpTarget,
        progress: &'a Progress,
        faults: watch::Sender<Option<String>>,
    ) -> Self {
        Session {
            settings,
            http,
            progress,
            slot: None,
            faults,
        }
    }

    /// leakcheck starts (and stops) the target itself.
    pub fn launches(&self) -> bool {
        self.settings.target.launched()
    }

    pub fn target(&self) -> Option<&Target> {
        self.slot.as_ref()
    }

    /// The running target, for the frame to stop whatever happened.
    pub fn target_mut(&mut self) -> Option<&mut Target> {
        self.slot.as_mut()
    }

    /// Starts the measured process of the target and waits until it serves.
    pub async fn launch(&mut self) -> anyhow::Result<()> {
        let command = self.settings.target.command.join(" ");
        self.progress.say(&format!("starting `{command}`"));
        let target = self.launch_fresh(Fresh::default()).await?;
        if let Some(note) = target.launch_note.clone() {
            self.progress.say(&note);
        }
        Ok(())
    }

    /// Starts the target's command and waits until it serves: the measured
    /// process, and the diagnosis' fresh ones (native recorder, allocator
    /// A/B).
    pub async fn launch_fresh(&mut self, fresh: Fresh) -> anyhow::Result<&mut Target> {
        let target = &self.settings.target;
        let mut env = fresh.env;
        env.extend(target.env.iter().cloned());
        if let Some(bytes) = target.heap_limit {
            let inherited = std::env::var("NODE_OPTIONS").unwrap_or_default();
            env.push(("NODE_OPTIONS".into(), with_heap_limit(&inherited, bytes)));
        }
        let launched = self.slot.insert(Target::launch(&LaunchSpec {
            command: target.command.clone(),
            grace: target.grace,
            faults: Some(self.faults.clone()),
            node: true,
            node_flags: fresh.node_flags,
            env,
        })?);
        launched
            .wait_ready(self.http.addr, target.ready_timeout)
            .await?;
        Ok(launched)
    }

    /// Stops the target (if any) and waits for its port, so that the next
    /// process can listen on it.
    pub async fn restart(&mut self) -> anyhow::Result<()> {
        if let Some(mut target) = self.slot.take() {
            self.progress.say(&format!(
                "restarting the target for a fresh process (pid {} stops)",
                target.pid
            ));
            target.stop().await;
        }
        let addr = self.http.addr;
        if !wait_port_free(addr).await {
            bail!(
                "port {} stayed busy after the target stopped, {}; use --no-fresh to keep one process",
                addr.port(),
                procfs::describe_holders(addr.port())
            );
        }
        Ok(())
    }

    /// Forgets a fault already reported (a target that died of memory),
    /// so that the fresh process started to diagnose it is watched anew.
    pub fn clear_fault(&self) {
        self.faults.send_replace(None);
    }

    /// Stops the target now (a diagnosis' fresh process when its cycle is read).
    pub async fn stop(&mut self) {
        if let Some(mut target) = self.slot.take() {
            target.stop().await;
        }
    }

    /// A plain inspector probe on the running fresh process (no counters,
    /// no workers or children): what the diagnosis' extra processes are
    /// read with.
    pub async fn fresh_probe(&mut self) -> anyhow::Result<InspectorProbe> {
        let Some(target) = self.slot.as_mut() else {
            bail!("no target process is running to read");
        };
        let url = target
            .inspector_url(self.http.addr, Duration::from_secs(5))
            .await?;
        let (inspector, identified) =
            crate::runtime::identify(Inspector::connect(&url).await?, target.runtime).await;
        Ok(InspectorProbe::new(inspector, Vec::new()).on(identified.runtime))
    }

    /// The measured target's probe: through the launched process's
    /// inspector (with its workers and children), through the attach
    /// choice, or rss from /proc for a command that is not Node. What it
    /// learns about the target goes into `result.target`.
    pub async fn probe(&mut self, result: &mut RunResult) -> anyhow::Result<Box<dyn Probe>> {
        let settings = &self.settings.target;
        let connected = match (&settings.attach, self.slot.as_mut()) {
            (Some(choice), _) => {
                attach::connect_probe(
                    choice,
                    Some(self.http.addr),
                    settings.allow_remote_inspector,
                    &settings.counters,
                )
                .await?
            }
            (None, Some(target)) => {
                launched_probe(target, &self.http, settings, self.progress).await?
            }
            (None, None) => {
                bail!("nothing to measure: give the server's command after `--`, or an attach flag")
            }
        };
        result.target.node_version = connected.node_version;
        if let Some(identified) = connected.runtime.filter(|r| r.runtime != Runtime::Node) {
            result.target.runtime = Some(identified.label());
            result.target.runtime_gaps = identified.runtime.gaps();
        }
        result.target.probe = Some(connected.probe.kind());
        result.target.cwd = target_cwd(connected.probe.as_ref(), result.target.pid).await;
        Ok(connected.probe)
    }
}

/// `NODE_OPTIONS` with the old space limited to `bytes` (in V8's whole
/// megabytes): after whatever the user's own NODE_OPTIONS say, so that
/// `--heap-limit` wins over an inherited `--max-old-space-size`.
pub fn with_heap_limit(inherited: &str, bytes: u64) -> String {
    let megabytes = (bytes >> 20).max(1);
    let flag = format!("--max-old-space-size={megabytes}");
    match inherited.trim() {
        "" => flag,
        options => format!("{options} {flag}"),
    }
}

/// The probe of a process leakcheck launched.
async fn launched_probe(
    target: &mut Target,
    http: &HttpTarget,
    settings: &crate::settings::TargetSettings,
    progress: &Progress,
) -> anyhow::Result<attach::Connected> {
    // The process that serves the URL: below npm or a shell, not the one launched.
    let serving_pid = procfs::holders_of(http.addr.port())
        .first()
        .map_or(target.pid, |h| h.pid);
    let Ok(url) = target.inspector_url(http.addr, INSPECTOR_GRACE).await else {
        progress.say(&format!(
            "no Node inspector announced itself: reading rss of pid {serving_pid} from /proc, \
             without forced collections"
        ));
        return Ok(attach::Connected {
            probe: Box::new(ProcProbe { pid: serving_pid }),
            node_version: None,
            runtime: None,
        });
    };
    let (inspector, identified) =
        crate::runtime::identify(Inspector::connect(&url).await?, target.runtime).await;
    let children = ChildInspectors {
        announced: target.announced_inspectors(),
        serving_pid,
        main_url: url.clone(),
    };
    let connected = attach::Connected::inspector_probe(
        inspector,
        identified,
        &settings.counters,
        Some(children),
    )
    .await;
    Ok(connected)
}

/// The target's `process.cwd()`, or its `/proc/PID/cwd` without an
/// inspector.
async fn target_cwd(probe: &dyn Probe, pid: Option<u32>) -> Option<String> {
    if let Some(inspector) = probe.inspector()
        && let Ok(serde_json::Value::String(cwd)) =
            inspector.evaluate_in_console("process.cwd()").await
    {
        return Some(cwd);
    }
    let link = crate::platform::procfs::cwd_of(pid?)?;
    Some(link.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::with_heap_limit;

    #[test]
    fn the_heap_limit_comes_after_the_users_node_options() {
        assert_eq!(with_heap_limit("", 512 << 20), "--max-old-space-size=512");
        assert_eq!(
            with_heap_limit("--max-old-space-size=4096 --enable-source-maps", 256 << 20),
            "--max-old-space-size=4096 --enable-source-maps --max-old-space-size=256"
        );
    }
}
