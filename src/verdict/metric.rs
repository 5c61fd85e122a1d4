//! One metric's after-GC series, judged on its own: its slope per request,
//! the spread of its per-cycle increments, and whether it grows, has grown
//! and stopped, or cannot be told from noise.
//!
//! Rules, each tied to the method's reading table (docs/src/method.md):
//! - Warm-up: with two or more cycles, the baseline → cycle 1 step is left
//!   out of the fit. JIT code, lazy initialisation and pools grow once, on
//!   the first load; the demo's `/churn` heap goes 6.6 → 7.3 and then holds.
//! - Retention: the fitted growth per cycle exceeds `RETENTION_SIGMAS` noise
//!   and every increment inside the fit is positive beyond noise ("rises by
//!   a similar amount each cycle").
//! - Converging: growth inside the fit that shrinks every cycle to under
//!   half its first step is a working set filling (a bounded cache), not a
//!   leak. With only two steps in the fit the last must also be flat
//!   (within two noise floors): one small step alone is often scatter.
//!   The net growth inside the fit must itself exceed the retention
//!   threshold, or a rise and fall of one reading would pass for a plateau.
//! - Unclear: growth above two noise floors per cycle that is not steady
//!   enough for retention; the verdict then asks for more load.
//! - Noise is the larger of the metric's floor (repeatability measured on
//!   routes that keep nothing) and the standard error of the fitted growth
//!   per cycle. The standard error, not the scatter of one reading: with
//!   three readings the scatter is a one-degree-of-freedom guess, and a
//!   clear leak (after-GC 4.4 → 5.5 → 5.9 MB at 1500 requests a cycle)
//!   was called inconclusive when its slope was held against it.

use super::fit::{increments, least_squares};
use crate::model::{Metric, MetricFit, Series, Trend};
use crate::units::MB;

/// How many noise deviations a cycle's growth must exceed to count. Three
/// keeps false alarms rare on three cycles (see BENCHMARKS.md, sensitivity).
pub const RETENTION_SIGMAS: f64 = 3.0;
/// Growth above this many noise floors that is not retention is
/// "unclear". Below it, growth is flat: a slow creep of about one noise
/// floor per cycle (V8's own caches, code and feedback) shows on routes
/// that keep nothing, such as a bounded cache (BENCHMARKS.md, sensitivity).
pub const UNCLEAR_SIGMAS: f64 = 2.0;
/// A later step under this fraction of the first one is "levelling off".
const CONVERGING_RATIO: f64 = 0.5;

/// A counter counts units: a steady rise of one unit per cycle matters.
const COUNTER_NOISE: f64 = 0.5;
/// Handles come and go between settled readings without leaking: a
/// keep-alive socket the load left, a timer a library re-arms, the
/// inspector's own. A few of them either way is noise.
const RESOURCE_NOISE: f64 = 4.0;

/// Repeatability of one after-GC reading on a route that keeps nothing.
/// heapUsed: about 0.1 MB here (docs/src/method.md's /churn reads 7.3 / 7.4 / 7.4).
/// external and arrayBuffers move only with buffers. rss moves with the
/// allocator's page cache, so it needs a wider floor.
/// rss also holds V8's own pages, which a large heap touches and leaves
/// differently at each collection. Measured on `tests/targets/gc-server.mjs`
/// (heapTotal 262 MB, nothing kept, 5 000 requests a cycle): after-GC rss
/// moved −5.6 to +12.4 MB between cycles on an idle machine, and rose
/// +7 to +10 MB a cycle, three cycles running, on one loaded three times
/// over (a false off-heap alarm against the 1 MB floor). One reading's
/// repeatability there is about 2 % of heapTotal; under 50 MB of heap the
/// fixed floor is the larger.
const RSS_FLOOR_PER_HEAP_BYTE: f64 = 0.02;

pub fn noise_floor(series: &Series) -> f64 {
    Noise::Process.floor(series)
}

/// Whose readings these are, for how repeatable one of them is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Noise {
    /// A Node process under load: the floors above.
    #[default]
    Process,
    /// A browser page between iterations: Chromium's forced collection
    /// is a full, compacting one of a heap of a few MB, and its after-GC
    /// readings repeat to the byte range, not the 0.1 MB one. Measured on
    /// the dialogs page's fixed twin (tests/targets/pages/fixed.html, 8 ×
    /// 25 iterations, twice): after the first cycle, heapUsed read
    /// 564 600 – 564 684 B at every reading; fuite's clean test pages,
    /// with a router, stayed within PAGE_HEAP_FLOOR too (BENCHMARKS.md,
    /// "Pages: fuite's suite"). The floor keeps a 100-fold margin over
    /// that for heavier pages (lazy compilation, Blink's caches).
    Page,
}

/// One after-GC reading's repeatability on a page (see `Noise::Page`).
const PAGE_HEAP_FLOOR: f64 = 16.0 * 1024.0;
/// A renderer's rss moves with Blink's caches and the allocator's pages:
/// on fixed.html (which keeps nothing) its anonymous rss rose 83 → 98 MB
/// over the first 125 iterations in steps of 2.4–5.6 MB a cycle of 25,
/// then held within 0.05 MB. A floor under those steps would call that
/// warm-up a leak in a three-cycle run.
const PAGE_RSS_FLOOR: f64 = 4.0 * MB;

impl Noise {
    pub fn floor(self, series: &Series) -> f64 {
        match (self, series) {
            (Noise::Process, Series::Memory(Metric::HeapUsed | Metric::HeapTotal)) => 0.1 * MB,
            (Noise::Process, Series::Memory(Metric::External | Metric::ArrayBuffers)) => 0.05 * MB,
            (Noise::Process, Series::Memory(Metric::Rss) | Series::RssPart(_)) => 1.0 * MB,
            (Noise::Page, Series::Memory(Metric::Rss) | Series::RssPart(_)) => PAGE_RSS_FLOOR,
            (Noise::Page, Series::Memory(_)) => PAGE_HEAP_FLOOR,
            (_, Series::Counter(_)) => COUNTER_NOISE,
            (_, Series::Resource(_)) => RESOURCE_NOISE,
        }
    }

    /// The rss floor of a process whose heap reached `heap_total` bytes.
    pub fn rss_floor(self, heap_total: f64) -> f64 {
        self.floor(&Series::RSS)
            .max(RSS_FLOOR_PER_HEAP_BYTE * heap_total)
    }
}

/// Judges a series: `values[0]` is the baseline, `values[i]` the after-GC
/// reading of cycle `i`; `requests[i - 1]` the responses of cycle `i`.
pub fn judge_series(
    metric: &Series,
    values: &[f64],
    requests: &[u64],
    floor: f64,
) -> Option<MetricFit> {
    if values.len() < 2 || requests.len() + 1 != values.len() {
        return None;
    }
    let mut cumulative = Vec::with_capacity(values.len());
    let mut sent = 0.0;
    cumulative.push(0.0);
    for r in requests {
        sent += *r as f64;
        cumulative.push(sent);
    }
    let cycles = requests.len();
    let steps = increments(values);
    // With two cycles or more, leave out the warm-up step, unless it is
    // the leak itself.
    let first = if cycles >= 2 && !first_step_is_the_trend(&steps, requests, floor) {
        1
    } else {
        0
    };
    let points: Vec<(f64, f64)> = (first..values.len())
        .map(|i| (cumulative[i], values[i]))
        .collect();
    let line = least_squares(&points)?;
    let per_cycle = sent / cycles as f64;
    let noise = floor.max(line.slope_se * per_cycle);
    let growth = line.slope * per_cycle;
    // Each step at the average cycle's size: cycles shrunk to a target's
    // headroom grow less in bytes for the same growth per unit, and must
    // not read as levelling off.
    let at_average: Vec<f64> = steps
        .iter()
        .zip(requests)
        .map(|(step, &units)| match units {
            0 => *step,
            units => step / units as f64 * per_cycle,
        })
        .collect();
    let inside: &[f64] = &at_average[first..];
    let trend = classify(growth, inside, noise, floor);
    Some(MetricFit {
        metric: metric.clone(),
        slope_bytes_per_request: line.slope,
        increments: steps,
        noise_bytes: noise,
        growth_per_cycle_bytes: growth,
        fitted_from_cycle: first as u32,
        trend,
    })
}

/// How close the first cycle's growth per unit must be to the second's to
/// be the same growth, not warm-up: within a quarter of the larger. JIT
/// code and lazy initialisation grow once, far more per unit in the first
/// cycle than after (/churn: +0.8 MB, then within ±0.1 MB); a leak of a
/// whole document per request grows the same 650 KB per request in both
/// (1 696 771 072 and 1 692 953 720 bytes over 2 500 requests each).
pub const WARM_UP_MATCH: f64 = 0.25;

/// Whether the first cycle grew clear of the noise, and by as much per
/// unit as the second: then it is the trend, and setting it aside as
/// warm-up would hide half the evidence of a big leak.
fn first_step_is_the_trend(steps: &[f64], requests: &[u64], floor: f64) -> bool {
    let (Some(&a), Some(&b), Some(&ua), Some(&ub)) = (
        steps.first(),
        steps.get(1),
        requests.first(),
        requests.get(1),
    ) else {
        return false;
    };
    let clear = RETENTION_SIGMAS * floor;
    if a <= clear || b <= clear || ua == 0 || ub == 0 {
        return false;
    }
    let (per_a, per_b) = (a / ua as f64, b / ub as f64);
    (per_a - per_b).abs() <= WARM_UP_MATCH * per_a.max(per_b)
}

fn classify(growth: f64, steps: &[f64], noise: f64, floor: f64) -> Trend {
    let threshold = RETENTION_SIGMAS * noise;
    let all_rise = steps.iter().all(|d| *d > noise);
    let shrinking = steps.windows(2).all(|w| w[1] < w[0]);
    // With only two steps in the fit, one small step is as likely scatter
    // as a plateau (a 48-byte-per-request leak measured 0.96 then 0.52 MB),
    // so two steps must end flat; three or more may end slowing.
    let ended_flat = steps.last().is_some_and(|d| *d <= UNCLEAR_SIGMAS * floor);
    let levelled = steps.len() >= 2
        && shrinking
        && (steps.len() >= 3 || ended_flat)
        && steps[steps.len() - 1] < CONVERGING_RATIO * steps[0]
        // Against the floor, not the residual: a curve that levels off
        // inflates the residual of a straight-line fit.
        && steps[0] > RETENTION_SIGMAS * floor
        // A working set ends higher than it started. A rise followed by a
        // fall (CI saw +0.36 MB then -0.20 MB on a bounded cache) is one
        // reading's scatter, not a set that filled.
        && steps.iter().sum::<f64>() > RETENTION_SIGMAS * floor;
    if levelled {
        return Trend::Converging;
    }
    if growth > threshold && all_rise {
        return Trend::Growing;
    }
    // Growth well above a reading's repeatability that is not steady, or
    // that scatter hides, cannot be told either way. Measured against the
    // floor: scattered readings inflate the residual and would hide it.
    if growth > UNCLEAR_SIGMAS * floor {
        return Trend::Unclear;
    }
    Trend::Flat
}

#[cfg(test)]
mod tests {
    use super::*;

    const METHOD_CYCLE: [u64; 3] = [20_000, 20_000, 20_000];

    fn mb(values: &[f64]) -> Vec<f64> {
        values.iter().map(|v| v * MB).collect()
    }

    #[test]
    fn method_leak_is_growing_at_043_kb_per_request() {
        let fit = judge_series(
            &Series::HEAP_USED,
            &mb(&[7.6, 16.3, 24.8, 33.2]),
            &METHOD_CYCLE,
            noise_floor(&Series::HEAP_USED),
        )
        .unwrap();
        assert_eq!(fit.trend, Trend::Growing);
        let kb = fit.slope_bytes_per_request / 1024.0;
        assert!((kb - 0.43).abs() < 0.01, "{kb}");
    }

    #[test]
    fn method_churn_is_flat_after_warm_up() {
        let fit = judge_series(
            &Series::HEAP_USED,
            &mb(&[6.6, 7.3, 7.4, 7.4]),
            &METHOD_CYCLE,
            noise_floor(&Series::HEAP_USED),
        )
        .unwrap();
        assert_eq!(fit.trend, Trend::Flat);
        assert_eq!(fit.fitted_from_cycle, 1);
    }

    #[test]
    fn filling_cache_converges() {
        let fit = judge_series(
            &Series::HEAP_USED,
            &mb(&[7.0, 12.0, 15.0, 16.0, 16.2]),
            &[1000; 4],
            noise_floor(&Series::HEAP_USED),
        )
        .unwrap();
        assert_eq!(fit.trend, Trend::Converging);
    }

    #[test]
    fn scattered_growth_is_unclear() {
        let fit = judge_series(
            &Series::HEAP_USED,
            &mb(&[7.0, 7.0, 7.6, 7.5, 8.1]),
            &[1000; 4],
            noise_floor(&Series::HEAP_USED),
        )
        .unwrap();
        assert_eq!(fit.trend, Trend::Unclear, "{fit:?}");
    }

    #[test]
    fn one_cycle_keeps_the_baseline_in_the_fit() {
        let floor = noise_floor(&Series::HEAP_USED);
        let fit = judge_series(&Series::HEAP_USED, &mb(&[7.0, 9.0]), &[1000], floor).unwrap();
        assert_eq!(fit.fitted_from_cycle, 0);
        assert_eq!(fit.trend, Trend::Growing);
        let fit = judge_series(
            &Series::HEAP_USED,
            &mb(&[7.0, 9.0, 9.05]),
            &[1000; 2],
            floor,
        )
        .unwrap();
        assert_eq!(fit.fitted_from_cycle, 1);
        assert_eq!(fit.trend, Trend::Flat);
    }

    #[test]
    fn a_rise_and_fall_within_noise_is_flat_not_a_working_set() {
        // CI's bounded cache, 3 × 3000 requests: after-GC heapUsed
        // +0.79 MB (warm-up), +0.36 MB, -0.20 MB.
        let baseline = 3.4 * MB;
        let values = [
            baseline,
            baseline + 790_912.0,
            baseline + 790_912.0 + 356_904.0,
            baseline + 790_912.0 + 356_904.0 - 201_840.0,
        ];
        let fit = judge_series(
            &Series::HEAP_USED,
            &values,
            &[3000; 3],
            noise_floor(&Series::HEAP_USED),
        )
        .unwrap();
        assert_eq!(fit.trend, Trend::Flat, "{fit:?}");
    }

    #[test]
    fn a_steady_leak_with_one_uneven_step_is_growing() {
        // /leak at 1500 requests a cycle: +1.1 MB then +0.4 MB after warm-up.
        let fit = judge_series(
            &Series::HEAP_USED,
            &mb(&[3.4, 4.4, 5.5, 5.9]),
            &[1500; 3],
            noise_floor(&Series::HEAP_USED),
        )
        .unwrap();
        assert_eq!(fit.trend, Trend::Growing, "{fit:?}");
    }

    #[test]
    fn a_first_cycle_that_grew_like_the_next_is_the_leak_not_warm_up() {
        let mb = 1024.0 * 1024.0;
        // The document-per-request server: 1.6 GB in each of two cycles.
        let values = [
            10.0 * mb,
            10.0 * mb + 1_696_771_072.0,
            10.0 * mb + 3_389_724_792.0,
        ];
        let fit = judge_series(&Series::HEAP_USED, &values, &[2_500, 2_500], 0.1 * mb).unwrap();
        assert_eq!(fit.fitted_from_cycle, 0);
        // A shrunk second cycle of the same leak per request still matches.
        let values = [10.0 * mb, 1_610.0 * mb, 1_706.0 * mb];
        let fit = judge_series(&Series::HEAP_USED, &values, &[2_500, 150], 0.1 * mb).unwrap();
        assert_eq!(fit.fitted_from_cycle, 0);
        // Warm-up: +0.8 MB once, then flat.
        let values = [10.0 * mb, 10.8 * mb, 10.85 * mb, 10.8 * mb];
        let fit = judge_series(&Series::HEAP_USED, &values, &[2_500; 3], 0.1 * mb).unwrap();
        assert_eq!(fit.fitted_from_cycle, 1);
    }

    #[test]
    fn shrunk_cycles_of_the_same_leak_still_grow() {
        let mb = 1024.0 * 1024.0;
        // 516 requests, then two of 32, at 620 KB each: the steps shrink
        // in bytes, not per request.
        let values = [3.4 * mb, 316.4 * mb, 335.9 * mb, 355.3 * mb];
        let fit = judge_series(&Series::HEAP_USED, &values, &[516, 32, 32], 0.1 * mb).unwrap();
        assert_eq!(fit.trend, Trend::Growing, "{fit:?}");
    }
}
