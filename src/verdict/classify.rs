//! Chooses the row of the reading table for a route and words it.
//!
//! Order matters: a route whose load failed proves nothing, so that comes
//! first; heap retention outranks off-heap retention (a heap leak also
//! moves rss); counters speak only when memory is silent.

use super::handles::{describe as describe_handles, growing_handles};
use super::metric::{Noise, RETENTION_SIGMAS, judge_series};
use crate::model::{
    CycleResult, Figure, Finding, FindingKind, Metric, MetricFit, Resource, ResourceFamily,
    RetainedPerRequest, RssPart, Sample, Series, Trend, Unit, Verdict, VerdictKind,
};
use crate::units::{MB, human_duration, mb, per_request};

/// A route is judged on these, in this order.
const MEMORY_SERIES: [Series; 4] = [
    Series::HEAP_USED,
    Series::EXTERNAL,
    Series::ARRAY_BUFFERS,
    Series::RSS,
];
/// Off the V8 heap, in the order a growing one is named.
const OFF_HEAP_SERIES: [Series; 3] = [Series::ARRAY_BUFFERS, Series::EXTERNAL, Series::RSS];
/// When off-heap memory grows, the heap grows too: every Buffer has a small
/// JS wrapper (docs/src/method.md, step 4: arrayBuffers +62.5 MB, heapUsed +0.4 MB).
/// Heap growth under this fraction of the off-heap growth is that wrapper,
/// and the row is off-heap retention.
const WRAPPER_FRACTION: f64 = 0.1;

/// Choices that change a verdict without changing the readings.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Options {
    /// The CI gate: retention at or below this many bytes per request is
    /// reported but not called a leak (`--max-retained`).
    pub max_retained: Option<f64>,
    /// The probe could not force collections (`--proc`): every reading
    /// includes garbage, and there are no heap figures, only rss.
    pub proc_only: bool,
    /// Every request of the route was the same bytes (no template in its
    /// path, headers or body; no scenario or driver): a clean verdict then
    /// says what identical requests cannot show.
    pub fixed_request: bool,
    /// What a unit of work is, for the words of the verdict.
    pub unit: Unit,
    /// The cycles are a soak's intervals: what to do next is said in
    /// the soak's flags.
    pub soak: bool,
    /// The smallest retention per unit that must not pass as clean
    /// (`--resolution`, or what the method's 3 × 20 000 resolve): a clean
    /// row from cycles too small to see it is `inconclusive`. `None` judges
    /// the readings alone (the sequential rule's own looks).
    pub resolution: Option<f64>,
    /// How repeatable one reading is: a server's or a page's.
    pub noise: Noise,
    /// The memory limits in force for the target (read at the baseline):
    /// the peak is held against them.
    pub limits: crate::model::Limits,
    /// The CI gate on the peak: rss (or, without rss, the heap) above this
    /// many bytes during a load fails the run (`--max-peak`).
    pub max_peak: Option<u64>,
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
    let requests: Vec<u64> = cycles.iter().map(|c| c.units).collect();
    let series = |metric: &Series| -> Option<Vec<f64>> {
        std::iter::once(baseline)
            .chain(cycles.iter().map(|c| &c.after_gc))
            .map(|s| s.value(metric))
            .collect()
    };
    let largest_heap = std::iter::once(baseline)
        .chain(cycles.iter().map(|c| &c.after_gc))
        .map(|s| s.heap_total as f64)
        .fold(0.0, f64::max);
    let floor = |m: &Series| match m {
        Series::Memory(Metric::Rss) | Series::RssPart(_) => options.noise.rss_floor(largest_heap),
        _ => options.noise.floor(m),
    };
    let counters = baseline.counters.keys().cloned().map(Series::Counter);
    // A handle type may first appear under load: every name seen at a
    // settled reading is a series (absent readings count 0).
    let resources: std::collections::BTreeSet<&String> = std::iter::once(baseline)
        .chain(cycles.iter().map(|c| &c.after_gc))
        .flat_map(|s| s.resources.keys())
        .collect();
    let resources = resources
        .into_iter()
        .filter_map(|name| Resource::parse(name))
        .map(Series::Resource);
    let rss_parts = RssPart::ALL.into_iter().map(Series::RssPart);
    let fits: Vec<MetricFit> = MEMORY_SERIES
        .into_iter()
        .chain(rss_parts)
        .chain(counters)
        .chain(resources)
        .filter_map(|m| judge_series(&m, &series(&m)?, &requests, floor(&m)))
        .collect();
    let slope = |m: &Series| {
        fits.iter()
            .find(|f| &f.metric == m)
            .map_or(0.0, |f| f.slope_bytes_per_request)
    };
    let retained = RetainedPerRequest {
        heap_used: slope(&Series::HEAP_USED),
        external: slope(&Series::EXTERNAL),
        array_buffers: slope(&Series::ARRAY_BUFFERS),
        rss: slope(&Series::RSS),
    };
    let context = Context {
        baseline,
        cycles,
        fits: &fits,
        options,
        proc_only: options.proc_only,
    };
    let choice = context.choose();
    let figure = Figure {
        bytes_per_request: slope(&choice.figure),
        metric: choice.figure,
    };
    let mut findings = context.findings(choice.kind);
    findings.extend(super::peak::judge_peak(
        cycles,
        &options,
        choice.kind.is_leak(),
    ));
    findings.extend(super::peak::headroom(cycles, &options));
    let mut leak = choice.kind.is_leak();
    if let Some(gate) = options.max_retained
        && leak
        && choice.kind != VerdictKind::CounterGrowth
        && figure.bytes_per_request <= gate
    {
        leak = false;
        findings.push(Finding::new(
            FindingKind::WithinGate,
            format!(
                "{} kept per {} is within --max-retained {}: reported, not failed",
                per_request(figure.bytes_per_request),
                options.unit.name(),
                per_request(gate)
            ),
        ));
    }
    let verdict = Verdict {
        kind: choice.kind,
        fails_gate: leak,
        summary: choice.summary,
        action: choice.action,
        findings,
        fits,
        figure,
    };
    Some((verdict, retained))
}

/// The row chosen, its words, and the series whose figure made it.
struct Choice {
    kind: VerdictKind,
    summary: String,
    action: String,
    figure: Series,
}

pub(super) struct Context<'a> {
    pub(super) baseline: &'a Sample,
    pub(super) cycles: &'a [CycleResult],
    pub(super) fits: &'a [MetricFit],
    pub(super) options: Options,
    pub(super) proc_only: bool,
}

impl Context<'_> {
    pub(super) fn fit(&self, metric: &Series) -> Option<&MetricFit> {
        self.fits.iter().find(|f| &f.metric == metric)
    }

    fn trend(&self, metric: &Series) -> Trend {
        self.fit(metric).map_or(Trend::Flat, |f| f.trend)
    }

    fn slope(&self, metric: &Series) -> f64 {
        self.fit(metric).map_or(0.0, |f| f.slope_bytes_per_request)
    }

    /// "after-GC heapUsed 7.6 → 16.3 → 24.8 → 33.2 MB"
    fn series_text(&self, metric: &Series) -> String {
        let values: Vec<String> = std::iter::once(self.baseline)
            .chain(self.cycles.iter().map(|c| &c.after_gc))
            .filter_map(|s| s.value(metric))
            .map(|v| format!("{:.1}", v / MB))
            .collect();
        format!("after-GC {metric} {} MB", values.join(" → "))
    }

    fn total_units(&self) -> u64 {
        self.cycles.iter().map(|c| c.units).sum()
    }

    /// `request` or `iteration`.
    fn unit(&self) -> &'static str {
        self.options.unit.name()
    }

    /// The series every row but off-heap retention reports: heapUsed, or
    /// rss when the probe reads no heap.
    fn headline_series(&self) -> Series {
        if self.proc_only || self.baseline.heap_used == 0 {
            Series::RSS
        } else {
            Series::HEAP_USED
        }
    }

    fn choice(&self, kind: VerdictKind, summary: String, action: &str) -> Choice {
        Choice {
            kind,
            summary,
            action: action.to_string(),
            figure: self.headline_series(),
        }
    }

    /// A cycle that did no work decides first (it proves nothing); then
    /// the growth of the series, held to needing a trend.
    fn choose(&self) -> Choice {
        if let Some(stalled) = self.cycles.iter().find(|c| c.load.stalled) {
            return self.choice(
                VerdictKind::Inconclusive,
                format!(
                    "cycle {} stopped after {} responses and {} timeouts: the server stopped \
                     answering, so the readings say nothing about what a request keeps",
                    stalled.cycle, stalled.responses, stalled.load.timeouts
                ),
                "Find why the route stops answering under load (a deadlock, an exhausted pool, a \
                 blocked event loop), or raise --timeout if it is only slow; then run again.",
            );
        }
        if let Some((short, (served, asked))) = self
            .cycles
            .iter()
            .find_map(|c| c.driver_short().map(|counts| (c, counts)))
            .filter(|(c, _)| c.driver.as_ref().is_some_and(|d| d.succeeded()))
        {
            return self.choice(
                VerdictKind::Inconclusive,
                format!(
                    "cycle {}: --load-cmd was asked for {asked} requests and the target served \
                     {served}: a cycle that measured too little proves nothing",
                    short.cycle
                ),
                "Make the command send $LEAKCHECK_REQUESTS requests to \
                 $LEAKCHECK_URL$LEAKCHECK_ROUTE (the end of its output is in \
                 cycles[].driver.output_tail), then run again.",
            );
        }
        if let Some(failed) = self
            .cycles
            .iter()
            .find(|c| c.did_no_work() && c.driver.is_some())
        {
            let driver = failed.driver.as_ref().expect("checked above");
            return self.choice(
                VerdictKind::Inconclusive,
                format!(
                    "cycle {}: --load-cmd exited with {}: a cycle whose load failed proves nothing",
                    failed.cycle, driver.exit
                ),
                &format!(
                    "Read the end of its output (cycles[].driver.output_tail{}), fix the \
                     command, and run again.",
                    if driver.log_kept {
                        format!("; the whole log is {}", driver.log)
                    } else {
                        "; --driver-logs DIR keeps whole logs".to_string()
                    }
                ),
            );
        }
        if let Some(dead) = self.cycles.iter().find(|c| c.did_no_work()) {
            let why = dead
                .load
                .failure_reasons
                .first()
                .map_or(String::new(), |reason| {
                    format!(" (first failure: {reason})")
                });
            if dead.load.iterations == Some(0) {
                let unit = self.unit();
                let fix = match unit {
                    "call" => {
                        "Make the function succeed with the argument it gets (--setup \
                               gives one), then run again: a call that throws is counted as \
                               failed, not measured."
                    }
                    _ => {
                        "Fix the failing step (a selector, a capture, a status) so that \
                          iterations complete, then run again."
                    }
                };
                return self.choice(
                    VerdictKind::Inconclusive,
                    format!(
                        "cycle {} completed no {unit} ({} failed){why}: work that fails \
                         retains nothing and proves nothing",
                        dead.cycle, dead.errors
                    ),
                    fix,
                );
            }
            return self.choice(
                VerdictKind::Inconclusive,
                format!(
                    "cycle {} got no successful response ({} errors, {} non-2xx){why}: a route \
                     that fails retains nothing and proves nothing",
                    dead.cycle, dead.errors, dead.non_2xx
                ),
                "Fix the route or the URL so that it answers 2xx, then run again.",
            );
        }
        self.unless_unresolved(self.unless_unread(self.require_a_trend(self.choose_by_growth())))
    }

    /// The row the series' growth makes, once every cycle did its work.
    fn choose_by_growth(&self) -> Choice {
        if self.proc_only && self.trend(&Series::RSS) == Trend::Growing {
            return self.choice(
                VerdictKind::Retention,
                format!(
                    "{} without forced collections: {} kept per {}",
                    self.series_text(&Series::RSS),
                    per_request(self.slope(&Series::RSS)),
                    self.unit()
                ),
                "Confirm with a probe that can force collections (the inspector or the app's /gc), \
                 then find the holder.",
            );
        }
        let off_heap = OFF_HEAP_SERIES
            .into_iter()
            .find(|m| self.trend(m) == Trend::Growing);
        let heap_is_wrapper = |metric: &Series| {
            *metric != Series::RSS
                && self.slope(&Series::HEAP_USED) < WRAPPER_FRACTION * self.slope(metric)
        };
        if self.trend(&Series::HEAP_USED) == Trend::Growing
            && !off_heap.as_ref().is_some_and(heap_is_wrapper)
        {
            return self.choice(
                VerdictKind::Retention,
                format!(
                    "{}: {} kept per {}",
                    self.series_text(&Series::HEAP_USED),
                    per_request(self.slope(&Series::HEAP_USED)),
                    self.unit()
                ),
                "Take two heap snapshots around one cycle and read the retainer path to name the holder.",
            );
        }
        if let Some(metric) = off_heap {
            return Choice {
                kind: VerdictKind::OffHeapRetention,
                summary: format!(
                    "{} while heapUsed grows {} per {unit}: {} kept per {unit} off the V8 heap{}",
                    self.series_text(&metric),
                    per_request(self.slope(&Series::HEAP_USED)),
                    per_request(self.slope(&metric)),
                    self.rss_split_text(self.slope(&metric))
                        .map(|split| format!(" ({split})"))
                        .unwrap_or_default(),
                    unit = self.unit()
                ),
                action: self.off_heap_action(&metric),
                figure: metric,
            };
        }
        if let Some(fit) = growing_handles(self.fits).first() {
            return Choice {
                kind: VerdictKind::CounterGrowth,
                summary: format!(
                    "{} with no memory growth beyond its noise",
                    describe_handles(fit, self.unit())
                ),
                action: match &fit.metric {
                    Series::Resource(r) if r.family == ResourceFamily::Dom => {
                        "Still a leak: each keeps little memory, but the page slows and grows \
                         with every iteration. Remove the nodes and listeners when the view \
                         closes (removeEventListener, an AbortSignal), and drop references to \
                         removed nodes."
                    }
                    _ => {
                        "Still a leak: each one keeps little memory, but the process runs out of \
                         descriptors or spends its event loop on them first. Release it where \
                         the request ends."
                    }
                }
                .into(),
                figure: fit.metric.clone(),
            };
        }
        let counter = self
            .fits
            .iter()
            .find(|f| matches!(f.metric, Series::Counter(_)));
        if let Some(fit) = counter.filter(|f| f.trend == Trend::Growing) {
            return self.choice(
                VerdictKind::CounterGrowth,
                format!(
                    "counter {} rises {:.3} per {} with no visible memory change",
                    fit.metric,
                    fit.slope_bytes_per_request,
                    self.unit()
                ),
                "Still a leak: the kept objects are small, so it reaches the limit later, not never.",
            );
        }
        if let Some(fit) = self.fits.iter().find(|f| {
            f.trend == Trend::Unclear
                && f.metric != Series::RSS
                && !f.metric.is_resource()
                && !f.metric.is_rss_part()
        }) {
            return self.choice(
                VerdictKind::Inconclusive,
                self.unclear_summary(fit),
                &self.unclear_action(fit),
            );
        }
        if self.trend(&Series::HEAP_USED) == Trend::Converging {
            return self.choice(
                VerdictKind::WorkingSet,
                format!(
                    "{}: growth is levelling off, a working set filling up",
                    self.series_text(&Series::HEAP_USED)
                ),
                "Not a leak. Read the after-GC series; run more cycles to confirm it holds.",
            );
        }
        let noise = self.fit(&Series::HEAP_USED).map_or(0.0, |f| f.noise_bytes);
        self.choice(
            VerdictKind::NoRetention,
            format!(
                "{}: flat within {} over {} {}s",
                self.series_text(&Series::HEAP_USED),
                mb(noise),
                self.total_units(),
                self.unit()
            ),
            &format!(
                "Record {} as the after-GC baseline the next release is compared against.",
                mb(self.cycles.last().map_or(0, |c| c.after_gc.heap_used) as f64)
            ),
        )
    }

    /// "2.10 KB per request in malloc'd memory, 0 in V8's heap, …": the
    /// fitted slope of each part of rss, largest first; a part under 5 %
    /// of the off-heap growth (`scale`) reads 0, since the parts are read a
    /// moment apart and shift by a page or two.
    fn rss_split_text(&self, scale: f64) -> Option<String> {
        let mut parts: Vec<(RssPart, f64)> = RssPart::ALL
            .into_iter()
            .filter_map(|p| Some((p, self.fit(&Series::RssPart(p))?.slope_bytes_per_request)))
            .collect();
        if parts.is_empty() {
            return None;
        }
        parts.sort_by(|a, b| b.1.total_cmp(&a.1));
        let negligible = 0.05 * scale.abs();
        let words: Vec<String> = parts
            .iter()
            .map(|(part, slope)| {
                let figure = if slope.abs() < negligible {
                    "0".to_string()
                } else {
                    format!("{} per {}", per_request(*slope), self.unit())
                };
                format!("{figure} in {}", part.words())
            })
            .collect();
        Some(words.join(", "))
    }

    /// What to do about off-heap growth, by where it is: memory held
    /// through JS objects (Buffers) is found by the snapshots; malloc'd
    /// memory by a native allocation recorder.
    fn off_heap_action(&self, metric: &Series) -> String {
        let malloc = self.slope(&Series::RssPart(RssPart::Malloc));
        if *metric == Series::RSS && malloc > 0.5 * self.slope(metric) {
            return "Native code keeps malloc'd memory per request (an addon, a driver, zlib): \
                    the diagnosis records native allocations with heaptrack when leakcheck \
                    starts the target; otherwise run the target under `heaptrack node …` and \
                    read `heaptrack_print --print-leaks`."
                .into();
        }
        "Read external and arrayBuffers in the same sample: Buffers, ArrayBuffers or native \
         memory are kept per request."
            .into()
    }

    /// Steps of the after-GC series after the warm-up cycle: what a trend
    /// is fitted on. One cycle has none (its one step is warm-up), two
    /// cycles have one.
    fn steps_after_warm_up(&self) -> usize {
        self.cycles.len().saturating_sub(1)
    }

    fn unclear_summary(&self, fit: &MetricFit) -> String {
        format!(
            "{}: {} per cycle is within the noise of ±{} for {} {}s per cycle",
            self.series_text(&fit.metric),
            mb(fit.growth_per_cycle_bytes),
            mb(fit.noise_bytes),
            self.total_units() / self.cycles.len() as u64,
            self.unit()
        )
    }

    /// How much more load would make the slope stand out of the noise.
    fn unclear_action(&self, fit: &MetricFit) -> String {
        let per_cycle = self.total_units() as f64 / self.cycles.len() as f64;
        let needed_growth = RETENTION_SIGMAS * fit.noise_bytes;
        let slope = fit.slope_bytes_per_request.max(f64::MIN_POSITIVE);
        let requests = (needed_growth / slope).ceil().min(1e9) as u64;
        if self.options.soak {
            return format!(
                "Soak longer (-d) or read less often (--every) so that an interval carries \
                 about {} {}s, enough for its growth to stand out of the noise.",
                requests.max(per_cycle as u64 * 2),
                self.unit()
            );
        }
        let wanted = requests.max(per_cycle as u64 * 2);
        // In the time the user has: what the suggestion costs at this pace.
        let (more_time, cycle_time) = match super::pace::units_per_second(self.cycles) {
            Some(rate) => (
                format!(
                    ", about {} more at this pace",
                    human_duration(3.0 * per_cycle / rate)
                ),
                format!(
                    " (about {} a cycle at this pace)",
                    human_duration(wanted as f64 / rate)
                ),
            ),
            None => (String::new(), String::new()),
        };
        format!(
            "Run 3 more cycles (--cycles {}{more_time}), or raise --requests to about \
             {wanted}{cycle_time} so that one cycle's growth stands out of the noise.",
            self.cycles.len() + 3,
        )
    }
}

#[path = "classify_guards.rs"]
mod guards;

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
