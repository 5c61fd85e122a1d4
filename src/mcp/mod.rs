//! `leakcheck mcp`: a Model Context Protocol server on stdio (the official
//! Rust SDK, `rmcp`) whose tools wrap the CLI's commands, for coding agents
//! that just changed a cache and want to ask "does this still leak?".
//!
//! - `inputs.rs`: each tool's input, named like the CLI's flags.
//! - `child.rs`: one call runs one leakcheck child process (progress lines
//!   become notifications; cancellation is Ctrl-C).
//! - `tools.rs`: the tools, each mapping its input to the command it wraps.
//! - `summary.rs`: the compact JSON each tool returns.
//!
//! The safety rules are the CLI's, since the CLI runs: loopback only, and
//! an agent cannot ask for `--allow-remote` unless the server was started
//! with it.

mod child;
mod inputs;
mod summary;
mod tools;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServiceExt};

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

    /// Runs a measuring command (`run`, `soak`, `page`, `fn`, `watch`) with its
    /// reports in a fresh folder, and sums up its result.
    async fn measure(
        &self,
        tool: &str,
        args: Vec<String>,
        target: &[String],
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.measure_with_files(tool, args, &[], target, context)
            .await
    }

    /// `measure`, with more of the command's files (`--checkpoint`) kept in
    /// the call's folder: `(flag, file name)`.
    async fn measure_with_files(
        &self,
        tool: &str,
        mut args: Vec<String>,
        files: &[(&str, &str)],
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
        for (flag, name) in files {
            args.extend([flag.to_string(), path_arg(&dir.join(name))]);
        }
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

    /// Runs `inspect` or `diff` into a JSON file, reads it back and sums
    /// it up; the CLI's error as a tool error.
    async fn snapshot_report<T: serde::de::DeserializeOwned>(
        &self,
        tool: &str,
        mut args: Vec<String>,
        context: &RequestContext<RoleServer>,
        summarise: impl FnOnce(&T) -> serde_json::Value,
    ) -> Result<CallToolResult, ErrorData> {
        let dir = self.call_dir(tool).map_err(internal)?;
        let json = dir.join("report.json");
        args.extend(["--json".into(), path_arg(&json)]);
        let ended = self.run_child(&args, context).await?;
        if ended.code != Some(0) {
            return Ok(tool_error(ended.error_text()));
        }
        let text = std::fs::read_to_string(&json).map_err(internal)?;
        let report: T = serde_json::from_str(&text).map_err(internal)?;
        Ok(CallToolResult::structured(summarise(&report)))
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
