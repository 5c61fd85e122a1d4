//! Output of `leakcheck load`: a human summary and a JSON report whose
//! names follow autocannon's where they exist (`requests.total`,
//! `latency.p99`, `non2xx`, `2xx`…), so existing dashboards can read it.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::load::Stop;
use crate::model::LoadReport;

/// What was asked, to print beside what happened.
pub struct LoadSetting<'a> {
    pub url: &'a str,
    pub connections: usize,
    pub stop: Stop,
    pub rate: Option<f64>,
}

/// `requests` of the JSON: responses, requests sent, responses per second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Requests {
    pub total: u64,
    pub sent: u64,
    pub average: f64,
}

/// `throughput` of the JSON: bytes read, their rate, bytes written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    pub total: u64,
    pub average: f64,
    pub written: u64,
}

/// The JSON report of `leakcheck load`, as written and as read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadJson {
    pub schema_version: u32,
    pub url: String,
    pub connections: usize,
    pub amount: Option<u64>,
    pub duration_limit_s: Option<f64>,
    pub rate: Option<f64>,
    /// Seconds the run took.
    pub duration: f64,
    pub interrupted: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stalled: bool,
    pub requests: Requests,
    /// Hung up before the answer (`--abort`).
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub aborted: u64,
    /// With `--scenario`: iterations that ran every step, those that
    /// stopped, their rate and why they stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_iterations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations_per_second: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_reasons: Vec<String>,
    pub latency: Option<crate::model::LatencySummary>,
    pub throughput: Throughput,
    pub errors: u64,
    pub errors_by_kind: std::collections::BTreeMap<String, u64>,
    pub timeouts: u64,
    pub non2xx: u64,
    #[serde(rename = "1xx")]
    pub s1xx: u64,
    #[serde(rename = "2xx")]
    pub s2xx: u64,
    #[serde(rename = "3xx")]
    pub s3xx: u64,
    #[serde(rename = "4xx")]
    pub s4xx: u64,
    #[serde(rename = "5xx")]
    pub s5xx: u64,
    pub reconnects: u64,
}

pub fn load_json(setting: &LoadSetting, report: &LoadReport) -> anyhow::Result<String> {
    let json = LoadJson {
        schema_version: 1,
        url: setting.url.to_string(),
        connections: setting.connections,
        amount: match setting.stop {
            Stop::Requests(n) => Some(n),
            Stop::Duration(_) => None,
        },
        duration_limit_s: match setting.stop {
            Stop::Duration(d) => Some(d.as_secs_f64()),
            Stop::Requests(_) => None,
        },
        rate: setting.rate,
        duration: report.duration_s,
        interrupted: report.interrupted,
        stalled: report.stalled,
        aborted: report.aborted,
        iterations: report.iterations,
        failed_iterations: report.failed_iterations,
        iterations_per_second: report.iterations_per_second,
        failure_reasons: report.failure_reasons.clone(),
        requests: Requests {
            total: report.responses,
            sent: report.requests,
            average: report.requests_per_second,
        },
        latency: report.latency_ms.clone(),
        throughput: Throughput {
            total: report.bytes_read,
            average: report.throughput_bytes_per_second,
            written: report.bytes_written,
        },
        errors: report.errors,
        errors_by_kind: report.errors_by_kind.clone(),
        timeouts: report.timeouts,
        non2xx: report.non_2xx,
        s1xx: report.status.s1xx,
        s2xx: report.status.s2xx,
        s3xx: report.status.s3xx,
        s4xx: report.status.s4xx,
        s5xx: report.status.s5xx,
        reconnects: report.reconnects,
    };
    Ok(serde_json::to_string_pretty(&json)? + "\n")
}

pub fn load_summary(setting: &LoadSetting, report: &LoadReport) -> String {
    let mut out = String::new();
    let asked = match setting.stop {
        Stop::Requests(n) => format!("{n} requests"),
        Stop::Duration(d) => format!("{:.1} s", d.as_secs_f64()),
    };
    let rate = setting
        .rate
        .map_or(String::new(), |r| format!(" at {r:.0} req/s"));
    let _ = writeln!(
        out,
        "{}: {} connections, {asked}{rate}",
        setting.url, setting.connections
    );
    if report.interrupted {
        let _ = writeln!(
            out,
            "  interrupted: the figures cover what was sent until the signal"
        );
    }
    if report.stalled {
        let _ = writeln!(
            out,
            "  stopped: every request of the last --timeout window timed out; the server stopped answering"
        );
    }
    if let (Some(done), Some(failed)) = (report.iterations, report.failed_iterations) {
        let _ = writeln!(
            out,
            "  iterations {done} complete, {failed} stopped at a step: {:.0} iterations/s",
            report.iterations_per_second.unwrap_or(0.0)
        );
        for reason in &report.failure_reasons {
            let _ = writeln!(out, "    {reason}");
        }
    }
    if report.aborted > 0 {
        let _ = writeln!(
            out,
            "  aborted    {} requests hung up before the answer (--abort)",
            report.aborted
        );
    }
    let _ = writeln!(
        out,
        "  requests   {} in {:.2} s: {:.0} req/s",
        report.requests, report.duration_s, report.requests_per_second
    );
    let s = &report.status;
    let _ = writeln!(
        out,
        "  responses  2xx {} · 3xx {} · 4xx {} · 5xx {} · other {}",
        s.s2xx,
        s.s3xx,
        s.s4xx,
        s.s5xx,
        s.s1xx + s.other
    );
    let kinds: Vec<String> = report
        .errors_by_kind
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let _ = writeln!(
        out,
        "  errors     {}{} · reconnects {}",
        report.errors,
        if kinds.is_empty() {
            String::new()
        } else {
            format!(" ({})", kinds.join(", "))
        },
        report.reconnects
    );
    match &report.latency_ms {
        Some(l) => {
            let _ = writeln!(
                out,
                "  latency    p50 {:.2} ms · p90 {:.2} · p99 {:.2} · p99.9 {:.2} · max {:.2} · mean {:.2} ± {:.2}",
                l.p50, l.p90, l.p99, l.p99_9, l.max, l.mean, l.stddev
            );
        }
        None => {
            let _ = writeln!(out, "  latency    no response arrived");
        }
    }
    let _ = writeln!(
        out,
        "  transfer   read {:.1} MB ({:.1} MB/s) · written {:.1} MB",
        report.bytes_read as f64 / crate::units::MB,
        report.throughput_bytes_per_second / crate::units::MB,
        report.bytes_written as f64 / crate::units::MB
    );
    out
}
