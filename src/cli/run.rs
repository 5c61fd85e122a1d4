//! `leakcheck run`, and the request options it shares with `load`.

use crate::report::OutputTarget;
use std::time::Duration;

use clap::Args;

use super::{Attach, AttachArgs, OutputArgs, OutputProps};
use crate::units::{parse_bytes, parse_count, parse_duration};

/// Options of the request each cycle sends.
#[derive(Debug, Args, Clone)]
pub struct RequestArgs {
    /// HTTP method (a scenario's steps name their own).
    #[arg(short = 'm', long, default_value = "GET", conflicts_with = "scenario")]
    pub method: String,
    /// Extra request header, `Name: value` (repeatable); with --scenario,
    /// sent by every step that does not set it.
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,
    /// Request body.
    #[arg(short = 'b', long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Request body read from a file.
    #[arg(long, value_name = "FILE")]
    pub body_file: Option<std::path::PathBuf>,
    /// How long one request may take before it counts as a timeout error.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Run the steps of a scenario file per virtual user instead of one
    /// request; `-a` then counts iterations (see README, "Scenarios").
    #[arg(long, value_name = "FILE", conflicts_with_all = ["body", "body_file"])]
    pub scenario: Option<std::path::PathBuf>,
    /// This fraction of requests (0 to 1) is sent and the connection closed
    /// before the answer: clients that hang up.
    #[arg(
        long,
        value_name = "FRACTION",
        default_value_t = 0.0,
        conflicts_with = "scenario"
    )]
    pub abort: f64,
}

pub use crate::verdict::budget::Cycles;

/// The schedule of `leakcheck soak`.
#[derive(Debug, Clone, PartialEq)]
pub struct SoakProps {
    pub duration: Duration,
    /// A settled reading this often.
    pub every: Duration,
    /// Requests per second; as fast as the connections go without.
    pub rate: Option<f64>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Base URL the server listens on (loopback only unless --allow-remote).
    #[arg(long)]
    pub url: String,
    /// Route to check, in order (repeatable). Default: the URL's own path.
    #[arg(long = "route", value_name = "PATH")]
    pub routes: Vec<String>,
    /// Load cycles per route, each followed by a forced collection; `auto`
    /// repeats small cycles until the verdict is decided (see README,
    /// "Sequential cycles") [default: auto, or 3 when -a is given].
    #[arg(long, value_name = "N|auto")]
    pub cycles: Option<Cycles>,
    /// Requests per cycle (exact; `20k` works) [default: 20000, or 2500
    /// with --cycles auto].
    #[arg(short = 'a', long = "requests", value_parser = parse_count)]
    pub requests: Option<u64>,
    /// The smallest leak per request that must not pass as clean: with
    /// --cycles auto a route bounded below it keeps nothing; fixed cycles
    /// too small to see it are inconclusive [default: what 3 × 20000
    /// requests resolve, 15.7 B].
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub resolution: Option<f64>,
    /// With --cycles auto: the most requests per route; when they run out,
    /// the verdict is the fixed method's over the same readings.
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub max_requests: Option<u64>,
    /// Concurrent keep-alive connections.
    #[arg(short = 'c', long, default_value_t = 10)]
    pub connections: usize,
    #[command(flatten)]
    pub request: RequestArgs,
    /// Write the JSON result to FILE (`-` for stdout; the table then goes to stderr).
    #[arg(long, value_name = "FILE", value_parser = OutputTarget::parse)]
    pub json: Option<OutputTarget>,
    /// How long one reading of the target (forced collections, counters,
    /// loop statistics) may take before the run stops with the readings so
    /// far: a blocked event loop never answers.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub inspector_timeout: Duration,
    /// How long the server may take to accept connections after launch.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub ready_timeout: Duration,
    /// How long the target has to exit after SIGTERM before SIGKILL.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub grace: Duration,
    /// Allow a URL that is not on this machine.
    #[arg(long)]
    pub allow_remote: bool,
    /// No progress output on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// A counter read at every sample, `NAME=EXPRESSION` evaluated in the
    /// target (e.g. `sessions=globalThis.sessions.size`); repeatable.
    #[arg(long = "counter", value_name = "NAME=EXPR")]
    pub counters: Vec<String>,
    /// Keep one target process for all routes instead of restarting it
    /// before each route (the default restarts: each series starts clean).
    #[arg(long)]
    pub no_fresh: bool,
    /// CI gate: retention at or below this much per request (`0.1KB`, `64B`)
    /// is reported but does not fail the run.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub max_retained: Option<f64>,
    #[command(flatten)]
    pub attach: AttachArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Do not take heap snapshots to name the holder of a retention.
    #[arg(long)]
    pub no_diagnose: bool,
    /// Do not observe event-loop delay and garbage collections during the
    /// load (they cost the target little; this measures how little).
    #[arg(long)]
    pub no_loop_stats: bool,
    /// Also write the diagnosis' two heap snapshots here (mode 0600: heaps
    /// hold request headers and secrets).
    #[arg(long, value_name = "DIR")]
    pub snapshots: Option<std::path::PathBuf>,
    /// Drive each cycle with this command (run by `sh -c`) instead of the
    /// built-in generator: k6, autocannon, Artillery or any script. It gets
    /// LEAKCHECK_URL, LEAKCHECK_ROUTE, LEAKCHECK_REQUESTS,
    /// LEAKCHECK_CONNECTIONS and LEAKCHECK_CYCLE; a non-zero exit fails the cycle.
    #[arg(long, value_name = "CMD", conflicts_with_all = ["scenario", "abort"])]
    pub load_cmd: Option<String>,
    /// Keep --load-cmd's logs in DIR (created with mode 0700); without it
    /// they go to a private temporary folder removed after the run, and the
    /// report keeps each cycle's last lines.
    #[arg(long, value_name = "DIR", requires = "load_cmd")]
    pub driver_logs: Option<std::path::PathBuf>,
    /// The command that starts the server, after `--`.
    #[arg(
        last = true,
        required_unless_present = "attach",
        value_name = "COMMAND"
    )]
    pub command: Vec<String>,
}

/// The request options, as plain values.
#[derive(Debug, Clone)]
pub struct RequestProps {
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub timeout: Duration,
    pub scenario: Option<std::path::PathBuf>,
    pub abort: f64,
    /// No template in the method, headers or body (routes aside).
    pub fixed_headers_and_body: bool,
}

impl RequestArgs {
    pub fn into_props(self) -> anyhow::Result<RequestProps> {
        let mut headers = Vec::new();
        for header in &self.headers {
            if header.contains(['\r', '\n']) {
                anyhow::bail!(
                    "-H {header:?} contains a line break, which would split the request: give one \
                     header per -H"
                );
            }
            let (name, value) = header.split_once(':').ok_or_else(|| {
                anyhow::anyhow!("header {header:?} has no colon: write it as `Name: value`")
            })?;
            if let Some(why) = crate::load::framing_header(name) {
                anyhow::bail!("-H {:?} is refused: {why}; drop it", name.trim());
            }
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
        let body = match (&self.body, &self.body_file) {
            (Some(text), _) => text.clone().into_bytes(),
            (None, Some(path)) => read_body_file(path)?,
            (None, None) => Vec::new(),
        };
        if !(0.0..1.0).contains(&self.abort) {
            anyhow::bail!(
                "--abort {} must be a fraction from 0 to below 1 (0.5 = half): at 1 every request \
                 is hung up on, no answer is read and nothing is measured",
                self.abort
            );
        }
        // Templates are checked now, not after the target started.
        let probe = crate::load::RequestSpec {
            method: self.method.to_ascii_uppercase(),
            path: "/".into(),
            headers: headers.clone(),
            body: body.clone(),
            weight: 1,
        };
        let prepared = crate::load::PreparedRequest::new(&probe, "h", None)
            .map_err(|e| anyhow::anyhow!("-H or the body: {e}"))?;
        Ok(RequestProps {
            fixed_headers_and_body: prepared.is_fixed(),
            method: self.method.to_ascii_uppercase(),
            headers,
            body,
            timeout: self.timeout,
            scenario: self.scenario,
            abort: self.abort,
        })
    }
}

/// The largest `--body-file`: a request body is sent once per request and
/// kept in memory whole; 64 MB is far beyond any API body and stops
/// `--body-file /dev/zero` from filling memory.
pub const MAX_BODY_BYTES: u64 = 64 * 1024 * 1024;

fn read_body_file(path: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .map_err(|e| anyhow::anyhow!("cannot read --body-file {}: {e}", path.display()))?;
    let mut body = Vec::new();
    file.take(MAX_BODY_BYTES + 1)
        .read_to_end(&mut body)
        .map_err(|e| anyhow::anyhow!("cannot read --body-file {}: {e}", path.display()))?;
    if body.len() as u64 > MAX_BODY_BYTES {
        anyhow::bail!(
            "--body-file {} is larger than {} MB, the largest body leakcheck sends",
            path.display(),
            MAX_BODY_BYTES >> 20
        );
    }
    Ok(body)
}

/// Refuses a route that would not make a valid request line: one without
/// a leading `/`, or with a line break or space that would split it.
pub(super) fn check_route(route: &str) -> anyhow::Result<()> {
    if !route.starts_with('/') {
        anyhow::bail!("--route {route:?} must start with `/` (e.g. --route /{route})");
    }
    if route.contains(['\r', '\n', ' ']) {
        anyhow::bail!("--route {route:?} contains a space or line break: percent-encode it");
    }
    crate::load::template::Template::parse(route, None)
        .map_err(|e| anyhow::anyhow!("--route {route:?}: {e}"))?;
    Ok(())
}

/// Everything `leakcheck run` needs, free of clap.
#[derive(Debug, Clone)]
pub struct RunProps {
    pub url: String,
    pub routes: Vec<String>,
    /// Cycles per route; with `sequential`, the most small cycles the
    /// budget allows.
    pub cycles: u32,
    pub requests: u64,
    /// `--cycles auto`: stop when the verdict is decided.
    pub sequential: Option<crate::verdict::sequential::SequentialPlan>,
    /// The smallest retention per request that must not pass as clean.
    pub resolution: f64,
    pub connections: usize,
    pub request: RequestProps,
    /// JSON, HTML and Markdown files, and the baseline to compare with.
    pub output: OutputProps,
    pub ready_timeout: Duration,
    /// How long one reading may take.
    pub inspector_timeout: Duration,
    pub grace: Duration,
    pub allow_remote: bool,
    pub quiet: bool,
    pub counters: Vec<crate::probe::Counter>,
    /// Restart the target before each route.
    pub fresh: bool,
    pub max_retained: Option<f64>,
    /// How memory is read when not through the launched target's inspector.
    pub attach: Option<Attach>,
    pub allow_remote_inspector: bool,
    /// Name the holder of a retention with heap snapshots.
    pub diagnose: bool,
    /// Observe event-loop delay and collections during each cycle's load.
    pub loop_stats: bool,
    /// A soak's schedule (`leakcheck soak`) instead of cycles.
    pub soak: Option<SoakProps>,
    pub snapshots: Option<std::path::PathBuf>,
    /// Empty when attaching to a running server.
    pub command: Vec<String>,
    pub load_cmd: Option<String>,
    /// Where --load-cmd's logs are kept; `None`: a temporary folder.
    pub driver_logs: Option<std::path::PathBuf>,
}

impl RunArgs {
    pub fn into_props(self) -> anyhow::Result<RunProps> {
        use crate::verdict::budget::{Asked, SERVER, schedule};
        let schedule = schedule(
            &SERVER,
            Asked {
                cycles: self.cycles,
                per_cycle: self.requests,
                resolution: self.resolution,
                max_units: self.max_requests,
            },
        )?;
        let (cycles, requests, sequential, resolution) = (
            schedule.cycles,
            schedule.per_cycle,
            schedule.sequential,
            schedule.resolution,
        );
        if self.connections == 0 {
            anyhow::bail!("--requests and --connections must be at least 1");
        }
        crate::limits::check_connections(self.connections)?;
        for route in &self.routes {
            check_route(route)?;
        }
        Ok(RunProps {
            url: self.url,
            routes: self.routes,
            cycles,
            requests,
            sequential,
            resolution,
            connections: self.connections,
            request: self.request.into_props()?,
            output: self.output.into_props(self.json)?,
            ready_timeout: self.ready_timeout,
            inspector_timeout: self.inspector_timeout,
            grace: self.grace,
            allow_remote: self.allow_remote,
            quiet: self.quiet,
            counters: parse_counters(&self.counters)?,
            fresh: !self.no_fresh,
            max_retained: self.max_retained,
            attach: self.attach.choice(),
            allow_remote_inspector: self.attach.allow_remote_inspector,
            diagnose: !self.no_diagnose,
            loop_stats: !self.no_loop_stats,
            soak: None,
            snapshots: self.snapshots,
            command: self.command,
            load_cmd: self.load_cmd,
            driver_logs: self.driver_logs,
        })
    }
}

pub(super) fn parse_counters(specs: &[String]) -> anyhow::Result<Vec<crate::probe::Counter>> {
    specs
        .iter()
        .map(|spec| {
            let (name, expression) = spec.split_once('=').ok_or_else(|| {
                anyhow::anyhow!("--counter {spec:?} needs NAME=EXPRESSION, e.g. sessions=globalThis.sessions.size")
            })?;
            let name = name.trim();
            if name.is_empty() || expression.trim().is_empty() {
                anyhow::bail!("--counter {spec:?} needs both a name and an expression");
            }
            if crate::model::Series::is_reserved_name(name) {
                anyhow::bail!("--counter {name:?} is the name of a memory figure or of leakcheck's own handle and listener series (active_resources.*, listeners.*): choose another name");
            }
            Ok(crate::probe::Counter { name: name.to_string(), expression: expression.trim().to_string() })
        })
        .collect()
}
