//! `load`'s settings.

use crate::cli::LoadArgs;
use crate::settings::LoadProps;

/// Requests when `leakcheck load` is given neither -a nor -d.
const DEFAULT_LOAD_REQUESTS: u64 = 10_000;

impl LoadArgs {
    pub fn into_props(self) -> anyhow::Result<LoadProps> {
        if self.connections == 0 {
            anyhow::bail!("--connections must be at least 1");
        }
        if let Some(rate) = self.rate
            && !(rate.is_finite() && rate > 0.0)
        {
            anyhow::bail!("--rate must be a positive number of requests per second");
        }
        let stop = match (self.requests, self.duration) {
            (Some(0), _) => anyhow::bail!("-a/--requests must be at least 1"),
            (Some(n), _) => crate::load::Stop::Requests(n),
            (None, Some(d)) => crate::load::Stop::Duration(d),
            (None, None) => crate::load::Stop::Requests(DEFAULT_LOAD_REQUESTS),
        };
        let mut routes = Vec::new();
        for route in &self.routes {
            let (path, weight) = match route.rsplit_once('=') {
                Some((path, weight)) => {
                    let weight: u32 = weight.parse().map_err(|_| {
                        anyhow::anyhow!(
                            "--route {route:?}: the weight after `=` must be a whole number"
                        )
                    })?;
                    (path.to_string(), weight)
                }
                None => (route.clone(), 1),
            };
            super::run::check_route(&path)?;
            routes.push((path, weight.max(1)));
        }
        crate::limits::check_connections(self.connections)?;
        Ok(LoadProps {
            url: self.url,
            connections: self.connections,
            stop,
            rate: self.rate,
            routes,
            request: self.request.into_props()?,
            json: self.json,
            allow_remote: self.allow_remote,
            quiet: self.quiet,
        })
    }
}
