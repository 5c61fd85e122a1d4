//! `page`'s settings: the page URL and every `goto` checked, the actions
//! parsed, the schedule chosen.

use crate::cli::PageArgs;
use crate::page::Action;
use crate::settings::{PageProps, PageScenario};
use crate::verdict::budget::{Asked, PAGE, schedule};

impl PageArgs {
    pub fn into_props(self) -> anyhow::Result<PageProps> {
        check_page_url(&self.url, "the page URL", self.allow_remote)?;
        let parse = |texts: &[String]| -> anyhow::Result<Vec<Action>> {
            let actions = texts
                .iter()
                .map(|a| Action::parse(a))
                .collect::<Result<Vec<_>, _>>()?;
            for action in &actions {
                if let Action::Goto(url) = action {
                    check_page_url(url, "--action goto", self.allow_remote)?;
                }
            }
            Ok(actions)
        };
        let scenario = if self.links {
            PageScenario::Links {
                max: self.max_links,
            }
        } else {
            PageScenario::Actions(parse(&self.actions)?)
        };
        let setup = parse(&self.setup)?;
        let teardown = parse(&self.teardown)?;
        let schedule = schedule(
            &PAGE,
            Asked {
                cycles: self.cycles,
                per_cycle: self.iterations,
                resolution: self.resolution,
                max_units: self.max_iterations,
                cycle_time: self.cycle_time,
            },
        )?;
        let evidence = self.output.evidence.clone();
        Ok(PageProps {
            url: self.url,
            shard: self.shard,
            scenario,
            setup,
            teardown,
            cycles: schedule.cycles,
            iterations: schedule.per_cycle,
            sequential: schedule.sequential,
            resolution: schedule.resolution,
            cycle_time: schedule.cycle_time,
            timeout: self.timeout,
            inspector_timeout: self.inspector_timeout,
            loop_stats: !self.no_loop_stats,
            chrome: self.chrome,
            connect: self.connect,
            output: self.output.into_props(self.json)?,
            max_retained: self.max_retained,
            diagnose: !self.no_diagnose,
            collections: !self.no_collections,
            snapshots: super::output::snapshots_kept(self.snapshots, evidence.as_deref()),
            grace: self.grace,
            quiet: self.quiet,
        })
    }
}

/// A page leakcheck may open: `http(s)://` on this machine (unless
/// `--allow-remote`) or a `file://`; never `javascript:` or `data:`, which
/// run code in whatever page is open and measure nothing of their own.
fn check_page_url(url: &str, what: &str, allow_remote: bool) -> anyhow::Result<()> {
    let parsed = url::Url::parse(url).map_err(|e| {
        anyhow::anyhow!("{what} {url:?} is not a URL ({e}): give http://127.0.0.1:PORT/…")
    })?;
    match parsed.scheme() {
        "file" => Ok(()),
        "http" | "https" => {
            if !allow_remote {
                crate::net::resolve_http(&url.replacen("https://", "http://", 1), false)
                    .map_err(|e| anyhow::anyhow!("{what}: {e}"))?;
            }
            Ok(())
        }
        other => anyhow::bail!(
            "{what} {url:?} is a {other}: URL; leakcheck opens http://, https:// or file:// pages \
             (put script in --action eval)"
        ),
    }
}
