//! Chooses the row of the reading table for a route and words it.
//!
//! Order matters: a route whose load failed proves nothing, so that comes
//! first; heap retention outranks off-heap retention (a heap leak also
//! moves rss); counters speak only when memory is silent.

use super::metric::{RETENTION_SIGMAS, Trend, judge_series, noise_floor};
use super::{Finding, MetricFit, Verdict, VerdictKind};
use crate::model::{CycleResult, RetainedPerRequest};
use crate::probe::Sample;
use crate::units::{MB, mb, per_request};

/// A route is judged on these, in this order.
const MEMORY_METRICS: [&str; 4] = ["heapUsed", "external", "arrayBuffers", "rss"];
/// When off-heap memory grows, the heap grows too: every Buffer has a small
/// JS wrapper (the seed's step 6: arrayBuffers +62.5 MB, heapUsed +0.4 MB).
/// Heap growth under this fraction of the off-heap growth is that wrapper,
/// and the row is off-heap retention.
const WRAPPER_FRACTION: f64 = 0.1;
/// A counter counts units: a steady rise of one unit per cycle matters.
const COUNTER_NOISE: f64 = 0.5;

/// Choices that change a verdict without changing the readings.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Options {
    /// The CI gate: retention at or below this many bytes per request is
    /// reported but not called a leak (`--max-retained`).
    pub max_retained: Option<f64>,
    /// The probe could not force collections (`--proc`): every reading
    /// includes garbage, and there are no heap figures, only rss.
    pub proc_only: bool,
}

fn reading(sample: &Sample, metric: &str) -> Option<f64> {
    Some(match metric {
        "heapUsed" => sample.heap_used as f64,
        "external" => sample.external as f64,
        "arrayBuffers" => sample.array_buffers as f64,
        "rss" => sample.rss as f64,
        counter => (*sample.counters.get(counter)?)?,
    })
}

/// Judges one route's readings. Returns `None` before the first cycle.
pub fn judge(
    baseline: &Sample,
    cycles: &[CycleResult],
    options: Options,
) -> Option<(Verdict, RetainedPerRequest)> {
    if cycles.is_empty() {
        return None;
    }
    let requests: Vec<u64> = cycles.iter().map(|c| c.responses).collect();
    let series = |metric: &str| -> Option<Vec<f64>> {
        std::iter::once(baseline)
            .chain(cycles.iter().map(|c| &c.after_gc))
            .map(|s| reading(s, metric))
            .collect()
    };
    let mut fits: Vec<MetricFit> = MEMORY_METRICS
        .iter()
        .filter_map(|m| judge_series(m, &series(m)?, &requests, noise_floor(m)))
        .collect();
    let counter_names: Vec<String> = baseline.counters.keys().cloned().collect();
    for name in &counter_names {
        if let Some(values) = series(name)
            && let Some(fit) = judge_series(name, &values, &requests, COUNTER_NOISE)
        {
            fits.push(fit);
        }
    }
    let find = |m: &str| fits.iter().find(|f| f.metric == m);
    let retained = RetainedPerRequest {
        heap_used: find("heapUsed").map_or(0.0, |f| f.slope_bytes_per_request),
        external: find("external").map_or(0.0, |f| f.slope_bytes_per_request),
        array_buffers: find("arrayBuffers").map_or(0.0, |f| f.slope_bytes_per_request),
        rss: find("rss").map_or(0.0, |f| f.slope_bytes_per_request),
    };
    let context = Context {
        baseline,
        cycles,
        fits: &fits,
        proc_only: options.proc_only,
    };
    let (kind, summary, action) = context.choose();
    let mut findings = context.findings(kind);
    let mut leak = kind.is_leak();
    if let Some(gate) = options.max_retained
        && leak
        && kind != VerdictKind::CounterGrowth
    {
        // The figure that made the verdict: the heap for retention, the
        // off-heap figures otherwise.
        let worst = if kind == VerdictKind::Retention {
            retained.heap_used
        } else {
            retained
                .external
                .max(retained.array_buffers)
                .max(retained.rss)
        };
        if worst <= gate {
            leak = false;
            findings.push(Finding {
                kind: "within-gate".into(),
                message: format!(
                    "{} kept per request is within --max-retained {}: reported, not failed",
                    per_request(worst),
                    per_request(gate)
                ),
            });
        }
    }
    let verdict = Verdict {
        kind,
        leak,
        summary,
        action,
        findings,
        fits: fits.clone(),
    };
    Some((verdict, retained))
}

struct Context<'a> {
    baseline: &'a Sample,
    cycles: &'a [CycleResult],
    fits: &'a [MetricFit],
    proc_only: bool,
}

impl Context<'_> {
    fn fit(&self, metric: &str) -> Option<&MetricFit> {
        self.fits.iter().find(|f| f.metric == metric)
    }

    fn trend(&self, metric: &str) -> Trend {
        self.fit(metric).map_or(Trend::Flat, |f| f.trend)
    }

    /// "7.6 → 16.3 → 24.8 → 33.2 MB"
    fn series_text(&self, metric: &str) -> String {
        let values: Vec<String> = std::iter::once(self.baseline)
            .chain(self.cycles.iter().map(|c| &c.after_gc))
            .filter_map(|s| reading(s, metric))
            .map(|v| format!("{:.1}", v / MB))
            .collect();
        format!("after-GC {metric} {} MB", values.join(" → "))
    }

    fn total_requests(&self) -> u64 {
        self.cycles.iter().map(|c| c.responses).sum()
    }

    fn choose(&self) -> (VerdictKind, String, String) {
        if let Some(dead) = self.cycles.iter().find(|c| c.load.successes() == 0) {
            return (
                VerdictKind::Inconclusive,
                format!(
                    "cycle {} got no successful response ({} errors, {} non-2xx): a route that fails \
                     retains nothing and proves nothing",
                    dead.cycle, dead.errors, dead.non_2xx
                ),
                "Fix the route or the URL so that it answers 2xx, then run again.".into(),
            );
        }
        if self.proc_only && self.trend("rss") == Trend::Growing {
            let fit = self.fit("rss").expect("trend implies a fit");
            return (
                VerdictKind::Retention,
                format!(
                    "{} without forced collections: {} kept per request",
                    self.series_text("rss"),
                    per_request(fit.slope_bytes_per_request)
                ),
                "Confirm with a probe that can force collections (the inspector or the app's /gc), \
                 then find the holder."
                    .into(),
            );
        }
        let off_heap = ["arrayBuffers", "external", "rss"]
            .into_iter()
            .find(|m| self.trend(m) == Trend::Growing);
        let heap_is_wrapper = |metric: &str| {
            let heap = self
                .fit("heapUsed")
                .map_or(0.0, |f| f.slope_bytes_per_request);
            let other = self.fit(metric).map_or(0.0, |f| f.slope_bytes_per_request);
            metric != "rss" && heap < WRAPPER_FRACTION * other
        };
        if self.trend("heapUsed") == Trend::Growing && !off_heap.is_some_and(heap_is_wrapper) {
            let fit = self.fit("heapUsed").expect("trend implies a fit");
            return (
                VerdictKind::Retention,
                format!(
                    "{}: {} kept per request",
                    self.series_text("heapUsed"),
                    per_request(fit.slope_bytes_per_request)
                ),
                "Take two heap snapshots around one cycle and read the retainer path to name the holder."
                    .into(),
            );
        }
        if let Some(metric) = ["arrayBuffers", "external", "rss"]
            .into_iter()
            .find(|m| self.trend(m) == Trend::Growing)
        {
            let fit = self.fit(metric).expect("trend implies a fit");
            return (
                VerdictKind::OffHeapRetention,
                format!(
                    "{} while heapUsed grows {} per request: {} kept per request off the V8 heap",
                    self.series_text(metric),
                    per_request(self.fit("heapUsed").map_or(0.0, |f| f.slope_bytes_per_request)),
                    per_request(fit.slope_bytes_per_request)
                ),
                "Read external and arrayBuffers in the same sample: Buffers, ArrayBuffers or native \
                 memory are kept per request."
                    .into(),
            );
        }
        let counter = self
            .fits
            .iter()
            .find(|f| !MEMORY_METRICS.contains(&f.metric.as_str()));
        if let Some(fit) = counter.filter(|f| f.trend == Trend::Growing) {
            return (
                VerdictKind::CounterGrowth,
                format!(
                    "counter {} rises {:.3} per request with no visible memory change",
                    fit.metric, fit.slope_bytes_per_request
                ),
                "Still a leak: the kept objects are small, so it reaches the limit later, not never.".into(),
            );
        }
        if let Some(fit) = self
            .fits
            .iter()
            .find(|f| f.trend == Trend::Unclear && f.metric != "rss")
        {
            return (
                VerdictKind::Inconclusive,
                self.unclear_summary(fit),
                self.unclear_action(fit),
            );
        }
        if self.trend("heapUsed") == Trend::Converging {
            return (
                VerdictKind::WorkingSet,
                format!(
                    "{}: growth is levelling off, a working set filling up",
                    self.series_text("heapUsed")
                ),
                "Not a leak. Read the after-GC series; run more cycles to confirm it holds.".into(),
            );
        }
        let fit = self.fit("heapUsed");
        let noise = fit.map_or(0.0, |f| f.noise_bytes);
        (
            VerdictKind::NoRetention,
            format!(
                "{}: flat within {} over {} requests",
                self.series_text("heapUsed"),
                mb(noise),
                self.total_requests()
            ),
            format!(
                "Record {} as the after-GC baseline the next release is compared against.",
                mb(self.cycles.last().map_or(0, |c| c.after_gc.heap_used) as f64)
            ),
        )
    }

    fn unclear_summary(&self, fit: &MetricFit) -> String {
        format!(
            "{}: {} per cycle is within the noise of ±{} for {} requests per cycle",
            self.series_text(&fit.metric),
            mb(fit.growth_per_cycle_bytes),
            mb(fit.noise_bytes),
            self.total_requests() / self.cycles.len() as u64
        )
    }

    /// How much more load would make the slope stand out of the noise.
    fn unclear_action(&self, fit: &MetricFit) -> String {
        let per_cycle = self.total_requests() as f64 / self.cycles.len() as f64;
        let needed_growth = RETENTION_SIGMAS * fit.noise_bytes;
        let slope = fit.slope_bytes_per_request.max(f64::MIN_POSITIVE);
        let requests = (needed_growth / slope).ceil().min(1e9) as u64;
        format!(
            "Run 3 more cycles (--cycles {}), or raise --requests to about {} so that one cycle's \
             growth stands out of the noise.",
            self.cycles.len() + 3,
            requests.max(per_cycle as u64 * 2)
        )
    }

    fn findings(&self, kind: VerdictKind) -> Vec<Finding> {
        let mut out = Vec::new();
        let mut add = |kind: &str, message: String| {
            out.push(Finding {
                kind: kind.into(),
                message,
            })
        };
        if self.proc_only {
            add(
                "no-forced-gc",
                "read from /proc without forced collections: every reading includes garbage, so \
                 only steady growth across cycles means anything"
                    .into(),
            );
        }
        let errors: u64 = self.cycles.iter().map(|c| c.errors).sum();
        let non_2xx: u64 = self.cycles.iter().map(|c| c.non_2xx).sum();
        if errors + non_2xx > 0 {
            add(
                "load-errors",
                format!(
                    "{errors} errors and {non_2xx} non-2xx responses during load: failed requests may \
                     do less work than good ones, so the figures understate a leak"
                ),
            );
        }
        if let Some(heap) = self.fit("heapUsed") {
            let first = heap.increments.first().copied().unwrap_or(0.0);
            if heap.fitted_from_cycle == 1
                && first > RETENTION_SIGMAS * heap.noise_bytes
                && kind != VerdictKind::Retention
            {
                add(
                    "warm-up",
                    format!(
                        "the first cycle grew heapUsed by {} once (JIT code, lazy initialisation); not counted",
                        mb(first)
                    ),
                );
            }
            let pending = self
                .cycles
                .iter()
                .map(|c| c.after_load.heap_used as f64 - c.after_gc.heap_used as f64)
                .fold(0.0, f64::max);
            if pending > MB && kind != VerdictKind::Retention {
                add(
                    "garbage-pending",
                    format!(
                        "heapUsed was up to {} higher after load than after the forced collection: \
                         garbage no collection had reached yet, not retention",
                        mb(pending)
                    ),
                );
            }
        }
        if let Some(converging) = self
            .fits
            .iter()
            .find(|f| f.trend == Trend::Converging && kind != VerdictKind::WorkingSet)
        {
            add(
                "converging",
                format!(
                    "{} grew and levelled off: a working set, not a leak",
                    converging.metric
                ),
            );
        }
        let grown = |m: &str| -> f64 {
            let first = reading(self.baseline, m).unwrap_or(0.0);
            let last = self
                .cycles
                .last()
                .and_then(|c| reading(&c.after_gc, m))
                .unwrap_or(first);
            last - first
        };
        let buffers = grown("arrayBuffers");
        let rss = grown("rss");
        if buffers > 4.0 * MB && rss < buffers / 2.0 {
            add(
                "untouched-pages",
                format!(
                    "arrayBuffers grew {} but rss only {}: buffers whose pages were never written are \
                     not resident yet; rss will rise when they are",
                    mb(buffers),
                    mb(rss)
                ),
            );
        }
        out
    }
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
