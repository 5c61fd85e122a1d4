//! `watch`'s settings: one way to reach the process, a schedule, the
//! evidence's budget.

use crate::cli::WatchArgs;
use crate::settings::{WatchProps, WatchTarget};

/// The finest sampling interval allowed: below it the profiler samples
/// so often that it costs a busy target measurably (V8's default for a
/// profiling session is 32 KB).
const FINEST_SAMPLE_INTERVAL: f64 = 16.0 * 1024.0;

impl WatchArgs {
    pub fn into_props(self) -> anyhow::Result<WatchProps> {
        let target = match (self.pid, self.inspect, self.command.is_empty()) {
            (Some(pid), None, true) => WatchTarget::Pid(pid),
            (None, Some(spec), true) => WatchTarget::Inspect(spec),
            (None, None, false) => WatchTarget::Launch {
                command: self.command,
                ready_timeout: self.ready_timeout,
                grace: self.grace,
            },
            (None, None, true) => anyhow::bail!(
                "say which process to watch: --pid PID (a running Node process), --inspect \
                 HOST:PORT, or a command after `--`"
            ),
            _ => anyhow::bail!(
                "give one process to watch: --pid, --inspect or a command after `--`, not several"
            ),
        };
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
            output,
            quiet: self.quiet,
        })
    }
}
