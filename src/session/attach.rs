//! Reaching a target leakcheck did not start: the probe (and inspector)
//! for `--inspect`, `--pid`, `--endpoints` and `--proc`, shared by `run`,
//! `sample` and `snapshot`.

use std::net::SocketAddr;

use anyhow::Context;

use crate::inspector::{Inspector, activate_by_pid, resolve_inspector};
use crate::net::resolve_http;
use crate::probe::{Counter, EndpointsProbe, InspectorProbe, Probe, ProcProbe};
use crate::settings::Attach;

/// A connected probe and what it learned about the target.
pub struct Connected {
    pub probe: Box<dyn Probe>,
    pub node_version: Option<String>,
}

/// Opens the inspector an `--inspect` or `--pid` choice names.
pub async fn connect_inspector(attach: &Attach, allow_remote: bool) -> anyhow::Result<Inspector> {
    let url = match attach {
        Attach::Inspect(spec) => resolve_inspector(spec, allow_remote).await?,
        Attach::Pid(pid) => activate_by_pid(*pid, allow_remote).await?,
        _ => anyhow::bail!("this needs the inspector: give --inspect HOST:PORT or --pid PID"),
    };
    Ok(Inspector::connect(&url).await?)
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
            let inspector = connect_inspector(attach, allow_remote_inspector).await?;
            let parts = crate::probe::parts::Parts::watch(&inspector, None).await;
            let probe = InspectorProbe::new(inspector, counters.to_vec()).with_parts(parts);
            let node_version = probe.node_version().await.ok();
            Ok(Connected {
                probe: Box::new(probe),
                node_version,
            })
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
            Ok(Connected {
                probe: Box::new(EndpointsProbe::new(addr, &base)),
                node_version: None,
            })
        }
        Attach::Proc(pid) => {
            if !crate::platform::procfs::process_exists(*pid) {
                anyhow::bail!("process {pid} does not exist; check the PID with `ps`");
            }
            Ok(Connected {
                probe: Box::new(ProcProbe { pid: *pid }),
                node_version: None,
            })
        }
    }
}
