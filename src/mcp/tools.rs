//! The tools: each maps its input to the CLI command it wraps and
//! returns the compact answer of `summary.rs`.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};

use super::inputs::{
    CheckFunction, CheckPage, CheckServer, CompareResults, DiffSnapshots, InspectSnapshot,
    SoakServer, WatchProcess,
};
use super::{DEFAULT_TOP, Leakcheck, cycles_args, summary, tool_error};

#[tool_router(vis = "pub(super)")]
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
        description = "Watch a live Node process under its own traffic (leakcheck watch): \
        attach to a running one (pid or inspector) or start a command, send no load, read the \
        heap after each major collection the process runs on its own, and judge the trend with \
        time. Returns the same fields as check_server for the one process (the figure per \
        request it served, when counted), its `projection` to the tightest memory limit, and \
        the allocation sites that grew. Runs for `duration`; the process is left as it was \
        found (a started command is stopped)."
    )]
    async fn watch_process(
        &self,
        Parameters(input): Parameters<WatchProcess>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = vec!["watch".to_string(), "-d".into(), input.duration];
        if let Some(pid) = input.pid {
            args.extend(["--pid".into(), pid.to_string()]);
        }
        if let Some(inspector) = input.attach_inspector {
            args.extend(["--inspect".into(), inspector]);
        }
        if input.until_decided {
            args.push("--until-decided".into());
        }
        if let Some(every) = input.force_gc_every {
            args.extend(["--force-gc-every".into(), every]);
        }
        let files = [("--checkpoint", "watch.ndjson")];
        self.measure_with_files("watch_process", args, &files, &input.command, &context)
            .await
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
        let top = input.top.unwrap_or(DEFAULT_TOP);
        self.snapshot_report("inspect_snapshot", args, &context, |report| {
            summary::of_inspect(report, top)
        })
        .await
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
        let top = input.top.unwrap_or(DEFAULT_TOP);
        self.snapshot_report("diff_snapshots", args, &context, |report| {
            summary::of_diff(report, top)
        })
        .await
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
