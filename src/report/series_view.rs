//! What a route's report shows of its series, decided once for the
//! terminal, Markdown and HTML: the figure in its own unit (bytes, or a
//! count: a page's 41 nodes per iteration is never "41 B"), the series to
//! chart (what made the verdict first, then what grew, then the memory
//! series that were read; a series the target never reported is named "not
//! read" once instead of drawn as zeros), and the columns of the per-cycle
//! table in the unit of work's language (requests for a server, iterations
//! for a page).

use crate::model::{
    CycleResult, Figure, Metric, MetricFit, Quantity, RouteResult, RunResult, Series, Trend,
};
use crate::units::{MB, per_request};

/// A value of `series` per unit of work in its own unit: `0.47 KB`, `+41`.
pub fn value_text(series: &Series, value: f64) -> String {
    match series.quantity() {
        Quantity::Bytes => per_request(value),
        Quantity::Count => count(value),
    }
}

/// A count per unit: `+41`, `+0.25`, `-1`.
pub fn count(value: f64) -> String {
    if value.abs() >= 10.0 || value.fract().abs() < 0.005 {
        format!("{value:+.0}")
    } else {
        format!("{value:+.2}")
    }
}

/// The verdict's figure for a summary cell: `0.47 KB (heapUsed)`,
/// `+41 dom.Nodes`.
pub fn figure_text(figure: &Figure) -> String {
    match figure.unit() {
        Quantity::Bytes => format!(
            "{} ({})",
            per_request(figure.bytes_per_request),
            figure.metric
        ),
        Quantity::Count => format!("{} {}", count(figure.bytes_per_request), figure.metric),
    }
}

/// Whether the target reported `metric` at all: a page has no `external`
/// (and no `arrayBuffers` before Chromium 120), which read as zeros.
pub fn was_read(route: &RouteResult, metric: Metric) -> bool {
    let readings = route.baseline.iter().chain(
        route
            .cycles
            .iter()
            .flat_map(|c| [&c.after_load, &c.after_gc]),
    );
    readings.map(|s| s.get(metric)).any(|v| v > 0)
}

/// The memory figures the target did not report, said once: "external
/// (the target does not report it)"; `None` when it reported them all.
pub fn not_read(route: &RouteResult) -> Option<String> {
    let names: Vec<&str> = [Metric::Rss, Metric::External, Metric::ArrayBuffers]
        .into_iter()
        .filter(|m| !was_read(route, *m))
        .map(|m| m.label())
        .collect();
    let pronoun = match names.len() {
        0 => return None,
        1 => "it",
        _ => "them",
    };
    Some(format!(
        "{} (the target does not report {pronoun})",
        names.join(", ")
    ))
}

/// The memory columns of the per-cycle table: heapUsed always, the others
/// where the target reported them.
pub fn memory_columns(route: &RouteResult) -> Vec<Metric> {
    [
        Metric::Rss,
        Metric::HeapTotal,
        Metric::HeapUsed,
        Metric::External,
        Metric::ArrayBuffers,
    ]
    .into_iter()
    .filter(|m| *m == Metric::HeapUsed || was_read(route, *m))
    .collect()
}

/// The "retained per unit" line's parts: heapUsed first, the other memory
/// figures the target reported, then each growing count (`+41
/// dom.Nodes`). Empty before a fit.
pub fn retained_parts(route: &RouteResult) -> Vec<String> {
    let Some(r) = &route.retained_bytes_per_request else {
        return Vec::new();
    };
    let mut parts = vec![format!("heapUsed {}", per_request(r.heap_used))];
    for (metric, value) in [
        (Metric::External, r.external),
        (Metric::ArrayBuffers, r.array_buffers),
        (Metric::Rss, r.rss),
    ] {
        if was_read(route, metric) {
            parts.push(format!("{} {}", metric.label(), per_request(value)));
        }
    }
    for fit in growing_counts(route) {
        parts.push(format!(
            "{} {}",
            count(fit.slope_bytes_per_request),
            fit.metric
        ));
    }
    parts
}

/// The load's peak, held against the limits in force: `rss 363.3 MB (121
/// % of --memory-limit 300.0 MB), heapUsed 4.4 MB of a 4144.0 MB heap
/// limit`; each report puts its own "peak during load" before it. `None`
/// without a sampled peak.
pub fn peak_text(route: &RouteResult) -> Option<String> {
    let peak = crate::verdict::peak::route_peak(&route.cycles)?;
    let limits = route.limits.unwrap_or_default();
    let mut parts = Vec::new();
    if peak.rss > 0 {
        let held = limits.rss_limit().map_or(String::new(), |(limit, what)| {
            format!(
                " ({:.0} % of {what} {})",
                100.0 * peak.rss as f64 / limit as f64,
                crate::units::mb(limit as f64)
            )
        });
        parts.push(format!("rss {}{held}", crate::units::mb(peak.rss as f64)));
    }
    if peak.heap_used > 0 {
        let held = limits.heap_bytes.map_or(String::new(), |limit| {
            format!(" of a {} heap limit", crate::units::mb(limit as f64))
        });
        parts.push(format!(
            "heapUsed {}{held}",
            crate::units::mb(peak.heap_used as f64)
        ));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The peak of each cycle's load in the chart's scale, for the series
/// the sampler reads (heapUsed, heapTotal, rss); `None` for the others.
pub fn peak_values(route: &RouteResult, series: &Series, scale: f64) -> Option<Vec<Option<f64>>> {
    let pick: fn(&crate::model::Peak) -> u64 = match series {
        Series::Memory(Metric::HeapUsed) => |p| p.heap_used,
        Series::Memory(Metric::HeapTotal) => |p| p.heap_total,
        Series::Memory(Metric::Rss) => |p| p.rss,
        _ => return None,
    };
    let values: Vec<Option<f64>> = std::iter::once(None)
        .chain(route.cycles.iter().map(|c| {
            c.peak
                .map(|p| pick(&p))
                .filter(|v| *v > 0)
                .map(|v| v as f64 / scale)
        }))
        .collect();
    values.iter().any(Option::is_some).then_some(values)
}

/// Counted series (handles, listeners, DOM counts, counters) whose fit
/// grows with the work, largest first.
pub fn growing_counts(route: &RouteResult) -> Vec<&MetricFit> {
    let Some(verdict) = &route.verdict else {
        return Vec::new();
    };
    let mut fits: Vec<&MetricFit> = verdict
        .fits
        .iter()
        .filter(|f| f.metric.quantity() == Quantity::Count && f.trend == Trend::Growing)
        .collect();
    fits.sort_by(|a, b| {
        b.slope_bytes_per_request
            .total_cmp(&a.slope_bytes_per_request)
    });
    fits
}

/// The series to chart, in order: the verdict's own series, heapUsed, each
/// growing count, then rss, external and arrayBuffers where read.
pub fn charted(route: &RouteResult) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    let mut push = |s: Series| {
        if !series.contains(&s) {
            series.push(s);
        }
    };
    if let Some(figure) = route.figure() {
        push(figure.metric.clone());
    }
    push(Series::HEAP_USED);
    for fit in growing_counts(route) {
        push(fit.metric.clone());
    }
    for metric in [Metric::Rss, Metric::External, Metric::ArrayBuffers] {
        if was_read(route, metric) {
            push(Series::Memory(metric));
        }
    }
    series
}

/// A chart's unit and the scale of its readings: MB for bytes, as counted.
pub fn chart_scale(series: &Series) -> (&'static str, f64) {
    match series.quantity() {
        Quantity::Bytes => ("MB", MB),
        Quantity::Count => ("count", 1.0),
    }
}

/// The unit of work the per-cycle table speaks in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// A server's requests: count, errors, non-2xx, rate, latencies.
    Requests,
    /// A page's iterations of its actions: count, failed, rate, time each.
    Iterations,
    /// A watched process's own traffic between two readings: what it served.
    Served,
}

impl Work {
    pub fn of(result: &RunResult) -> Work {
        match (result.settings.runtime(), result.settings.method.as_str()) {
            ("browser", _) => Work::Iterations,
            (_, "watch") => Work::Served,
            _ => Work::Requests,
        }
    }

    /// The per-cycle table's columns about the work (after the memory).
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Work::Requests => &[
                "requests", "errors", "non-2xx", "req/s", "p50 ms", "p99 ms", "max ms",
            ],
            Work::Iterations => &["iterations", "failed", "iterations/s", "ms / iteration"],
            Work::Served => &["served", "req/s"],
        }
    }

    /// One cycle's cells for `columns`.
    pub fn cells(self, cycle: &CycleResult) -> Vec<String> {
        match self {
            Work::Requests => {
                let latency = cycle.load.latency_ms.as_ref();
                let ms = |f: fn(&crate::model::LatencySummary) -> f64| {
                    latency.map_or("–".into(), |l| format!("{:.2}", f(l)))
                };
                vec![
                    cycle.requests.to_string(),
                    cycle.errors.to_string(),
                    cycle.non_2xx.to_string(),
                    format!("{:.0}", cycle.load.requests_per_second),
                    ms(|l| l.p50),
                    ms(|l| l.p99),
                    ms(|l| l.max),
                ]
            }
            Work::Served => match cycle.served {
                Some(served) => vec![
                    served.to_string(),
                    format!("{:.0}", served as f64 / cycle.duration_s.max(1e-9)),
                ],
                None => vec!["–".into(), "–".into()],
            },
            Work::Iterations => {
                let done = cycle.load.iterations.unwrap_or(cycle.requests);
                let failed = cycle.load.failed_iterations.unwrap_or(cycle.errors);
                let each = match done {
                    0 => "–".to_string(),
                    n => format!("{:.1}", cycle.duration_s * 1000.0 / n as f64),
                };
                vec![
                    done.to_string(),
                    failed.to_string(),
                    format!("{:.1}", done as f64 / cycle.duration_s.max(1e-9)),
                    each,
                ]
            }
        }
    }

    /// The first failure of the work, once for the route: "cycle 2: the
    /// selector `#close` matched nothing".
    pub fn first_failure(self, route: &RouteResult) -> Option<String> {
        route.cycles.iter().find_map(|c| {
            let reason = c.load.failure_reasons.first()?;
            Some(format!("cycle {}: {reason}", c.cycle))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Resource;

    #[test]
    fn a_count_is_never_printed_as_bytes() {
        let nodes = Series::Resource(Resource::parse("dom.Nodes").unwrap());
        let figure = Figure {
            metric: nodes.clone(),
            bytes_per_request: 41.0,
        };
        assert_eq!(figure_text(&figure), "+41 dom.Nodes");
        assert_eq!(count(0.25), "+0.25");
        assert_eq!(value_text(&nodes, 41.0), "+41");
        assert_eq!(value_text(&Series::HEAP_USED, 481.0), "0.47 KB");
        let heap = Figure {
            metric: Series::HEAP_USED,
            bytes_per_request: 481.0,
        };
        assert_eq!(figure_text(&heap), "0.47 KB (heapUsed)");
        assert_eq!(chart_scale(&nodes).0, "count");
    }
}
