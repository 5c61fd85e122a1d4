//! `leakcheck mcp`: a Model Context Protocol server on stdio (the official
//! Rust SDK, `rmcp`) whose tools wrap the CLI's commands, for coding agents
//! that just changed a cache and want to ask "does this still leak?".
//!
//! - `inputs.rs`: each tool's input, named like the CLI's flags.
//! - `child.rs`: one call runs one leakcheck child process (progress lines
//!   become notifications; cancellation is Ctrl-C).
//! - `summary.rs`: the compact JSON each tool returns.
//!
//! The safety rules are the CLI's, since the CLI runs: loopback only, and
//! an agent cannot ask for `--allow-remote` unless the server was started
//! with it.

mod child;
mod inputs;
mod summary;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};

use inputs::{
    CheckFunction, CheckPage, CheckServer, CompareResults, DiffSnapshots, InspectSnapshot,
    SoakServer,
};

/// `leakcheck mcp`'s choices.
#[derive(Debug, Clone)]
pub struct McpProps {
    /// Whether calls may ask for a non-loopback target.
    pub allow_remote: bool,
    /// Where each call's reports go (a folder per call).
    pub results: PathBuf,
}

/// Calls whose child is still running.
static ACTIVE_CALLS: AtomicU64 = AtomicU64::new(0);
/// How long a closing server waits for those (a child's own stop takes
/// its target's grace, 5 s by default, and the writing of its reports).
const CLOSING_GRACE: std::time::Duration = std::time::Duration::from_secs(35);

/// Counts a call as active while it lives.
struct Active;

impl Active {
    fn start() -> Active {
        ACTIVE_CALLS.fetch_add(1, Ordering::Relaxed);
        Active
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        ACTIVE_CALLS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Rows of a snapshot table returned unless asked.
const DEFAULT_TOP: usize = 10;

/// Serves on stdin/stdout until the client closes them.
pub async fn serve(props: McpProps) -> anyhow::Result<()> {
    std::fs::create_dir_all(&props.results)?;
    let server = Leakcheck {
        props,
        calls: AtomicU64::new(0),
        tool_router: Leakcheck::tool_router(),
    };
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    // The client has gone; calls still running were cancelled with it.
    // Their children are given the time to stop their targets and write
    // what they measured before this process (their parent) exits.
    let deadline = std::time::Instant::now() + CLOSING_GRACE;
    while ACTIVE_CALLS.load(Ordering::Relaxed) > 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Ok(())
}

pub struct Leakcheck {
    props: McpProps,
    calls: AtomicU64,
    tool_router: ToolRouter<Leakcheck>,
}

/// A tool's failure as the agent sees it: the CLI's message.
fn tool_error(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.into())])
}

impl Leakcheck {
    /// A fresh folder for one call's reports.
    fn call_dir(&self, tool: &str) -> anyhow::Result<PathBuf> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let dir = self.props.results.join(format!("{n:04}-{tool}"));
        std::fs::create_dir_all(&dir)?;
        Ok(dir)
    }

    fn remote(&self, asked: bool, args: &mut Vec<String>) -> Result<(), CallToolResult> {
        if !asked {
            return Ok(());
        }
        if !self.props.allow_remote {
            return Err(tool_error(
                "allow_remote is refused: this MCP server was started without --allow-remote \
                 (a person must start it with `leakcheck mcp --allow-remote` to allow targets \
                 off this machine)",
            ));
        }
        args.push("--allow-remote".into());
        Ok(())
    }

    /// Runs a measuring command (`run`, `soak`, `page`, `fn`) with its
    /// reports in a fresh folder, and sums up its result.
    async fn measure(
        &self,
        tool: &str,
        mut args: Vec<String>,
        target: &[String],
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let dir = self.call_dir(tool).map_err(internal)?;
        let (json, html) = (dir.join("result.json"), dir.join("report.html"));
        args.extend([
            "--json".into(),
            path_arg(&json),
            "--html".into(),
            path_arg(&html),
        ]);
        if !target.is_empty() {
            args.push("--".into());
            args.extend(target.iter().cloned());
        }
        let ended = self.run_child(&args, context).await?;
        let Ok(text) = std::fs::read_to_string(&json) else {
            return Ok(tool_error(ended.error_text()));
        };
        let result = serde_json::from_str(&text).map_err(internal)?;
        let mut summary = summary::of_run(&result, ended.code, &json, &html);
        // A cancelled call's answer is not delivered (the client has moved
        // on); its reports hold the readings taken before the stop.
        summary["cancelled"] = ended.cancelled.into();
        Ok(CallToolResult::structured(summary))
    }

    async fn run_child(
        &self,
        args: &[String],
        context: &RequestContext<RoleServer>,
    ) -> Result<child::Ended, ErrorData> {
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| child::ProgressTo {
                peer: context.peer.clone(),
                token,
            });
        let _active = Active::start();
        child::run(args, progress, &context.ct)
            .await
            .map_err(internal)
    }

    /// Runs `inspect` or `diff` into a JSON file and reads it back.
    async fn snapshot_report<T: serde::de::DeserializeOwned>(
        &self,
        tool: &str,
        mut args: Vec<String>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Result<T, CallToolResult>, ErrorData> {
        let dir = self.call_dir(tool).map_err(internal)?;
        let json = dir.join("report.json");
        args.extend(["--json".into(), path_arg(&json)]);
        let ended = self.run_child(&args, context).await?;
        if ended.code != Some(0) {
            return Ok(Err(tool_error(ended.error_text())));
        }
        let text = std::fs::read_to_string(&json).map_err(internal)?;
        Ok(Ok(serde_json::from_str(&text).map_err(internal)?))
    }
}

fn internal(error: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(error.to_string(), None)
}

fn path_arg(path: &Path) -> String {
    path.display().to_string()
}

fn cycles_args(
    args: &mut Vec<String>,
    cycles: Option<&inputs::Cycles>,
    count_flag: &str,
    count: Option<u64>,
) {
    if let Some(cycles) = cycles {
        args.extend(["--cycles".into(), cycles.arg()]);
    }
    if let Some(count) = count {
        args.extend([count_flag.into(), count.to_string()]);
    }
}

#[tool_router]
impl Leakcheck {
    #[tool(
        description = "Check an HTTP server for memory leaks (leakcheck run): launch it, send a \
        fixed load in cycles with a forced full GC after each, and judge what each request keeps. \
        Returns `leak` (true when memory is retained per request), the verdict kind \
        (no-retention, working-set, retention, …, inconclusive), per route the figure with its \
        unit, the holder (the variable that keeps it), the storing line, its owner (your code or \
        a package) and a known upstream issue when one matches, plus the paths of the full JSON \
        and HTML reports. Takes from seconds to a few minutes; progress is reported; \
        cancelling stops the server and keeps the readings."
    )]
    async fn check_server(
        &self,
        Parameters(input): Parameters<CheckServer>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = vec!["run".to_string(), "--url".into(), input.url];
        for route in input.routes {
            args.extend(["--route".into(), route]);
        }
        cycles_args(&mut args, input.cycles.as_ref(), "-a", input.requests);
        if let Some(method) = input.method {
            args.extend(["-m".into(), method]);
        }
        for header in input.headers {
            args.extend(["-H".into(), header]);
        }
        if let Some(body) = input.body {
            args.extend(["-b".into(), body]);
        }
        if let Some(inspector) = input.attach_inspector {
            args.extend(["--inspect".into(), inspector]);
        }
        if let Err(refused) = self.remote(input.allow_remote, &mut args) {
            return Ok(refused);
        }
        self.measure("check_server", args, &input.command, &context)
            .await
    }

    #[tool(
        description = "Soak an HTTP server (leakcheck soak): a constant load on one route for \
        a duration, a settled reading at an interval, judged on the trend with time and \
        projected to the heap limit. Returns the same fields as check_server; the summary \
        carries the projection. Runs for `duration` plus start-up."
    )]
    async fn soak_server(
        &self,
        Parameters(input): Parameters<SoakServer>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = vec![
            "soak".to_string(),
            "--url".into(),
            input.url,
            "-d".into(),
            input.duration,
        ];
        if let Some(route) = input.route {
            args.extend(["--route".into(), route]);
        }
        if let Some(rate) = input.rate {
            args.extend(["-R".into(), rate.to_string()]);
        }
        if let Some(every) = input.every {
            args.extend(["--every".into(), every]);
        }
        if let Err(refused) = self.remote(input.allow_remote, &mut args) {
            return Ok(refused);
        }
        self.measure("soak_server", args, &input.command, &context)
            .await
    }

    #[tool(
        description = "Check a web page for leaks (leakcheck page): open it in headless \
        Chromium, repeat the user actions in cycles with forced GCs, and judge the growth of its \
        heap, DOM nodes and listeners per iteration. Returns the same fields as check_server, \
        per action list (or per link)."
    )]
    async fn check_page(
        &self,
        Parameters(input): Parameters<CheckPage>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = vec!["page".to_string(), input.url];
        if input.actions.is_empty() {
            args.push("--links".into());
        }
        for action in input.actions {
            args.extend(["--action".into(), action]);
        }
        for action in input.setup {
            args.extend(["--setup".into(), action]);
        }
        cycles_args(&mut args, input.cycles.as_ref(), "-n", input.iterations);
        if let Err(refused) = self.remote(input.allow_remote, &mut args) {
            return Ok(refused);
        }
        self.measure("check_page", args, &[], &context).await
    }

    #[tool(
        description = "Check a JavaScript function for leaks (leakcheck fn): call \
        MODULE#EXPORT in cycles in a fresh Node process with forced GCs, and judge what each \
        call keeps. Returns the same fields as check_server, per call."
    )]
    async fn check_function(
        &self,
        Parameters(input): Parameters<CheckFunction>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = vec!["fn".to_string(), input.function];
        if let Some(setup) = input.setup {
            args.extend(["--setup".into(), setup]);
        }
        if let Some(teardown) = input.teardown {
            args.extend(["--teardown".into(), teardown]);
        }
        cycles_args(&mut args, input.cycles.as_ref(), "-n", input.calls);
        self.measure("check_function", args, &[], &context).await
    }

    #[tool(
        description = "Summarise one V8 .heapsnapshot (leakcheck inspect): totals, the \
        classes by retained size and the largest retainers (sizes in bytes). No verdict: one \
        snapshot cannot show growth; use diff_snapshots on two."
    )]
    async fn inspect_snapshot(
        &self,
        Parameters(input): Parameters<InspectSnapshot>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = vec!["inspect".to_string(), input.snapshot];
        let report = self
            .snapshot_report("inspect_snapshot", args, &context)
            .await?;
        Ok(match report {
            Ok(report) => CallToolResult::structured(summary::of_inspect(
                &report,
                input.top.unwrap_or(DEFAULT_TOP),
            )),
            Err(error) => error,
        })
    }

    #[tool(
        description = "Compare two heap snapshots of one process (leakcheck diff): the \
        classes that grew (counts and bytes) and, for the top ones, the holder that keeps their \
        new objects with its retainer path and owner."
    )]
    async fn diff_snapshots(
        &self,
        Parameters(input): Parameters<DiffSnapshots>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = vec!["diff".to_string(), input.before, input.after];
        let report = self
            .snapshot_report("diff_snapshots", args, &context)
            .await?;
        Ok(match report {
            Ok(report) => CallToolResult::structured(summary::of_diff(
                &report,
                input.top.unwrap_or(DEFAULT_TOP),
            )),
            Err(error) => error,
        })
    }

    #[tool(
        description = "Compare a check's result with an earlier one (a baseline): per route \
        the verdict and figure before and now, `growth_removed` (it leaked before and does not \
        now: the fix worked), `leak` (it still leaks) and `regressed` (it grew past the \
        tolerance). Give the report_json paths two checks returned."
    )]
    async fn compare_results(
        &self,
        Parameters(input): Parameters<CompareResults>,
    ) -> Result<CallToolResult, ErrorData> {
        let load = |path: &str| crate::report::baseline::load_result(path);
        let (current, previous) = match (load(&input.result), load(&input.baseline)) {
            (Ok(current), Ok(previous)) => (current, previous),
            (Err(error), _) | (_, Err(error)) => return Ok(tool_error(format!("{error:#}"))),
        };
        let tolerance = input.tolerance.unwrap_or(20.0);
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            return Ok(tool_error("tolerance must be a percentage of zero or more"));
        }
        Ok(CallToolResult::structured(summary::of_comparison(
            &previous,
            &current,
            tolerance / 100.0,
            &input.baseline,
        )))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Leakcheck {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("leakcheck", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "leakcheck tells whether a Node.js server, a page or a function leaks memory \
                 under load, how much per unit, and what holds it. check_server on the route \
                 you changed answers `leak` true or false; after a fix, check again and \
                 compare_results the two report_json paths.",
            )
    }
}
