//! `--metrics HOST:PORT`: the watch's verdicts in the team's own
//! monitoring. Each watched process publishes its route after every drain
//! onto a `Board`; a small HTTP server renders the board in Prometheus's
//! text exposition format (version 0.0.4, which Prometheus, Grafana Agent,
//! VictoriaMetrics and OpenTelemetry's `prometheus` receiver all scrape)
//! on `GET /metrics` (`endpoint.rs` serves it).
//!
//! Names follow Prometheus's conventions: a `leakcheck_watch_` prefix,
//! base units (`_bytes`, `_seconds`, growth in bytes per second), one
//! series per process labelled `pid`; the verdict is a state set (one
//! series per verdict, 1 for the current one), and facts that are text
//! (the command line, the top growing allocation site) are `_info`
//! series whose value is 1. `deploy/prometheus/leakcheck-rules.yml` and
//! `deploy/grafana/leakcheck-dashboard.json` use only what `METRICS`
//! lists (a test holds them to it).
//!
//! Hand-written rather than a metrics crate's registry: the values are
//! already in the route, rendered on each scrape (a dozen series per
//! process), and the server answers one GET path.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::model::{AllocationSite, RouteResult, Series, VerdictKind};

/// Every metric the endpoint serves: name, type, help.
pub const METRICS: [(&str, &str, &str); 12] = [
    (
        "leakcheck_watch_up",
        "gauge",
        "1 while the process is watched, 0 once it exited or could not be attached",
    ),
    (
        "leakcheck_watch_heap_used_bytes",
        "gauge",
        "heapUsed after the process's last major collection",
    ),
    (
        "leakcheck_watch_rss_bytes",
        "gauge",
        "rss at the last reading after a major collection",
    ),
    (
        "leakcheck_watch_growth_bytes_per_second",
        "gauge",
        "the fitted growth of each series with time (heapUsed, rss...)",
    ),
    (
        "leakcheck_watch_growth_lower_bytes_per_second",
        "gauge",
        "the lower end of the growth's 95 % interval",
    ),
    (
        "leakcheck_watch_growth_upper_bytes_per_second",
        "gauge",
        "the upper end of the growth's 95 % interval",
    ),
    (
        "leakcheck_watch_verdict",
        "gauge",
        "the verdict so far as a state set: 1 for the current verdict, 0 for the others",
    ),
    (
        "leakcheck_watch_leak",
        "gauge",
        "1 when the verdict is a leak (retention, off-heap-retention, memory-exhausted...)",
    ),
    (
        "leakcheck_watch_limit_seconds",
        "gauge",
        "seconds until the growth reaches the tightest known limit, at the fitted pace",
    ),
    (
        "leakcheck_watch_readings",
        "gauge",
        "readings in the judged window",
    ),
    (
        "leakcheck_watch_last_reading_age_seconds",
        "gauge",
        "seconds since the last reading",
    ),
    (
        "leakcheck_watch_site_info",
        "gauge",
        "the allocation site that grew most while watched (value 1; labels name it)",
    ),
];

/// Every verdict, for the state set (a series per state, always present,
/// so an alert on one state does not see it appear and vanish).
const VERDICTS: [VerdictKind; 10] = [
    VerdictKind::NoRetention,
    VerdictKind::WorkingSet,
    VerdictKind::Retention,
    VerdictKind::OffHeapRetention,
    VerdictKind::CounterGrowth,
    VerdictKind::CollectionGrowth,
    VerdictKind::AllocatorFragmentation,
    VerdictKind::TimeGrowth,
    VerdictKind::MemoryExhausted,
    VerdictKind::Inconclusive,
];

/// One process as last published.
#[derive(Debug, Clone, Default)]
pub struct Entry {
    pub route: RouteResult,
    pub command: String,
    /// The top growing site from the sampling profiles so far.
    pub site: Option<AllocationSite>,
    /// Still watched.
    pub up: bool,
    /// Unix seconds of the last reading.
    pub last_reading_unix_s: Option<f64>,
    /// Unix seconds when it stopped being watched.
    pub down_since_unix_s: Option<f64>,
}

/// How long a process no longer watched stays on the board (its last
/// figures, `leakcheck_watch_up` 0): long enough for a scrape or two and an
/// alert's `for:` to see it end; then it goes, so an indefinite `--all`
/// over short-lived processes keeps a bounded board.
const DOWN_KEPT_S: f64 = 900.0;

/// What every watched process last published, by pid.
#[derive(Debug, Clone, Default)]
pub struct Board(Arc<Mutex<BTreeMap<u32, Entry>>>);

impl Board {
    /// Changes `pid`'s entry in place (a new one when it has none).
    pub fn update(&self, pid: u32, change: impl FnOnce(&mut Entry)) {
        change(self.0.lock().expect("not poisoned").entry(pid).or_default());
    }

    /// `pid`'s verdict so far, by name.
    pub fn verdict(&self, pid: u32) -> Option<&'static str> {
        let board = self.0.lock().expect("not poisoned");
        Some(board.get(&pid)?.route.verdict.as_ref()?.kind.name())
    }

    /// Marks `pid` as no longer watched, keeping its last figures.
    pub fn down(&self, pid: u32) {
        if let Some(entry) = self.0.lock().expect("not poisoned").get_mut(&pid) {
            entry.up = false;
            entry.down_since_unix_s = Some(unix_now());
        }
    }

    /// The text of every process on the board, after dropping those down
    /// for longer than `DOWN_KEPT_S`.
    pub fn render(&self, now_unix_s: f64) -> String {
        let entries = {
            let mut board = self.0.lock().expect("not poisoned");
            board.retain(|_, e| {
                e.down_since_unix_s
                    .is_none_or(|since| now_unix_s - since < DOWN_KEPT_S)
            });
            board.clone()
        };
        render(&entries, now_unix_s)
    }
}

/// The exposition text: each metric's HELP and TYPE, then its series.
pub fn render(entries: &BTreeMap<u32, Entry>, now_unix_s: f64) -> String {
    let mut families: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (pid, entry) in entries {
        for (name, labels, value) in series_of(entry, now_unix_s) {
            let line = match labels.is_empty() {
                true => format!("{name}{{pid=\"{pid}\"}} {value}"),
                false => format!("{name}{{pid=\"{pid}\",{labels}}} {value}"),
            };
            families.entry(name).or_default().push(line);
        }
    }
    let mut text = String::new();
    for (name, kind, help) in METRICS {
        let _ = writeln!(text, "# HELP {name} {help}");
        let _ = writeln!(text, "# TYPE {name} {kind}");
        for line in families.get(name).into_iter().flatten() {
            let _ = writeln!(text, "{line}");
        }
    }
    text
}

/// (metric, extra labels, value) of one process.
fn series_of(entry: &Entry, now: f64) -> Vec<(&'static str, String, String)> {
    let route = &entry.route;
    let mut out = vec![(
        "leakcheck_watch_up",
        format!("command=\"{}\"", escape(&entry.command)),
        u8::from(entry.up).to_string(),
    )];
    if let Some(last) = route.cycles.last() {
        let sample = &last.after_gc;
        out.push((
            "leakcheck_watch_heap_used_bytes",
            String::new(),
            sample.heap_used.to_string(),
        ));
        out.push((
            "leakcheck_watch_rss_bytes",
            String::new(),
            sample.rss.to_string(),
        ));
    }
    let watch = route.watch.as_ref();
    for fit in watch.map(|w| w.time_fits.as_slice()).unwrap_or_default() {
        if !matches!(fit.series, Series::Memory(_)) {
            continue;
        }
        let series = format!("series=\"{}\"", escape(fit.series.name()));
        for (name, per_hour) in [
            ("leakcheck_watch_growth_bytes_per_second", fit.per_hour),
            (
                "leakcheck_watch_growth_lower_bytes_per_second",
                fit.lower_per_hour,
            ),
            (
                "leakcheck_watch_growth_upper_bytes_per_second",
                fit.upper_per_hour,
            ),
        ] {
            out.push((name, series.clone(), number(per_hour / 3600.0)));
        }
    }
    let current = route.verdict.as_ref().map(|v| v.kind);
    for kind in VERDICTS {
        out.push((
            "leakcheck_watch_verdict",
            format!("verdict=\"{}\"", kind.name()),
            u8::from(current == Some(kind)).to_string(),
        ));
    }
    let leak = route.verdict.as_ref().is_some_and(|v| v.kind.is_leak());
    out.push((
        "leakcheck_watch_leak",
        String::new(),
        u8::from(leak).to_string(),
    ));
    if let Some(reach) = watch.and_then(|w| w.reaches.as_ref()) {
        out.push((
            "leakcheck_watch_limit_seconds",
            format!("limit=\"{}\"", escape(&reach.limit)),
            number(reach.hours * 3600.0),
        ));
    }
    out.push((
        "leakcheck_watch_readings",
        String::new(),
        route.cycles.len().to_string(),
    ));
    if let Some(at) = entry.last_reading_unix_s {
        out.push((
            "leakcheck_watch_last_reading_age_seconds",
            String::new(),
            number((now - at).max(0.0)),
        ));
    }
    if let Some(site) = &entry.site {
        out.push((
            "leakcheck_watch_site_info",
            format!(
                "function=\"{}\",url=\"{}\",line=\"{}\"",
                escape(&site.function),
                escape(&site.url),
                site.line
            ),
            "1".into(),
        ));
    }
    out
}

fn number(value: f64) -> String {
    if value.is_finite() {
        format!("{value}")
    } else {
        "NaN".into()
    }
}

/// A label value as the format wants it: backslash, quote and newline
/// escaped.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CycleResult, LimitReach, Verdict, WatchResult};

    fn leaking() -> Entry {
        let mut route = RouteResult::default();
        let mut cycle = CycleResult::default();
        cycle.after_gc.heap_used = 50_000_000;
        cycle.after_gc.rss = 90_000_000;
        route.cycles.push(cycle);
        route.verdict = Some(Verdict {
            kind: VerdictKind::Retention,
            ..Verdict::default()
        });
        route.watch = Some(WatchResult {
            reaches: Some(LimitReach {
                limit: "V8's heap limit".into(),
                limit_bytes: 4 << 30,
                hours: 2.0,
                at_unix_s: 0,
            }),
            ..WatchResult::default()
        });
        Entry {
            route,
            command: "node \"server.js\"".into(),
            site: None,
            up: true,
            last_reading_unix_s: Some(100.0),
            down_since_unix_s: None,
        }
    }

    #[test]
    fn a_leaking_process_is_one_state_its_projection_in_seconds_and_labels_escaped() {
        let entries = BTreeMap::from([(42, leaking())]);
        let text = render(&entries, 130.0);
        assert!(text.contains("leakcheck_watch_verdict{pid=\"42\",verdict=\"retention\"} 1"));
        assert!(text.contains("leakcheck_watch_verdict{pid=\"42\",verdict=\"no-retention\"} 0"));
        assert!(text.contains("leakcheck_watch_leak{pid=\"42\"} 1"));
        assert!(
            text.contains(
                "leakcheck_watch_limit_seconds{pid=\"42\",limit=\"V8's heap limit\"} 7200"
            )
        );
        assert!(text.contains("leakcheck_watch_heap_used_bytes{pid=\"42\"} 50000000"));
        assert!(text.contains("leakcheck_watch_last_reading_age_seconds{pid=\"42\"} 30"));
        assert!(text.contains(r#"command="node \"server.js\"""#), "{text}");
    }

    /// The `leakcheck_…` names a shipped file uses.
    fn names_in(text: &str) -> Vec<String> {
        let mut names = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find("leakcheck_") {
            let name: String = rest[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            rest = &rest[at + name.len()..];
            names.push(name);
        }
        names
    }

    #[test]
    fn the_shipped_rules_and_dashboard_name_only_served_metrics() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy");
        for file in [
            "prometheus/leakcheck-rules.yml",
            "grafana/leakcheck-dashboard.json",
        ] {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            let names = names_in(&text);
            assert!(names.len() >= 4, "{file}: {names:?}");
            for name in names {
                assert!(
                    METRICS.iter().any(|(m, _, _)| *m == name),
                    "{file} names {name}, which --metrics does not serve"
                );
            }
        }
        let dashboard: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root.join("grafana/leakcheck-dashboard.json")).unwrap(),
        )
        .unwrap();
        let queries = dashboard["panels"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
            .count();
        assert!(queries >= 7, "{queries}");
    }

    #[test]
    fn a_process_down_for_a_quarter_hour_leaves_the_board() {
        let board = Board::default();
        board.update(7, |entry| *entry = leaking());
        board.down(7);
        let now = unix_now();
        assert!(board.render(now).contains("leakcheck_watch_up{pid=\"7\""));
        let later = board.render(now + 60.0);
        let up = later
            .lines()
            .find(|l| l.starts_with("leakcheck_watch_up{pid=\"7\""))
            .unwrap();
        assert!(up.ends_with(" 0"), "{up}");
        assert!(!board.render(now + DOWN_KEPT_S + 1.0).contains("pid=\"7\""));
    }

    #[test]
    fn every_series_belongs_to_a_listed_metric_with_its_help_and_type() {
        let entries = BTreeMap::from([(1, leaking()), (2, Entry::default())]);
        let text = render(&entries, 0.0);
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let name = line.split('{').next().unwrap();
            assert!(METRICS.iter().any(|(m, _, _)| *m == name), "{line}");
        }
        for (name, _, _) in METRICS {
            assert!(text.contains(&format!("# TYPE {name} gauge")));
        }
    }
}
