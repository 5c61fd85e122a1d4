//! What a load run measured, in constant memory: counters and one HDR
//! histogram of latencies, whatever the number of requests.

use std::time::Duration;

use crate::model::{LatencySummary, LoadReport, StatusCounts};
use hdrhistogram::Histogram;

/// Latencies are recorded in microseconds, from 1 µs up to this bound; a
/// longer one is clamped (it is a timeout for any sensible `--timeout`).
const LATENCY_MAX_US: u64 = 3_600_000_000;
/// Three significant digits: 0.1 % resolution, about 200 KB per histogram.
const LATENCY_SIGNIFICANT_DIGITS: u8 = 3;

/// Why a request ended without a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    ConnectRefused,
    Connect,
    Reset,
    Timeout,
    Malformed,
    /// The server closed the connection in the middle of a response.
    Closed,
    Io,
    /// A scenario step could not be sent: a capture it uses found nothing.
    Capture,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 8] = [
        ErrorKind::ConnectRefused,
        ErrorKind::Connect,
        ErrorKind::Reset,
        ErrorKind::Timeout,
        ErrorKind::Malformed,
        ErrorKind::Closed,
        ErrorKind::Io,
        ErrorKind::Capture,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::ConnectRefused => "connect_refused",
            ErrorKind::Connect => "connect",
            ErrorKind::Reset => "reset",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Malformed => "malformed",
            ErrorKind::Closed => "closed",
            ErrorKind::Io => "io",
            ErrorKind::Capture => "capture",
        }
    }
}

/// Running totals of one load run, updated by the hot loop.
pub struct LoadStats {
    latency_us: Histogram<u64>,
    /// Responses by status class: index 1 is 1xx … 5 is 5xx, 0 anything else.
    status_classes: [u64; 6],
    errors: [u64; ErrorKind::ALL.len()],
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub reconnects: u64,
    /// Requests sent on a connection closed before the answer (`--abort`).
    pub aborted: u64,
    /// Scenario iterations that ran every step, and those that failed.
    pub iterations: u64,
    pub failed_iterations: u64,
    /// The first distinct reasons scenario iterations failed.
    reasons: Vec<String>,
}

/// Distinct failure reasons kept for the report: enough to see a pattern.
const MAX_REASONS: usize = 5;

impl Default for LoadStats {
    fn default() -> Self {
        LoadStats {
            latency_us: Histogram::new_with_bounds(1, LATENCY_MAX_US, LATENCY_SIGNIFICANT_DIGITS)
                .expect("constant histogram bounds are valid"),
            status_classes: [0; 6],
            errors: [0; ErrorKind::ALL.len()],
            bytes_read: 0,
            bytes_written: 0,
            reconnects: 0,
            aborted: 0,
            iterations: 0,
            failed_iterations: 0,
            reasons: Vec::new(),
        }
    }
}

impl LoadStats {
    pub fn record_response(&mut self, status: u16, latency: Duration) {
        let class = usize::from(status / 100);
        self.status_classes[if (1..=5).contains(&class) { class } else { 0 }] += 1;
        self.latency_us
            .saturating_record((latency.as_micros() as u64).max(1));
    }

    pub fn record_error(&mut self, kind: ErrorKind) {
        self.errors[kind as usize] += 1;
    }

    /// A scenario iteration that stopped at a step, with why.
    pub fn record_failed_iteration(&mut self, reason: String) {
        self.failed_iterations += 1;
        if self.reasons.len() < MAX_REASONS && !self.reasons.contains(&reason) {
            self.reasons.push(reason);
        }
    }

    pub fn responses(&self) -> u64 {
        self.status_classes.iter().sum()
    }

    pub fn error_count(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Freezes the totals into the serialisable summary.
    /// `scenario` says whether the unit of work was an iteration.
    pub fn summarise(&self, elapsed: Duration, interrupted: bool, scenario: bool) -> LoadReport {
        let seconds = elapsed.as_secs_f64();
        let per_second = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        let h = &self.latency_us;
        let ms = |us: u64| us as f64 / 1000.0;
        let responses = self.responses();
        let latency = (responses > 0).then(|| LatencySummary {
            mean: h.mean() / 1000.0,
            stddev: h.stdev() / 1000.0,
            min: ms(h.min()),
            p50: ms(h.value_at_quantile(0.50)),
            p90: ms(h.value_at_quantile(0.90)),
            p99: ms(h.value_at_quantile(0.99)),
            p99_9: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
        });
        let [other, s1, s2, s3, s4, s5] = self.status_classes;
        LoadReport {
            duration_s: seconds,
            interrupted,
            stalled: false,
            time_bound: false,
            requests: responses + self.error_count() + self.aborted,
            responses,
            aborted: self.aborted,
            iterations: scenario.then_some(self.iterations),
            failed_iterations: scenario.then_some(self.failed_iterations),
            iterations_per_second: scenario.then(|| per_second(self.iterations)),
            failure_reasons: self.reasons.clone(),
            dialogs: 0,
            ended_away: 0,
            ended_away_at: None,
            returned_to_start: 0,
            requests_per_second: per_second(responses),
            status: StatusCounts {
                s1xx: s1,
                s2xx: s2,
                s3xx: s3,
                s4xx: s4,
                s5xx: s5,
                other,
            },
            non_2xx: responses - s2,
            errors: self.error_count(),
            errors_by_kind: ErrorKind::ALL
                .iter()
                .filter(|k| self.errors[**k as usize] > 0)
                .map(|k| (k.name().to_string(), self.errors[*k as usize]))
                .collect(),
            timeouts: self.errors[ErrorKind::Timeout as usize],
            reconnects: self.reconnects,
            bytes_read: self.bytes_read,
            bytes_written: self.bytes_written,
            throughput_bytes_per_second: per_second(self.bytes_read),
            latency_ms: latency,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_classes_errors_and_percentiles() {
        let mut stats = LoadStats::default();
        for ms in 1..=100 {
            stats.record_response(200, Duration::from_millis(ms));
        }
        stats.record_response(503, Duration::from_millis(1));
        stats.record_error(ErrorKind::Timeout);
        let report = stats.summarise(Duration::from_secs(2), false, false);
        assert_eq!(report.requests, 102);
        assert_eq!(report.responses, 101);
        assert_eq!(report.non_2xx, 1);
        assert_eq!(report.status.s5xx, 1);
        assert_eq!(report.timeouts, 1);
        assert_eq!(report.errors_by_kind["timeout"], 1);
        let latency = report.latency_ms.unwrap();
        assert!((latency.p50 - 50.0).abs() < 1.0, "p50 {}", latency.p50);
        assert!((latency.max - 100.0).abs() < 0.2);
        assert!((report.requests_per_second - 50.5).abs() < 1e-9);
    }

    #[test]
    fn no_response_means_no_latency() {
        let mut stats = LoadStats::default();
        stats.record_error(ErrorKind::ConnectRefused);
        let report = stats.summarise(Duration::from_millis(10), false, false);
        assert!(report.latency_ms.is_none());
        assert_eq!(report.errors, 1);
    }
}
