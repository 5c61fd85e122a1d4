//! Reaching a target leakcheck did not start: the probe (and inspector)
//! for `--inspect`, `--pid`, `--endpoints` and `--proc`, shared by `run`,
//! `sample` and `snapshot`.

use std::net::SocketAddr;

use anyhow::Context;

use crate::inspector::{Inspector, activate_by_pid, resolve_inspector};
use crate::net::resolve_http;
use crate::probe::{Counter, EndpointsProbe, InspectorProbe, Probe, ProcProbe};
use crate::runtime::{Identified, Runtime, identify};
use crate::settings::Attach;

/// A connected probe and what it learned about the target.
pub struct Connected {
    pub probe: Box<dyn Probe>,
    pub node_version: Option<String>,
    /// The runtime, where an inspector answered.
    pub runtime: Option<Identified>,
}

impl Connected {
    /// A probe without an inspector: the runtime is not known.
    fn without_runtime(probe: Box<dyn Probe>) -> Connected {
        Connected {
            probe,
            node_version: None,
            runtime: None,
        }
    }

    /// The inspector probe of an identified runtime: Node's workers and
    /// children are read beside the main isolate (`parts`), Deno's and
    /// Bun's have none leakcheck can reach.
    pub async fn inspector_probe(
        inspector: Inspector,
        identified: Identified,
        counters: &[Counter],
        children: Option<crate::probe::parts::ChildInspectors>,
    ) -> Connected {
        let runtime = identified.runtime;
        let mut probe = InspectorProbe::new(inspector, counters.to_vec()).on(runtime);
        if runtime == Runtime::Node {
            let parts = crate::probe::parts::Parts::watch(&probe.inspector, children).await;
            probe = probe.with_parts(parts);
        }
        Connected {
            probe: Box::new(probe),
            node_version: identified.node_version(),
            runtime: Some(identified),
        }
    }
}

/// Opens the inspector an `--inspect` or `--pid` choice names, speaking
/// its runtime's protocol.
pub async fn connect_inspector(attach: &Attach, allow_remote: bool) -> anyhow::Result<Inspector> {
    Ok(connect_identified(attach, allow_remote).await?.0)
}

/// Like `connect_inspector`, with the runtime it found.
pub async fn connect_identified(
    attach: &Attach,
    allow_remote: bool,
) -> anyhow::Result<(Inspector, Identified)> {
    let url = match attach {
        Attach::Inspect(spec) => resolve_inspector(spec, allow_remote).await?,
        Attach::Pid(pid) => activate_by_pid(*pid, allow_remote).await?,
        _ => anyhow::bail!("this needs the inspector: give --inspect HOST:PORT or --pid PID"),
    };
    Ok(identify(Inspector::connect(&url).await?, Runtime::Node).await)
}

/// Connects the probe for an attach choice. `app` is the app's address,
/// needed when `--endpoints` gives a path rather than a URL.
pub async fn connect_probe(
    attach: &Attach,
    app: Option<SocketAddr>,
    allow_remote_inspector: bool,
    counters: &[Counter],
) -> anyhow::Result<Connected> {
    if !counters.is_empty() && matches!(attach, Attach::Endpoints(_) | Attach::Proc(_)) {
        anyhow::bail!(
            "--counter evaluates JavaScript through the inspector; with --endpoints every extra \
             numeric field of /mem is a counter already, and --proc has none"
        );
    }
    match attach {
        Attach::Inspect(_) | Attach::Pid(_) => {
            let (inspector, identified) =
                connect_identified(attach, allow_remote_inspector).await?;
            Ok(Connected::inspector_probe(inspector, identified, counters, None).await)
        }
        Attach::Endpoints(spec) => {
            let (addr, base) = if spec.starts_with("http://") {
                let target = resolve_http(spec, false)?;
                (target.addr, target.path)
            } else {
                let addr = app
                    .context("--endpoints with a path needs --url to say where the app listens")?;
                (addr, spec.clone())
            };
            Ok(Connected::without_runtime(Box::new(EndpointsProbe::new(
                addr, &base,
            ))))
        }
        Attach::Proc(pid) => {
            if !crate::platform::procfs::process_exists(*pid) {
                anyhow::bail!("process {pid} does not exist; check the PID with `ps`");
            }
            Ok(Connected::without_runtime(Box::new(ProcProbe {
                pid: *pid,
            })))
        }
    }
}
