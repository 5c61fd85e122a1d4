//! `run`'s and `soak`'s flags resolved into their grouped settings, and
//! the request options `load` shares: every check of a flag's value
//! happens here, before anything starts.

use crate::cli::{RequestArgs, RunArgs};
use crate::settings::{LoadSettings, MethodSettings, RequestProps, RunSettings, TargetSettings};

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
const MAX_BODY_BYTES: u64 = 64 * 1024 * 1024;

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

impl RunArgs {
    pub fn into_props(self) -> anyhow::Result<RunSettings> {
        use crate::verdict::budget::{Asked, SERVER, schedule};
        let schedule = schedule(
            &SERVER,
            Asked {
                cycles: self.cycles,
                per_cycle: self.requests,
                resolution: self.resolution,
                max_units: self.max_requests,
                cycle_time: self.cycle_time,
            },
        )?;
        if self.connections == 0 {
            anyhow::bail!("--requests and --connections must be at least 1");
        }
        crate::limits::check_connections(self.connections)?;
        for route in &self.routes {
            check_route(route)?;
        }
        let discovery = self.discovery_settings()?;
        let jobs = jobs(self.jobs, &self.command, self.no_fresh)?;
        if self.max_time.is_some() && schedule.sequential.is_none() {
            anyhow::bail!(
                "--max-time shares the run's time among --cycles auto's budgets: drop the fixed \
                 --cycles N (or --max-time)"
            );
        }
        if self.max_time.is_some_and(|t| t.is_zero()) {
            anyhow::bail!("--max-time must be above zero (`20m`)");
        }
        let evidence = self.output.evidence.clone();
        Ok(RunSettings {
            target: TargetSettings {
                url: self.url,
                command: self.command,
                attach: self.attach.choice(),
                allow_remote: self.allow_remote,
                allow_remote_inspector: self.attach.allow_remote_inspector,
                ready_timeout: self.ready_timeout,
                inspector_timeout: self.inspector_timeout,
                grace: self.grace,
                counters: parse_counters(&self.counters)?,
                fresh: !self.no_fresh,
                heap_limit: size("--heap-limit", self.heap_limit, MIN_HEAP_LIMIT)?,
                env: Vec::new(),
            },
            load: LoadSettings {
                routes: self.routes,
                cycles: schedule.cycles,
                requests: schedule.per_cycle,
                sequential: schedule.sequential,
                resolution: schedule.resolution,
                cycle_time: schedule.cycle_time,
                connections: self.connections,
                request: self.request.into_props()?,
                soak: None,
                load_cmd: self.load_cmd,
                driver_logs: self.driver_logs,
                discovery,
                shard: self.shard,
                max_time: self.max_time,
                jobs,
            },
            method: MethodSettings {
                max_retained: self.max_retained,
                diagnose: !self.no_diagnose,
                loop_stats: !self.no_loop_stats,
                snapshots: super::output::snapshots_kept(self.snapshots, evidence.as_deref()),
                peak: !self.no_peak,
                memory_limit: size("--memory-limit", self.memory_limit, MIN_MEMORY_LIMIT)?,
                max_peak: size("--max-peak", self.max_peak, 1)?,
            },
            output: self.output.into_props(self.json)?,
            quiet: self.quiet,
        })
    }
}

impl RunArgs {
    /// Route discovery, when the routes are not given: no `--route`, no
    /// scenario or driver sending their own, and a URL without a path of
    /// its own (or a source asked for by name).
    fn discovery_settings(&self) -> anyhow::Result<Option<crate::settings::DiscoverySettings>> {
        let asked = self.discovery.asked();
        let sends_own = self.request.scenario.is_some() || self.load_cmd.is_some();
        if asked && (!self.routes.is_empty() || sends_own) {
            anyhow::bail!(
                "--route, --scenario and --load-cmd say what is sent: drop --openapi, \
                 --routes-from and --methods, or drop them"
            );
        }
        let url_has_path =
            crate::net::resolve_http(&self.url, true).is_ok_and(|http| http.path != "/");
        if !self.routes.is_empty() || sends_own || (url_has_path && !asked) {
            return Ok(None);
        }
        self.discovery.clone().into_settings().map(Some)
    }
}

/// The smallest `--heap-limit`: below 16 MB V8 cannot start Node.
const MIN_HEAP_LIMIT: u64 = 16 << 20;
/// The smallest `--memory-limit`: no Node server runs in less than 32 MB.
const MIN_MEMORY_LIMIT: u64 = 32 << 20;

/// A size flag as whole bytes, refused below `least`.
fn size(flag: &str, value: Option<f64>, least: u64) -> anyhow::Result<Option<u64>> {
    let Some(bytes) = value else {
        return Ok(None);
    };
    if !(bytes.is_finite() && bytes >= least as f64) {
        anyhow::bail!(
            "{flag} {bytes} is below {} MB: give a size such as 512MB or 2GB",
            least >> 20
        );
    }
    Ok(Some(bytes as u64))
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

/// `-j N`, or without it as many routes at once as the machine has room
/// for: a route's target and its load generator each keep a core busy, so
/// half the cores; and a target with its snapshots can take a GiB, so no
/// more than the GiBs available. Side by side needs targets leakcheck
/// starts afresh per route.
fn jobs(asked: Option<usize>, command: &[String], no_fresh: bool) -> anyhow::Result<usize> {
    let separate = !command.is_empty() && !no_fresh;
    match asked {
        Some(0) => anyhow::bail!("-j must be at least 1"),
        Some(n) if n > 1 && !separate => anyhow::bail!(
            "-j {n} checks routes side by side, each in a target of its own: give the command \
             after `--` (not an attached server) and keep fresh targets (drop --no-fresh)"
        ),
        Some(n) => Ok(n),
        None if !separate => Ok(1),
        None => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let gib = crate::platform::procfs::memory_available().map_or(1, |b| (b >> 30) as usize);
            Ok((cores / 2).min(gib).max(1))
        }
    }
}
