//! `bisect`'s settings.

use anyhow::bail;

use crate::cli::BisectArgs;
use crate::settings::{BisectProps, BisectRange, Install};

impl BisectArgs {
    pub fn into_props(self) -> anyhow::Result<BisectProps> {
        let range = match (self.good, self.bad, self.package, self.node) {
            (Some(good), Some(bad), None, None) => BisectRange::Commits { good, bad },
            (None, None, Some(name), None) => BisectRange::Package {
                name,
                from: self.from,
                to: self.to,
            },
            (None, None, None, Some(range)) => {
                let Some((from, to)) = range.split_once("..") else {
                    bail!("--node takes FROM..TO, e.g. --node 20.15.0..20.16.0 (got {range:?})");
                };
                BisectRange::Node {
                    from: from.trim_start_matches('v').to_string(),
                    to: to.trim_start_matches('v').to_string(),
                }
            }
            _ => bail!(
                "say what to bisect: --good REF --bad REF (commits), --package NAME (its \
                 versions), or --node FROM..TO (Node releases)"
            ),
        };
        let install = match (self.install, self.no_install) {
            (_, true) => Install::None,
            (Some(command), false) => Install::Command(command),
            (None, false) => Install::Lockfile,
        };
        Ok(BisectProps {
            range,
            install,
            check: self.check,
            use_cache: !self.no_cache,
            json: self.json,
            markdown: self.markdown,
            quiet: self.quiet,
        })
    }
}
