//! `watch`'s settings: one way to reach the process, a schedule, the
//! evidence's budget.

use crate::cli::WatchArgs;
use crate::settings::{MetricsProps, Selection, WatchProps, WatchTarget};

/// The finest sampling interval allowed: below it the profiler samples
/// so often that it costs a busy target measurably (V8's default for a
/// profiling session is 32 KB).
const FINEST_SAMPLE_INTERVAL: f64 = 16.0 * 1024.0;

/// The span an indefinite watch judges. An hour: long enough that the
/// floor a flat heap is held to is small (it shrinks with the span; a
/// 90 s watch's floors were 37–129 MB/h, bench/watch.sh), short enough
/// that the verdict follows today's traffic, not last week's, and that
/// the pairwise fit stays cheap (a reading every few seconds at most).
pub const DEFAULT_WINDOW: std::time::Duration = std::time::Duration::from_secs(3600);
const MIN_WINDOW: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether `pid` has Node processes below it: a cluster's primary or
/// PM2's daemon, whose workers are watched with it.
fn has_workers(pid: u32) -> bool {
    !crate::watch::discover::node_descendants(pid).is_empty()
}

/// `--metrics HOST:PORT`, refused on an address other machines reach
/// unless `--metrics-public` says so: the endpoint names processes,
/// their command lines and their code's sites.
fn metrics_props(spec: Option<&str>, public: bool) -> anyhow::Result<Option<MetricsProps>> {
    let Some(spec) = spec else {
        return Ok(None);
    };
    let spec = spec.replace("localhost:", "127.0.0.1:");
    let addr: std::net::SocketAddr = spec.parse().map_err(|_| {
        anyhow::anyhow!("--metrics {spec}: give HOST:PORT with an IP address (127.0.0.1:9464)")
    })?;
    if !addr.ip().is_loopback() && !public {
        anyhow::bail!(
            "--metrics {addr} can be reached from other machines, and the endpoint names \
             processes and their code: add --metrics-public if that is meant, or use \
             127.0.0.1:{}",
            addr.port()
        );
    }
    Ok(Some(MetricsProps { addr }))
}

impl WatchArgs {
    pub fn into_props(self) -> anyhow::Result<WatchProps> {
        let metrics = metrics_props(self.metrics.as_deref(), self.metrics_public)?;
        let fleet = self.all || self.pid.len() > 1 || self.pid.iter().any(|&p| has_workers(p));
        let one_pid = self.pid.first().copied().filter(|_| !fleet);
        if !self.pid.is_empty() && !self.command.is_empty() {
            anyhow::bail!(
                "give one way to the process: --pid or a command after `--`, not several"
            );
        }
        let target = match (one_pid, self.inspect, self.command.is_empty()) {
            _ if fleet && !self.command.is_empty() => {
                anyhow::bail!("--all watches running processes: leave out the command after `--`")
            }
            _ if fleet => WatchTarget::Fleet(Selection {
                pids: self.pid,
                all: self.all,
                pattern: self.pattern,
                cgroup_of: self.cgroup_of,
            }),
            (Some(pid), None, true) => WatchTarget::Pid(pid),
            (None, Some(spec), true) => WatchTarget::Inspect(spec),
            (None, None, false) => WatchTarget::Launch {
                command: self.command,
                ready_timeout: self.ready_timeout,
                grace: self.grace,
            },
            (None, None, true) => anyhow::bail!(
                "say which process to watch: --pid PID (a running Node process), --all, \
                 --inspect HOST:PORT, or a command after `--`"
            ),
            _ => anyhow::bail!(
                "give one process to watch: --pid, --inspect or a command after `--`, not several"
            ),
        };
        if matches!(target, WatchTarget::Fleet(_))
            && let Some(path) = self.checkpoint.as_ref().filter(|p| !p.is_dir())
        {
            anyhow::bail!(
                "--checkpoint {} is a file; watching several processes writes one checkpoint per \
                 process: give a folder (each is leakcheck-watch-PID.ndjson in it)",
                path.display()
            );
        }
        if self.window.is_some_and(|w| w < MIN_WINDOW) {
            anyhow::bail!(
                "--window must be at least 1m: a trend needs a few of the target's own major \
                 collections, which come every few seconds to minutes"
            );
        }
        if self.duration.is_some_and(|d| d.is_zero()) {
            anyhow::bail!("-d must be above zero (or leave it out to watch until Ctrl-C)");
        }
        if self.force_gc_every.is_some_and(|d| d.is_zero()) {
            anyhow::bail!("--force-gc-every must be above zero (`30s`)");
        }
        if self.sample_interval < FINEST_SAMPLE_INTERVAL {
            anyhow::bail!(
                "--sample-interval must be at least 16KB: finer sampling costs a busy process \
                 more than a watch may"
            );
        }
        let output = self.output.into_props(self.json)?;
        if output.evidence.is_some() {
            anyhow::bail!(
                "--evidence bundles a diagnosis' two snapshots, which `watch` does not take: \
                 use `leakcheck run` on the route, or --snapshot here"
            );
        }
        Ok(WatchProps {
            target,
            allow_remote_inspector: self.allow_remote_inspector,
            duration: self.duration,
            until_decided: self.until_decided,
            force_gc_every: self.force_gc_every,
            max_pause: self.max_pause,
            sample_interval: self.sample_interval as u64,
            sites: !self.no_sites,
            snapshot: self.snapshot,
            snapshots: self.snapshots,
            memory_limit: self.memory_limit.map(|b| b as u64),
            checkpoint: self.checkpoint,
            inspector_timeout: self.inspector_timeout,
            window: match (self.window, self.duration, self.until_decided) {
                (Some(window), _, _) => Some(window),
                (None, None, false) => Some(DEFAULT_WINDOW),
                _ => None,
            },
            metrics,
            output,
            quiet: self.quiet,
        })
    }
}
