//! The command line (clap derive). Nothing below this module sees a clap
//! type: each subcommand's arguments become a plain "props" struct.

use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::units::{parse_bytes, parse_count, parse_duration};

#[derive(Debug, Parser)]
#[command(
    name = "leakcheck",
    version,
    about = "Checks whether a Node.js server keeps memory under load, how much per request, and what holds it.",
    after_help = "Exit codes: 0 no retention, 1 retention found, 2 error."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start a server, load it in cycles with forced collections between them, and judge the growth.
    Run(Box<RunArgs>),
    /// Send an exact or timed HTTP/1.1 load and report throughput, latency and errors.
    Load(LoadArgs),
    /// Take one memory reading of a running target, optionally after a settled full collection.
    Sample(SampleArgs),
    /// Stream a heap snapshot from a running Node process to a file (mode 0600).
    Snapshot(SnapshotArgs),
    /// Render a saved JSON result again (HTML, Markdown), optionally against a baseline.
    Report(ReportArgs),
    /// Summarise one heap snapshot: totals, classes, largest retainers.
    Inspect(InspectArgs),
    /// Compare two heap snapshots of one process and name what holds the growth.
    Diff(DiffArgs),
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A V8 .heapsnapshot file, of any size.
    pub snapshot: std::path::PathBuf,
    /// Rows per table.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Write the report as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The earlier snapshot.
    pub before: std::path::PathBuf,
    /// The later snapshot of the same process.
    pub after: std::path::PathBuf,
    /// Rows per table.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Write the report as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
}

/// Where results go besides the terminal, and what they are compared with.
#[derive(Debug, Args, Clone, Default)]
pub struct OutputArgs {
    /// Write a self-contained HTML report with charts to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<String>,
    /// Write a Markdown summary to FILE (`-` for stdout), e.g. $GITHUB_STEP_SUMMARY.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<String>,
    /// Compare with a previous result (a `--json` file) and exit 1 when a route regresses.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<String>,
    /// How much growth against --baseline is tolerated, in percent.
    #[arg(long, value_name = "PERCENT", default_value_t = 20.0)]
    pub tolerance: f64,
}

/// Output choices as plain values.
#[derive(Debug, Clone, Default)]
pub struct OutputProps {
    pub json: Option<String>,
    pub html: Option<String>,
    pub markdown: Option<String>,
    pub baseline: Option<String>,
    /// A fraction (0.2 for 20 %).
    pub tolerance: f64,
}

impl OutputArgs {
    pub fn into_props(self, json: Option<String>) -> anyhow::Result<OutputProps> {
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            anyhow::bail!("--tolerance must be a percentage of zero or more");
        }
        Ok(OutputProps {
            json,
            html: self.html,
            markdown: self.markdown,
            baseline: self.baseline,
            tolerance: self.tolerance / 100.0,
        })
    }
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result written by `leakcheck run --json FILE`.
    pub result: String,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Write the (compared) result as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
}

/// How to reach a target leakcheck did not start (or how to read one it did).
#[derive(Debug, Args, Clone, Default)]
pub struct AttachArgs {
    #[command(flatten)]
    pub choice: AttachChoice,
    /// Allow attaching to an inspector that is not on this machine.
    #[arg(long)]
    pub allow_remote_inspector: bool,
}

/// At most one way of reaching the target.
#[derive(Debug, Args, Clone, Default)]
#[group(id = "attach", multiple = false)]
pub struct AttachChoice {
    /// Attach to a running inspector: `HOST:PORT` (its /json/list is read) or a `ws://` URL.
    #[arg(long, value_name = "HOST:PORT|ws://URL")]
    pub inspect: Option<String>,
    /// Open the inspector of a running Node process with SIGUSR1 and attach on 127.0.0.1.
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
    /// Read memory through the app's own `/mem` and `/gc` endpoints under this
    /// path (`/` for the seed's server) or URL.
    #[arg(long, value_name = "PATH|URL")]
    pub endpoints: Option<String>,
    /// Read rss from /proc/PID (any language; no forced collection).
    #[arg(long = "proc", value_name = "PID")]
    pub proc_pid: Option<u32>,
}

/// The attach choice, as a plain value.
#[derive(Debug, Clone, PartialEq)]
pub enum Attach {
    Inspect(String),
    Pid(u32),
    Endpoints(String),
    Proc(u32),
}

impl AttachArgs {
    pub fn choice(&self) -> Option<Attach> {
        let this = &self.choice;
        if let Some(spec) = &this.inspect {
            Some(Attach::Inspect(spec.clone()))
        } else if let Some(pid) = this.pid {
            Some(Attach::Pid(pid))
        } else if let Some(base) = &this.endpoints {
            Some(Attach::Endpoints(base.clone()))
        } else {
            this.proc_pid.map(Attach::Proc)
        }
    }
}

#[derive(Debug, Args)]
pub struct SampleArgs {
    #[command(flatten)]
    pub attach: AttachArgs,
    /// Base URL of the app, for `--endpoints PATH`.
    #[arg(long)]
    pub url: Option<String>,
    /// Settle a full collection first (repeated until heapUsed stops falling).
    #[arg(long)]
    pub gc: bool,
    /// A counter, `NAME=EXPRESSION` (inspector only; repeatable).
    #[arg(long = "counter", value_name = "NAME=EXPR")]
    pub counters: Vec<String>,
    /// Write the reading as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub attach: AttachArgs,
    /// Where to write the snapshot (created with mode 0600).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: std::path::PathBuf,
    /// Settle a full collection first, so the file holds live objects only.
    #[arg(long)]
    pub gc: bool,
}

/// `leakcheck sample`, free of clap.
#[derive(Debug, Clone)]
pub struct SampleProps {
    pub attach: Attach,
    pub url: Option<String>,
    pub gc: bool,
    pub counters: Vec<crate::probe::Counter>,
    pub json: Option<String>,
    pub allow_remote_inspector: bool,
}

impl SampleArgs {
    pub fn into_props(self) -> anyhow::Result<SampleProps> {
        let attach = self.attach.choice().ok_or_else(|| {
            anyhow::anyhow!("say which process to read: --inspect HOST:PORT, --pid PID, --endpoints URL or --proc PID")
        })?;
        Ok(SampleProps {
            attach,
            url: self.url,
            gc: self.gc,
            counters: parse_counters(&self.counters)?,
            json: self.json,
            allow_remote_inspector: self.attach.allow_remote_inspector,
        })
    }
}

/// `leakcheck snapshot`, free of clap.
#[derive(Debug, Clone)]
pub struct SnapshotProps {
    pub attach: Attach,
    pub output: std::path::PathBuf,
    pub gc: bool,
    pub allow_remote_inspector: bool,
}

impl SnapshotArgs {
    pub fn into_props(self) -> anyhow::Result<SnapshotProps> {
        let attach = match self.attach.choice() {
            Some(a @ (Attach::Inspect(_) | Attach::Pid(_))) => a,
            _ => anyhow::bail!(
                "a snapshot needs the inspector: give --inspect HOST:PORT or --pid PID"
            ),
        };
        Ok(SnapshotProps {
            attach,
            output: self.output,
            gc: self.gc,
            allow_remote_inspector: self.attach.allow_remote_inspector,
        })
    }
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Target URL (loopback only unless --allow-remote).
    pub url: String,
    /// Concurrent keep-alive connections.
    #[arg(short = 'c', long, default_value_t = 10)]
    pub connections: usize,
    /// Exact number of requests (`20k` works); the default when neither -a nor -d is given is 10000.
    #[arg(short = 'a', long = "requests", value_parser = parse_count, conflicts_with = "duration")]
    pub requests: Option<u64>,
    /// Send for this long instead of a fixed count (`10s`, `1m`).
    #[arg(short = 'd', long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Constant arrival rate in requests per second across all connections;
    /// latency is then measured from each request's scheduled time.
    #[arg(short = 'R', long)]
    pub rate: Option<f64>,
    /// Extra path to rotate through, `PATH` or `PATH=WEIGHT` (repeatable); the URL's path is the first.
    #[arg(long = "route", value_name = "PATH[=WEIGHT]")]
    pub routes: Vec<String>,
    #[command(flatten)]
    pub request: RequestArgs,
    /// Write the JSON report to FILE (`-` for stdout; the summary then goes to stderr).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Allow a URL that is not on this machine.
    #[arg(long)]
    pub allow_remote: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Everything `leakcheck load` needs, free of clap.
#[derive(Debug, Clone)]
pub struct LoadProps {
    pub url: String,
    pub connections: usize,
    pub stop: crate::load::Stop,
    pub rate: Option<f64>,
    /// Extra routes with their weights.
    pub routes: Vec<(String, u32)>,
    pub request: RequestProps,
    pub json: Option<String>,
    pub allow_remote: bool,
    pub quiet: bool,
}

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
            if !path.starts_with('/') {
                anyhow::bail!("--route {route:?} must start with `/`");
            }
            routes.push((path, weight.max(1)));
        }
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

/// Options of the request each cycle sends.
#[derive(Debug, Args, Clone)]
pub struct RequestArgs {
    /// HTTP method.
    #[arg(short = 'm', long, default_value = "GET")]
    pub method: String,
    /// Extra request header, `Name: value` (repeatable).
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
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Base URL the server listens on (loopback only unless --allow-remote).
    #[arg(long)]
    pub url: String,
    /// Route to check, in order (repeatable). Default: the URL's own path.
    #[arg(long = "route", value_name = "PATH")]
    pub routes: Vec<String>,
    /// Load cycles per route, each followed by a forced collection.
    #[arg(long, default_value_t = 3)]
    pub cycles: u32,
    /// Requests per cycle (exact; `20k` works).
    #[arg(short = 'a', long = "requests", default_value = "20000", value_parser = parse_count)]
    pub requests: u64,
    /// Concurrent keep-alive connections.
    #[arg(short = 'c', long, default_value_t = 10)]
    pub connections: usize,
    #[command(flatten)]
    pub request: RequestArgs,
    /// Write the JSON result to FILE (`-` for stdout; the table then goes to stderr).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
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
    /// Also write the diagnosis' two heap snapshots here (mode 0600: heaps
    /// hold request headers and secrets).
    #[arg(long, value_name = "DIR")]
    pub snapshots: Option<std::path::PathBuf>,
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
}

impl RequestArgs {
    pub fn into_props(self) -> anyhow::Result<RequestProps> {
        let mut headers = Vec::new();
        for header in &self.headers {
            let (name, value) = header.split_once(':').ok_or_else(|| {
                anyhow::anyhow!("header {header:?} has no colon: write it as `Name: value`")
            })?;
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
        let body = match (&self.body, &self.body_file) {
            (Some(text), _) => text.clone().into_bytes(),
            (None, Some(path)) => std::fs::read(path)
                .map_err(|e| anyhow::anyhow!("cannot read --body-file {}: {e}", path.display()))?,
            (None, None) => Vec::new(),
        };
        Ok(RequestProps {
            method: self.method.to_ascii_uppercase(),
            headers,
            body,
            timeout: self.timeout,
        })
    }
}

/// Everything `leakcheck run` needs, free of clap.
#[derive(Debug, Clone)]
pub struct RunProps {
    pub url: String,
    pub routes: Vec<String>,
    pub cycles: u32,
    pub requests: u64,
    pub connections: usize,
    pub request: RequestProps,
    /// JSON, HTML and Markdown files, and the baseline to compare with.
    pub output: OutputProps,
    pub ready_timeout: Duration,
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
    pub snapshots: Option<std::path::PathBuf>,
    /// Empty when attaching to a running server.
    pub command: Vec<String>,
}

impl RunArgs {
    pub fn into_props(self) -> anyhow::Result<RunProps> {
        if self.cycles == 0 {
            anyhow::bail!("--cycles must be at least 1 (the method needs 3 to tell a trend)");
        }
        if self.requests == 0 || self.connections == 0 {
            anyhow::bail!("--requests and --connections must be at least 1");
        }
        Ok(RunProps {
            url: self.url,
            routes: self.routes,
            cycles: self.cycles,
            requests: self.requests,
            connections: self.connections,
            request: self.request.into_props()?,
            output: self.output.into_props(self.json)?,
            ready_timeout: self.ready_timeout,
            grace: self.grace,
            allow_remote: self.allow_remote,
            quiet: self.quiet,
            counters: parse_counters(&self.counters)?,
            fresh: !self.no_fresh,
            max_retained: self.max_retained,
            attach: self.attach.choice(),
            allow_remote_inspector: self.attach.allow_remote_inspector,
            diagnose: !self.no_diagnose,
            snapshots: self.snapshots,
            command: self.command,
        })
    }
}

fn parse_counters(specs: &[String]) -> anyhow::Result<Vec<crate::probe::Counter>> {
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
            Ok(crate::probe::Counter { name: name.to_string(), expression: expression.trim().to_string() })
        })
        .collect()
}

/// `leakcheck report`, free of clap.
#[derive(Debug, Clone)]
pub struct ReportProps {
    pub result: String,
    pub output: OutputProps,
}

impl ReportArgs {
    pub fn into_props(self) -> anyhow::Result<ReportProps> {
        let output = self.output.into_props(self.json)?;
        if output.json.is_none()
            && output.html.is_none()
            && output.markdown.is_none()
            && output.baseline.is_none()
        {
            anyhow::bail!(
                "say what to render: --html FILE, --markdown FILE, --json FILE or --baseline FILE"
            );
        }
        Ok(ReportProps {
            result: self.result,
            output,
        })
    }
}
