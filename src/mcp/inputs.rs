//! The tools' inputs, named like the CLI's flags; each field's doc comment
//! is the description an agent reads (unit and default included).

use schemars::JsonSchema;
use serde::Deserialize;

/// `--cycles`: a number of cycles, or `"auto"`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Cycles {
    Count(u32),
    Auto(String),
}

impl Cycles {
    pub fn arg(&self) -> String {
        match self {
            Cycles::Count(n) => n.to_string(),
            Cycles::Auto(text) => text.clone(),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckServer {
    /// Base URL the server listens on, e.g. `http://127.0.0.1:3000`. Loopback
    /// only, unless this MCP server was started with --allow-remote.
    pub url: String,
    /// Routes to check, in order, e.g. `["/users/42", "/search?q=a"]`.
    /// Default: the URL's own path, or, when it has none, every route the
    /// app declares (found through its router, an OpenAPI file or a Next.js build).
    #[serde(default)]
    pub routes: Vec<String>,
    /// The server to launch, as an argv array, e.g. `["node", "server.js"]`.
    /// leakcheck starts it with the inspector, checks it and stops it by
    /// PID. Omit it only for a server started with `--inspect` (then give
    /// `attach_inspector`).
    #[serde(default)]
    pub command: Vec<String>,
    /// Load cycles per route: a number, or `"auto"` (default) for small
    /// cycles until the verdict is decided.
    pub cycles: Option<Cycles>,
    /// Requests per cycle. Default: 20000 with a number of cycles, 2500 with `"auto"`.
    pub requests: Option<u64>,
    /// HTTP method of every request. Default `GET`.
    pub method: Option<String>,
    /// Request headers, each `Name: value`.
    #[serde(default)]
    pub headers: Vec<String>,
    /// Request body, sent as is.
    pub body: Option<String>,
    /// The inspector of a server already running (`127.0.0.1:9229`), instead of `command`.
    pub attach_inspector: Option<String>,
    /// Allow a non-loopback URL. Refused unless the MCP server itself was
    /// started with --allow-remote.
    #[serde(default)]
    pub allow_remote: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SoakServer {
    /// Base URL the server listens on (loopback, as for check_server).
    pub url: String,
    /// The one route loaded, e.g. `/items`. Default: the URL's path.
    pub route: Option<String>,
    /// The server to launch, as an argv array, e.g. `["node", "server.js"]`.
    #[serde(default)]
    pub command: Vec<String>,
    /// How long to keep the load on: `60s`, `30m`, `2h`.
    pub duration: String,
    /// Requests per second. Default: as fast as the server answers.
    pub rate: Option<f64>,
    /// Time between settled readings: `5s`. Default `30s`.
    pub every: Option<String>,
    #[serde(default)]
    pub allow_remote: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckPage {
    /// The page to open in headless Chromium, e.g. `http://127.0.0.1:8080/`.
    pub url: String,
    /// The user actions of one iteration, in order: `click SELECTOR`,
    /// `type SELECTOR TEXT`, `press KEY`, `goto URL`, `back`, `wait MS`,
    /// `wait-for SELECTOR`, `wait-idle`, `eval JS`. Empty: follow every
    /// same-origin link (`--links`).
    #[serde(default)]
    pub actions: Vec<String>,
    /// Actions run once after the page opens (a login).
    #[serde(default)]
    pub setup: Vec<String>,
    /// Cycles of iterations: a number, or `"auto"` (default).
    pub cycles: Option<Cycles>,
    /// Iterations of the actions per cycle. Default 50 (25 with `"auto"`).
    pub iterations: Option<u64>,
    #[serde(default)]
    pub allow_remote: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckFunction {
    /// The module and its export: `./lib/cache.mjs#get`, `my-package#parse`.
    pub function: String,
    /// An export run once before; its (awaited) value is every call's argument.
    pub setup: Option<String>,
    /// An export run once after, given the setup's value.
    pub teardown: Option<String>,
    /// Cycles of calls: a number, or `"auto"` (default).
    pub cycles: Option<Cycles>,
    /// Calls per cycle. Default 20000 (2500 with `"auto"`).
    pub calls: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WatchProcess {
    /// The pid of a running Node process to watch: its inspector is opened
    /// with SIGUSR1 on 127.0.0.1 and closed again at the end. Give exactly
    /// one of `pid`, `attach_inspector` and `command`.
    pub pid: Option<u32>,
    /// The inspector of a process started with `--inspect`, e.g. `127.0.0.1:9229`.
    pub attach_inspector: Option<String>,
    /// A command to start and watch, as an argv array, e.g. `["node",
    /// "server.js"]` or `["npm", "start"]`; stopped by PID at the end. Its
    /// traffic comes from elsewhere: the watch sends none.
    #[serde(default)]
    pub command: Vec<String>,
    /// How long to watch: `90s`, `10m`, `2h`. A reading comes at each major
    /// collection the process runs on its own, so a busy server gives a
    /// verdict in a minute or two, a quiet one needs longer (or `force_gc_every`).
    pub duration: String,
    /// Stop before `duration` at a leak, or at a flat heap after at least 60 s.
    #[serde(default)]
    pub until_decided: bool,
    /// Force a full collection this often, e.g. `30s`, to add readings to
    /// a quiet heap; each is a pause of the target (at most 50 ms, else
    /// none is forced). Default: none.
    pub force_gc_every: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectSnapshot {
    /// Path of a V8 `.heapsnapshot` file, of any size.
    pub snapshot: String,
    /// Rows of each table returned. Default 10.
    pub top: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffSnapshots {
    /// The earlier `.heapsnapshot` of a process.
    pub before: String,
    /// The later `.heapsnapshot` of the same process.
    pub after: String,
    /// Rows of each table returned. Default 10.
    pub top: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareResults {
    /// The new result: a `report_json` path a check returned (or `--json FILE`).
    pub result: String,
    /// The result before the change, to compare against.
    pub baseline: String,
    /// Growth tolerated against the baseline, in percent. Default 20.
    pub tolerance: Option<f64>,
}
