//! Where the routes come from when no `--route` is given (`run`, `soak`),
//! and `leakcheck routes`, which lists them without checking any.

use clap::Args;

/// The route sources and what is sent to the routes found.
#[derive(Debug, Args, Clone, Default)]
pub struct DiscoveryArgs {
    /// An OpenAPI (3.0, 3.1) or Swagger 2.0 document, JSON or YAML: a file,
    /// or a URL the target serves (`http://127.0.0.1:3000/openapi.json`).
    #[arg(long, value_name = "FILE|URL")]
    pub openapi: Option<String>,
    /// Where the routes come from without --route: the OpenAPI document,
    /// the live app's router (Express, Fastify, Koa, Hapi, Nest), a Next.js
    /// build's manifests, or the first of those that has routes [default:
    /// auto, when no --route is given and the URL has no path].
    #[arg(long, value_name = "openapi|app|next|auto")]
    pub routes_from: Option<String>,
    /// The routes config file (values, headers, bodies, skips) [default:
    /// leakcheck.json in the working folder, when there is one].
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
    /// Methods of the found routes that are sent, comma-separated
    /// [default: GET,HEAD: a check sends each route thousands of times,
    /// and POST, PUT or DELETE change the app's data].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub methods: Vec<String>,
}

/// `leakcheck routes`: the routes a run would check, without a check.
#[derive(Debug, Args)]
pub struct RoutesArgs {
    /// Base URL the server listens on (loopback only).
    #[arg(long)]
    pub url: String,
    #[command(flatten)]
    pub discovery: DiscoveryArgs,
    /// Write the list as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE", value_parser = crate::report::OutputTarget::parse)]
    pub json: Option<crate::report::OutputTarget>,
    /// How long the server may take to accept connections after launch.
    #[arg(long, default_value = "30s", value_parser = crate::units::parse_duration)]
    pub ready_timeout: std::time::Duration,
    /// No progress output on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// The command that starts the server, after `--` (needed to read the
    /// app's router; an OpenAPI file or a Next.js build needs none).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}
