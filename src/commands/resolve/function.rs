//! `fn`'s settings: the module and export split and checked, the
//! schedule chosen (a call is as cheap as a request: the server's budget).

use crate::cli::FnArgs;
use crate::cli::FnRuntime;
use crate::settings::FnProps;
use crate::verdict::budget::{Asked, FUNCTION, schedule};

impl FnArgs {
    pub fn into_props(self) -> anyhow::Result<FnProps> {
        let (module, export) = match self.function.rsplit_once('#') {
            Some((module, export)) => (module.to_string(), export.to_string()),
            None => (self.function.clone(), "default".to_string()),
        };
        if module.is_empty() || export.is_empty() {
            anyhow::bail!(
                "{:?}: give MODULE#EXPORT, e.g. ./lib/cache.mjs#get (or MODULE alone for its default export)",
                self.function
            );
        }
        let names = [Some(&export), self.setup.as_ref(), self.teardown.as_ref()];
        if let Some(bad) = names
            .into_iter()
            .flatten()
            .find(|name| !is_identifier(name))
        {
            anyhow::bail!("{bad:?} is not an export name (letters, digits, _ and $)");
        }
        if self.concurrency == 0 {
            anyhow::bail!("-c must be at least 1 call in flight");
        }
        let schedule = schedule(
            &FUNCTION,
            Asked {
                cycles: self.cycles,
                per_cycle: self.calls,
                resolution: self.resolution,
                max_units: self.max_calls,
                cycle_time: self.cycle_time,
            },
        )?;
        let evidence = self.output.evidence.clone();
        Ok(FnProps {
            module,
            export,
            setup: self.setup,
            teardown: self.teardown,
            cycles: schedule.cycles,
            calls: schedule.per_cycle,
            sequential: schedule.sequential,
            resolution: schedule.resolution,
            cycle_time: schedule.cycle_time,
            concurrency: self.concurrency,
            timeout: self.timeout,
            inspector_timeout: self.inspector_timeout,
            ready_timeout: self.ready_timeout,
            grace: self.grace,
            max_retained: self.max_retained,
            diagnose: !self.no_diagnose,
            snapshots: super::output::snapshots_kept(self.snapshots, evidence.as_deref()),
            output: self.output.into_props(self.json)?,
            quiet: self.quiet,
            node: match self.runtime {
                FnRuntime::Node => {
                    std::env::var("LEAKCHECK_NODE").unwrap_or_else(|_| "node".into())
                }
                FnRuntime::Deno => "deno".into(),
                FnRuntime::Bun => "bun".into(),
            },
            node_flags: self.node_flags,
        })
    }
}

fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}
