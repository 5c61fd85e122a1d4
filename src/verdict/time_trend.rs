//! Growth with time: an after-GC series against the seconds it took, for
//! leaks fed by a clock (a sampler's interval, a retry queue, a cache
//! refreshed on a timer) rather than by requests.
//!
//! Method: the Theil–Sen estimator (Sen 1968, "Estimates of the regression
//! coefficient based on Kendall's tau", JASA 63) — the median of the slopes
//! between every pair of readings — with its distribution-free 95 %
//! confidence interval from the ranks of those pairwise slopes (Hollander &
//! Wolfe, *Nonparametric Statistical Methods*, ch. 9). A robust slope,
//! because one settled reading now and then lands far off the line: a clean
//! soak of 150 s read 4.28–4.43 MB at every interval but one, 4.65 MB; least
//! squares over a 60 s soak moves by some 20 MB/h for such a reading, the
//! median of the pairwise slopes hardly at all.
//!
//! The decision has the form the sequential rule gives "keeps nothing":
//! - **grows** when the interval's lower end is above the floor;
//! - **flat** when its upper end is below the floor;
//! - **undecided** otherwise, with the soak length that would decide.
//!
//! The floor is the method's own retention threshold spread over the time
//! fitted: a cycle must grow by `RETENTION_SIGMAS` noise floors (3 × 0.1 MB
//! of heapUsed) to count, so over a soak the growth must too: 21.6 MB/h
//! over 50 s of readings, 0.3 MB/h over an hour. Below it, growth is the
//! slow creep a clean process shows while V8 warms up (measured on the
//! bounded sampler twin: 9 MB/h [2.7, 17.6] over its first minute, 3.8
//! MB/h over 150 s).

use super::metric::RETENTION_SIGMAS;
use crate::model::{Series, TimeDecision, TimeFit};

const HOUR_S: f64 = 3600.0;
/// The normal quantile of a two-sided 95 % interval.
const Z_95: f64 = 1.96;
/// Fewer readings than this after the warm-up cannot bound a slope.
pub const MIN_READINGS: usize = 4;

/// Fits `points` (seconds since the first reading, value) for `series`,
/// whose one reading repeats within `noise`. `None` with too few points.
pub fn fit_over_time(series: &Series, points: &[(f64, f64)], noise: f64) -> Option<TimeFit> {
    fit_with(series, points, |_| noise)
}

/// `fit_over_time` against the readings' own spread about the fitted line
/// (`spread_about`), never less than `least`: for readings that are not
/// settled (`watch`). The pairwise slopes are computed once for both.
pub fn fit_against_spread(series: &Series, points: &[(f64, f64)], least: f64) -> Option<TimeFit> {
    fit_with(series, points, |slope| {
        least.max(spread_about(points, slope))
    })
}

/// The fit, with the noise given the fitted slope.
fn fit_with(
    series: &Series,
    points: &[(f64, f64)],
    noise: impl FnOnce(f64) -> f64,
) -> Option<TimeFit> {
    if points.len() < MIN_READINGS {
        return None;
    }
    let span_s = points.last()?.0 - points.first()?.0;
    if span_s <= 0.0 {
        return None;
    }
    let (slope, lower, upper) = theil_sen(points)?;
    let floor = RETENTION_SIGMAS * noise(slope) / span_s;
    let decision = if lower > floor {
        TimeDecision::Grows
    } else if upper < floor {
        TimeDecision::Flat
    } else {
        TimeDecision::Undecided
    };
    Some(TimeFit {
        series: series.clone(),
        per_hour: slope * HOUR_S,
        lower_per_hour: lower * HOUR_S,
        upper_per_hour: upper * HOUR_S,
        floor_per_hour: floor * HOUR_S,
        readings: points.len() as u32,
        span_s,
        decision,
        decided_by_s: decided_by(slope, lower, upper, floor, span_s),
    })
}

/// The median pairwise slope and its 95 % interval: with N pairwise slopes
/// sorted and C = z · sqrt(n(n−1)(2n+5)/18) (the standard deviation of
/// Kendall's S), the interval runs from the ((N − C)/2)-th to the
/// ((N + C)/2 + 1)-th slope.
fn theil_sen(points: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let mut slopes = Vec::with_capacity(points.len() * (points.len() - 1) / 2);
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            if b.0 > a.0 {
                slopes.push((b.1 - a.1) / (b.0 - a.0));
            }
        }
    }
    if slopes.is_empty() {
        return None;
    }
    slopes.sort_by(f64::total_cmp);
    let count = slopes.len();
    let median = (slopes[(count - 1) / 2] + slopes[count / 2]) / 2.0;
    let n = points.len() as f64;
    let c = Z_95 * (n * (n - 1.0) * (2.0 * n + 5.0) / 18.0).sqrt();
    let low = ((count as f64 - c) / 2.0).floor().max(0.0) as usize;
    let high = (((count as f64 + c) / 2.0).ceil() as usize).min(count - 1);
    Some((median, slopes[low.min(count - 1)], slopes[high]))
}

/// How far one reading strays from the trend: the root mean square of
/// the residuals about the Theil–Sen line (its intercept the residuals'
/// median), the tenth farthest left out so that one stray reading does
/// not widen it. Not the median absolute deviation: readings taken at a
/// target's own major collections come in phases (on
/// tests/targets/watch-server.mjs every other one lands ±0.7 MB off the
/// line, by when the collection fell in the 2 s cache's sweep), and the
/// MAD of such two-mode residuals falls to the spread within one mode as
/// soon as the median crosses into it: 1.0 MB over ten readings, 0.27 MB
/// over eleven, in one watch.
///
/// Such readings carry floating garbage and medium-lived objects that a
/// forced, settled one does not (0.6–0.9 MB against the 0.1 MB a settled
/// reading repeats to), so `watch` judges them against their own spread.
fn spread_about(points: &[(f64, f64)], slope: f64) -> f64 {
    let mut residuals: Vec<f64> = points.iter().map(|(t, v)| v - slope * t).collect();
    residuals.sort_by(f64::total_cmp);
    let n = residuals.len();
    let center = (residuals[(n - 1) / 2] + residuals[n / 2]) / 2.0;
    let mut deviations: Vec<f64> = residuals.iter().map(|r| (r - center).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    let kept = &deviations[..n - n / 10];
    (kept.iter().map(|d| d * d).sum::<f64>() / kept.len() as f64).sqrt()
}

/// How sure the advice wants a soak of the length it names to decide:
/// today's slope is taken one standard error (half the 95 % half-width)
/// to the side of the floor it must clear...
const SLOPE_MARGIN: f64 = 0.5;
/// ...and the longer soak's interval must clear the floor by this many of
/// its own half-widths: 1 + z(0.90) / z(0.975) = 1 + 1.28 / 1.96, so that
/// its lower end stays above the floor in nine soaks of ten.
const FUTURE_MARGIN: f64 = 1.65;
/// Steps of the soak's length tried, as multiples of today's span.
const LENGTH_STEP: f64 = 0.25;

/// About how long a soak at the same pace would decide an undecided fit,
/// in seconds of readings: the floor shrinks as 1/span and the interval
/// as about span^-1.5 (more readings, farther apart). The point estimate
/// of that length decides only about one soak in two (the slope and the
/// width found then are as noisy as today's), so the length is where a
/// slope half a standard error nearer the floor still clears it by
/// `FUTURE_MARGIN` of the longer soak's half-width: nine soaks in ten.
fn decided_by(slope: f64, lower: f64, upper: f64, floor: f64, span_s: f64) -> Option<f64> {
    if lower > floor || upper < floor {
        return None;
    }
    let half_width = (upper - lower) / 2.0;
    // Either way may decide: a slope under today's floor still grows past
    // a longer soak's smaller floor, and one above it may prove flat.
    // Each way with today's slope half a standard error nearer its floor.
    let grows_slope = slope - SLOPE_MARGIN * half_width;
    let flat_slope = slope + SLOPE_MARGIN * half_width;
    (1..=256)
        .map(|step| 1.0 + f64::from(step) * LENGTH_STEP)
        .find(|&k| {
            let width = FUTURE_MARGIN * half_width / k.powf(1.5);
            let floor = floor / k;
            grows_slope - width > floor || flat_slope + width < floor
        })
        .map(|k| k * span_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: f64 = 1024.0 * 1024.0;

    /// Readings every 5 s from 10 s on, in MB.
    fn points(values: &[f64]) -> Vec<(f64, f64)> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| (5.0 * i as f64, v * MB))
            .collect()
    }

    #[test]
    fn a_sampler_growing_33_mb_an_hour_grows_in_a_minute() {
        // Measured: tests/targets/sampler-server.mjs, -d 60s --every 5s.
        let leak = points(&[
            4.418, 4.206, 4.283, 4.34, 4.424, 4.42, 4.543, 4.538, 4.565, 4.723, 4.739,
        ]);
        let fit = fit_over_time(&Series::HEAP_USED, &leak, 0.1 * MB).unwrap();
        assert_eq!(fit.decision, TimeDecision::Grows, "{fit:?}");
        assert!((20.0..60.0).contains(&(fit.per_hour / MB)), "{fit:?}");
    }

    #[test]
    fn its_bounded_twin_creeping_while_v8_warms_up_is_flat() {
        let twin = points(&[
            4.155, 4.312, 4.192, 4.191, 4.216, 4.306, 4.322, 4.253, 4.231, 4.335, 4.348,
        ]);
        let fit = fit_over_time(&Series::HEAP_USED, &twin, 0.1 * MB).unwrap();
        assert_eq!(fit.decision, TimeDecision::Flat, "{fit:?}");
        assert!(fit.decided_by_s.is_none());
    }

    #[test]
    fn one_far_reading_does_not_make_a_trend() {
        let mut values = vec![4.3; 11];
        values[6] = 4.65;
        let fit = fit_over_time(&Series::HEAP_USED, &points(&values), 0.1 * MB).unwrap();
        assert_eq!(fit.per_hour, 0.0);
        assert_eq!(fit.decision, TimeDecision::Flat, "{fit:?}");
    }

    #[test]
    fn an_undecided_soak_names_a_length_only_when_it_would_decide_nine_times_in_ten() {
        // About 30 MB/h over 50 s of readings: the floor is 21.6 MB/h.
        let rising = points(&[
            4.20, 4.29, 4.22, 4.33, 4.27, 4.40, 4.33, 4.47, 4.38, 4.56, 4.52,
        ]);
        let fit = fit_over_time(&Series::HEAP_USED, &rising, 0.1 * MB).unwrap();
        assert_eq!(fit.decision, TimeDecision::Undecided, "{fit:?}");
        let longer = fit.decided_by_s.expect("a length");
        // The point estimate alone would stop where the slope first clears
        // the floor; the margins ask for more.
        assert!(longer > fit.span_s, "{fit:?}");
        // Noise as large as the rise: no length can be promised.
        let noisy = points(&[4.2, 4.3, 4.25, 4.4, 4.3]);
        let fit = fit_over_time(&Series::HEAP_USED, &noisy, 0.1 * MB).unwrap();
        assert_eq!(fit.decision, TimeDecision::Undecided, "{fit:?}");
        assert_eq!(fit.decided_by_s, None, "{fit:?}");
    }

    /// The spread about the Theil–Sen line of `points`.
    fn residual_spread(points: &[(f64, f64)]) -> Option<f64> {
        let (slope, _, _) = theil_sen(points)?;
        Some(spread_about(points, slope))
    }

    #[test]
    fn the_spread_is_the_scatter_about_the_trend_not_the_trend() {
        // A steady rise of 0.1 MB a reading with ±0.5 MB alternating on top.
        let values: Vec<f64> = (0..12)
            .map(|i| 4.0 + 0.1 * i as f64 + if i % 2 == 0 { 0.5 } else { -0.5 })
            .collect();
        let spread = residual_spread(&points(&values)).unwrap() / MB;
        assert!((0.45..0.55).contains(&spread), "{spread}");
        // Two phases, as a live target's readings come: not the spread of one.
        let phases = [
            9.63, 11.34, 10.21, 11.86, 10.74, 12.06, 11.27, 13.35, 12.06, 14.28, 12.54,
        ];
        let ten = residual_spread(&points(&phases[..10])).unwrap() / MB;
        let eleven = residual_spread(&points(&phases)).unwrap() / MB;
        assert!(ten > 0.5 && eleven > 0.5, "{ten} {eleven}");
        let straight: Vec<f64> = (0..12).map(|i| 4.0 + 0.1 * i as f64).collect();
        assert!(residual_spread(&points(&straight)).unwrap() < 1e-6);
    }

    #[test]
    fn too_few_readings_fit_nothing() {
        assert!(fit_over_time(&Series::HEAP_USED, &points(&[1.0, 2.0, 3.0]), 0.1 * MB).is_none());
    }
}
