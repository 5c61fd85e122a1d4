//! Choosing the source and reading it: `--routes-from`'s choice, or with
//! `auto` the first source that has routes, in the order of how much each
//! says: an OpenAPI document (methods, parameter types, examples, bodies),
//! a Next.js build (every page, no methods), the live app's router
//! (methods and paths).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;

use super::plan::{RoutePlan, plan};
use super::{Declared, RouteSource, SourceChoice};
use crate::inspector::Inspector;

/// How long the target may take to serve its OpenAPI document.
const DOCUMENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the routes come from when none is given, and what is sent.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    pub from: SourceChoice,
    /// `--openapi`: a file, or a URL the target serves.
    pub openapi: Option<String>,
    /// The Next.js app or build folder (the config's `next`); otherwise
    /// the working folder and the command's folder arguments are tried.
    pub next: Option<PathBuf>,
    /// The config file and what it says.
    pub config: super::config::RoutesConfig,
    pub config_file: Option<PathBuf>,
    /// `--methods`, upper case; empty: the config's, else GET and HEAD.
    pub methods: Vec<String>,
}

/// What the sources can reach: the target's inspector (the app's router)
/// and its command (a Next.js app's folder). An OpenAPI URL is read like
/// any URL leakcheck is given: loopback only (`net::resolve_http`).
pub struct Reach<'a> {
    pub inspector: Option<&'a Inspector>,
    pub command: &'a [String],
}

/// The routes found, from where, and what became of them.
#[derive(Debug, Clone)]
pub struct Found {
    pub source: RouteSource,
    /// `express 4`, `openapi 3.1.0`, `next build`, or several joined.
    pub origin: String,
    pub declared: usize,
    pub plan: RoutePlan,
}

/// The routes of the chosen source; `None` with `auto` when no source has
/// any.
pub async fn find(settings: &Discovery, reach: Reach<'_>) -> anyhow::Result<Option<Found>> {
    let declared = match settings.from {
        SourceChoice::OpenApi => Some(openapi(settings).await?),
        SourceChoice::Next => {
            let build = next_build(settings, &reach).ok_or_else(|| {
                anyhow::anyhow!(
                    "no Next.js build found (a `.next` folder with a BUILD_ID in the working \
                     folder or the command's): run `next build`, or name the folder as \"next\" \
                     in the config file"
                )
            })?;
            Some(super::next::read(&build)?)
        }
        SourceChoice::App => Some(app(&reach).await?),
        SourceChoice::Auto => auto(settings, &reach).await?,
    };
    let Some(declared) = declared.filter(|d| !d.is_empty()) else {
        if settings.from != SourceChoice::Auto {
            anyhow::bail!(
                "the {} source declares no route: check it, or give --route",
                match settings.from {
                    SourceChoice::OpenApi => "openapi",
                    SourceChoice::Next => "next",
                    _ => "app",
                }
            );
        }
        return Ok(None);
    };
    let source = declared[0].source;
    let mut origins: Vec<String> = declared.iter().map(|d| d.origin.clone()).collect();
    origins.dedup();
    let count = declared.len();
    Ok(Some(Found {
        source,
        origin: origins.join(", "),
        declared: count,
        plan: plan(declared, &settings.methods, &settings.config),
    }))
}

async fn auto(settings: &Discovery, reach: &Reach<'_>) -> anyhow::Result<Option<Vec<Declared>>> {
    if settings.openapi.is_some() {
        return Ok(Some(openapi(settings).await?));
    }
    if let Some(build) = next_build(settings, reach) {
        return Ok(Some(super::next::read(&build)?));
    }
    if reach.inspector.is_some() {
        return Ok(Some(app(reach).await?));
    }
    Ok(None)
}

async fn app(reach: &Reach<'_>) -> anyhow::Result<Vec<Declared>> {
    let inspector = reach.inspector.ok_or_else(|| {
        anyhow::anyhow!(
            "reading the app's router needs its inspector: give the command after `--`, or \
             attach with --inspect"
        )
    })?;
    super::app::discover(inspector)
        .await
        .context("reading the app's router through the inspector failed")
}

async fn openapi(settings: &Discovery) -> anyhow::Result<Vec<Declared>> {
    let Some(location) = &settings.openapi else {
        anyhow::bail!("no OpenAPI document: give --openapi FILE|URL");
    };
    let text = if location.starts_with("http://") || location.starts_with("https://") {
        let http = crate::net::resolve_http(location, false)
            .with_context(|| format!("--openapi {location}"))?;
        let (status, body) = crate::net::http_get(http.addr, &http.path, DOCUMENT_TIMEOUT)
            .await
            .with_context(|| format!("--openapi {location}"))?;
        if status != 200 {
            anyhow::bail!("--openapi {location} answered {status}: check the document's URL");
        }
        body
    } else {
        std::fs::read_to_string(location)
            .with_context(|| format!("cannot read --openapi {location}"))?
    };
    Ok(super::openapi::parse(location, &text)?)
}

/// A Next.js build: the config's folder, else the working folder, else a
/// folder the command names (`next start app/`).
fn next_build(settings: &Discovery, reach: &Reach<'_>) -> Option<PathBuf> {
    let mut folders: Vec<PathBuf> = Vec::new();
    folders.extend(settings.next.clone());
    folders.push(PathBuf::from("."));
    folders.extend(
        reach
            .command
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.is_dir()),
    );
    folders.iter().find_map(|f| super::next::build_dir(f))
}
