//! A soak's projection: how fast the settled heap grows per hour at the
//! soak's pace, and when it reaches the heap limit at that rate.
//!
//! The growth per hour is the verdict's fitted heapUsed bytes per request
//! times the requests the soak sent per hour; a straight line, which is
//! what a steady per-request leak makes. It is projected only when the
//! verdict found retention: a slope that the rules call noise is not
//! extrapolated over hours (that would be a false alarm with a date on it).

use crate::model::{RouteResult, Series, TimeDecision, VerdictKind};
use crate::units::{MB, per_request};

const GB: f64 = 1024.0 * MB;
const HOUR_S: f64 = 3600.0;

/// The projection of a soaked route.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    pub growth_bytes_per_hour: f64,
    pub hours_to_limit: Option<f64>,
    pub text: String,
}

/// Projects `route`'s settled heap after `requests` over `elapsed_s`
/// against `limit` (`heap_size_limit`).
pub fn project(
    route: &RouteResult,
    elapsed_s: f64,
    requests: u64,
    limit: Option<u64>,
) -> Projection {
    let verdict = route.verdict.as_ref();
    let slope = verdict
        .and_then(|v| v.fits.iter().find(|f| f.metric == Series::HEAP_USED))
        .map_or(0.0, |f| f.slope_bytes_per_request);
    let per_hour_requests = requests as f64 * HOUR_S / elapsed_s.max(1e-9);
    // A trend with time that grows is the soak's own measure of growth
    // per hour (`over_time.rs`); otherwise the per-request slope at the
    // soak's pace.
    let over_time = route
        .soak
        .iter()
        .flat_map(|s| &s.time_fits)
        .find(|f| f.series == Series::HEAP_USED && f.decision == TimeDecision::Grows);
    let growth_bytes_per_hour = match over_time {
        Some(fit) => fit.per_hour,
        None => slope * per_hour_requests,
    };
    let kind = verdict.map(|v| v.kind);
    let last = route
        .cycles
        .last()
        .map(|c| c.after_gc.heap_used)
        .or(route.baseline.as_ref().map(|b| b.heap_used))
        .unwrap_or(0);
    let rate = match over_time {
        Some(_) => format!("{}/h with time", mb_text(growth_bytes_per_hour)),
        None => format!(
            "{}/h, {} per request",
            mb_text(growth_bytes_per_hour),
            per_request(slope)
        ),
    };
    let text_of = |hours: Option<f64>| match (hours, limit) {
        (Some(hours), Some(limit)) => format!(
            "at this rate heapUsed reaches the {:.1} GB limit in about {} ({rate})",
            limit as f64 / GB,
            duration(hours),
        ),
        _ => format!(
            "heapUsed grows {}/h ({} per request); the heap limit is unknown",
            mb_text(growth_bytes_per_hour),
            per_request(slope)
        ),
    };
    match kind {
        Some(VerdictKind::Retention) if growth_bytes_per_hour > 0.0 => {
            let hours = limit.map(|l| (l.saturating_sub(last)) as f64 / growth_bytes_per_hour);
            Projection {
                growth_bytes_per_hour,
                hours_to_limit: hours,
                text: text_of(hours),
            }
        }
        Some(VerdictKind::Inconclusive) | None => Projection {
            growth_bytes_per_hour,
            hours_to_limit: None,
            text: "no projection: the readings cannot decide yet; soak longer (-d) or read more \
                   often (--every) so that more settled readings follow the warm-up one"
                .into(),
        },
        Some(kind) => Projection {
            growth_bytes_per_hour,
            hours_to_limit: None,
            text: format!(
                "no growth of the settled heap to project ({kind}); heapUsed stays near {:.1} MB",
                last as f64 / MB
            ),
        },
    }
}

fn mb_text(bytes: f64) -> String {
    format!("{:.1} MB", bytes / MB)
}

/// "9.5 h", "40 min", "3.2 days".
fn duration(hours: f64) -> String {
    if hours < 1.0 {
        format!("{:.0} min", (hours * 60.0).max(1.0))
    } else if hours < 48.0 {
        format!("{hours:.1} h")
    } else {
        format!("{:.1} days", hours / 24.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Figure, MetricFit, Sample, Trend, Verdict};

    fn route(kind: VerdictKind, slope: f64, heap_used: u64) -> RouteResult {
        RouteResult {
            baseline: Some(Sample {
                heap_used,
                ..Sample::default()
            }),
            verdict: Some(Verdict {
                kind,
                fails_gate: kind.is_leak(),
                summary: String::new(),
                action: String::new(),
                findings: Vec::new(),
                fits: vec![MetricFit {
                    metric: Series::HEAP_USED,
                    slope_bytes_per_request: slope,
                    increments: Vec::new(),
                    noise_bytes: 0.1 * MB,
                    growth_per_cycle_bytes: 0.0,
                    fitted_from_cycle: 2,
                    trend: Trend::Growing,
                }],
                figure: Figure {
                    metric: Series::HEAP_USED,
                    bytes_per_request: slope,
                },
            }),
            ..RouteResult::default()
        }
    }

    #[test]
    fn a_leak_is_projected_to_the_limit_at_the_soak_s_pace() {
        // 500 B per request at 1000 requests a second: 1.68 GB an hour; from
        // 0.5 GB to a 4 GB limit is 3.5 GB, about 2.1 h.
        let limit = (4.0 * GB) as u64;
        let soaked = route(VerdictKind::Retention, 500.0, (0.5 * GB) as u64);
        let p = project(&soaked, 60.0, 60_000, Some(limit));
        assert!((p.growth_bytes_per_hour - 500.0 * 3.6e6).abs() < 1.0);
        let hours = p.hours_to_limit.unwrap();
        assert!((hours - 3.5 * GB / (500.0 * 3.6e6)).abs() < 1e-6, "{hours}");
        assert!(
            p.text
                .starts_with("at this rate heapUsed reaches the 4.0 GB limit in about 2.1 h"),
            "{}",
            p.text
        );
    }

    #[test]
    fn no_retention_and_inconclusive_are_not_projected() {
        let clean = project(
            &route(VerdictKind::NoRetention, 3.0, 1 << 24),
            60.0,
            60_000,
            Some(1 << 32),
        );
        assert_eq!(clean.hours_to_limit, None);
        assert!(clean.text.starts_with("no growth"), "{}", clean.text);
        let unsure = project(
            &route(VerdictKind::Inconclusive, 90.0, 1 << 24),
            60.0,
            60_000,
            Some(1 << 32),
        );
        assert_eq!(unsure.hours_to_limit, None);
        assert!(unsure.text.starts_with("no projection"), "{}", unsure.text);
    }
}
