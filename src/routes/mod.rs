//! Every route of an app without listing them: the routes a run checks
//! when no `--route` is given, found where the app already declares them.
//!
//! | source | where the routes come from |
//! |---|---|
//! | `openapi` | an OpenAPI 3.0/3.1 or Swagger 2.0 document, JSON or YAML (`openapi.rs`) |
//! | `app` | the live app's router, read through the inspector with no change to the app: Express 4 and 5, Fastify, Koa with `@koa/router`, Hapi, Nest on either adapter (`app.rs`) |
//! | `next` | a Next.js build's manifests, both routers (`next.rs`) |
//!
//! Each source yields `Declared` routes: a method and a path pattern with
//! named parameters. `fill.rs` turns a pattern into a request template
//! (`/users/{n}`), `config.rs` lets the user give values, skip routes and
//! add headers or bodies, and `plan.rs` keeps what is safe to send
//! (`--methods`) and says why the rest is left out.

pub mod app;
pub mod config;
pub mod fill;
pub mod find;
pub mod first_requests;
pub mod next;
pub mod openapi;
pub mod plan;
pub mod shard;

use serde::Serialize;

pub use find::Discovery;

/// Where a run's routes were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RouteSource {
    /// `--route`, or the URL's own path.
    Given,
    OpenApi,
    App,
    Next,
}

impl RouteSource {
    pub fn name(self) -> &'static str {
        match self {
            RouteSource::Given => "given",
            RouteSource::OpenApi => "openapi",
            RouteSource::App => "app",
            RouteSource::Next => "next",
        }
    }
}

/// Which source `--routes-from` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SourceChoice {
    /// The first that finds routes: `--openapi` when given, a Next.js
    /// build in the target's folder, then the live app's router.
    #[default]
    Auto,
    OpenApi,
    App,
    Next,
}

impl SourceChoice {
    pub fn parse(text: &str) -> Result<SourceChoice, String> {
        match text {
            "auto" => Ok(SourceChoice::Auto),
            "openapi" => Ok(SourceChoice::OpenApi),
            "app" => Ok(SourceChoice::App),
            "next" => Ok(SourceChoice::Next),
            other => Err(format!(
                "unknown route source {other:?}: use openapi, app, next or auto"
            )),
        }
    }
}

/// A parameter of a declared route: its name, and what the declaration
/// says about its values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Param {
    pub name: String,
    pub place: ParamPlace,
    pub required: bool,
    /// `integer`, `string`, `number`, `boolean` (OpenAPI's schema type).
    pub kind: Option<String>,
    /// `uuid`, `int64`, … (OpenAPI's schema format).
    pub format: Option<String>,
    /// A value the declaration gives: an example, the default, the first
    /// of an enum.
    pub example: Option<String>,
    /// The declaration lists every value it takes (an enum): `example`
    /// is one of them, and no other is sent, key or not.
    pub enumerated: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ParamPlace {
    #[default]
    Path,
    Query,
}

/// A route as its source declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct Declared {
    /// Upper case: `GET`, `POST`.
    pub method: String,
    /// The path as declared, parameters in the source's own syntax:
    /// `/users/{id}` (OpenAPI), `/users/:id` (Express), `/items/[id]` (Next).
    pub pattern: String,
    /// Path parameters in order, then query parameters.
    pub params: Vec<Param>,
    /// A JSON body built from the declaration (OpenAPI), as a template.
    pub body: Option<String>,
    pub source: RouteSource,
    /// The framework or document that declared it: `express 4`, `openapi 3.1.0`.
    pub origin: String,
}

impl Declared {
    /// A route whose declaration says only its method and path (a live
    /// router, a Next.js manifest): its parameters are the pattern's own,
    /// each a required path parameter.
    pub fn from_path(method: &str, pattern: &str, source: RouteSource, origin: &str) -> Declared {
        let params = fill::path_params(pattern)
            .into_iter()
            .map(|name| Param {
                name,
                place: ParamPlace::Path,
                required: true,
                ..Param::default()
            })
            .collect();
        Declared {
            method: method.to_string(),
            pattern: pattern.to_string(),
            params,
            body: None,
            source,
            origin: origin.to_string(),
        }
    }
}

/// One route a run checks: its name in the report and the request that
/// exercises it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RouteSpec {
    /// `/users/{n}`, or `POST /orders` for a method other than GET.
    pub name: String,
    /// The request's path template: `/users/{n}?q=term{n}`.
    pub path: String,
    /// The method, when not the run's own (`-X`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    pub source: RouteSource,
    /// The declared pattern it was filled from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
}

impl RouteSpec {
    /// A route given by `--route` (or the URL's path).
    pub fn given(path: &str) -> RouteSpec {
        RouteSpec {
            name: path.to_string(),
            path: path.to_string(),
            method: None,
            headers: Vec::new(),
            body: None,
            source: RouteSource::Given,
            pattern: None,
        }
    }

    /// The method this route sends, given the run's.
    pub fn method_or<'a>(&'a self, run_method: &'a str) -> &'a str {
        self.method.as_deref().unwrap_or(run_method)
    }
}
