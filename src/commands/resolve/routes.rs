//! Route discovery's settings: whether a run finds its routes at all, and
//! from where (`crate::routes`).

use crate::cli::DiscoveryArgs;
use crate::routes::SourceChoice;
use crate::routes::config::RoutesConfig;
use crate::settings::DiscoverySettings;

impl DiscoveryArgs {
    /// Whether these flags ask for a source (rather than leaving it to
    /// `auto`).
    pub fn asked(&self) -> bool {
        self.openapi.is_some() || self.routes_from.is_some() || !self.methods.is_empty()
    }

    /// The discovery settings, the config file read and checked.
    pub fn into_settings(self) -> anyhow::Result<DiscoverySettings> {
        let loaded = RoutesConfig::load(self.config.as_deref())?;
        let (config_file, config) = match loaded {
            Some((path, config)) => (Some(path), config),
            None => (None, RoutesConfig::default()),
        };
        let from = match self.routes_from.as_deref().or(config.source.as_deref()) {
            Some(text) => {
                SourceChoice::parse(text).map_err(|e| anyhow::anyhow!("--routes-from: {e}"))?
            }
            None => SourceChoice::Auto,
        };
        let methods: Vec<String> = self
            .methods
            .iter()
            .map(|m| m.trim().to_ascii_uppercase())
            .filter(|m| !m.is_empty())
            .collect();
        if let Some(bad) = methods
            .iter()
            .find(|m| !m.chars().all(|c| c.is_ascii_alphabetic()))
        {
            anyhow::bail!("--methods {bad:?} is not an HTTP method: give e.g. --methods GET,POST");
        }
        if from == SourceChoice::OpenApi && self.openapi.is_none() && config.openapi.is_none() {
            anyhow::bail!(
                "--routes-from openapi needs the document: give --openapi FILE|URL (or \"openapi\" in the config file)"
            );
        }
        Ok(DiscoverySettings {
            from,
            openapi: self.openapi.or_else(|| config.openapi.clone()),
            next: config.next.clone(),
            config,
            config_file,
            methods,
        })
    }
}

impl crate::cli::RoutesArgs {
    /// `routes` starts and reads the target as `run` would: its settings
    /// are `run`'s defaults with this command's URL, command and sources.
    pub fn into_props(self) -> anyhow::Result<crate::settings::RoutesProps> {
        use clap::Parser;
        let ready = format!("{}ms", self.ready_timeout.as_millis());
        let mut line: Vec<String> = [
            "leakcheck",
            "run",
            "--url",
            &self.url,
            "--ready-timeout",
            &ready,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        line.push("--".into());
        // `run` wants a command; without one `routes` reads no live app.
        match self.command.is_empty() {
            true => line.push("true".into()),
            false => line.extend(self.command.iter().cloned()),
        }
        let crate::cli::Command::Run(mut run) = crate::cli::Cli::try_parse_from(&line)?.command
        else {
            unreachable!("the line above names `run`");
        };
        let discovery = self.discovery.clone().into_settings()?;
        run.discovery = self.discovery;
        let mut settings = run.into_props()?;
        settings.load.discovery = Some(discovery);
        settings.target.command = self.command;
        settings.quiet = self.quiet;
        Ok(crate::settings::RoutesProps {
            run: settings,
            json: self.json,
        })
    }
}
