//! Trend of an after-GC series against the requests that produced it.
//!
//! Method: ordinary least squares of the reading `y` on the cumulative
//! number of responses `x` (Montgomery & Runger, *Applied Statistics and
//! Probability for Engineers*, ch. 11). The slope is the retained bytes per
//! request; the residual standard deviation `sqrt(SSE / (n - 2))` estimates
//! how repeatable one reading is, and `residual_sd / sqrt(Sxx)` is the
//! standard error of the slope (ibid., 11-4): how far the slope itself may
//! be off. With two points there is no residual, so the caller's noise
//! floor stands in for both.

/// A fitted line `y = intercept + slope * x`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    pub slope: f64,
    pub intercept: f64,
    /// Standard deviation of the residuals; 0 with fewer than three points.
    pub residual_sd: f64,
    /// Standard error of `slope`; 0 with fewer than three points.
    pub slope_se: f64,
}

/// Least-squares line through `points`; `None` with fewer than two points
/// or when every x is the same (no load happened between the readings).
pub fn least_squares(points: &[(f64, f64)]) -> Option<Line> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    let residual_sd = if points.len() > 2 {
        let sse: f64 = points
            .iter()
            .map(|p| (p.1 - intercept - slope * p.0).powi(2))
            .sum();
        (sse / (n - 2.0)).sqrt()
    } else {
        0.0
    };
    Some(Line {
        slope,
        intercept,
        residual_sd,
        slope_se: residual_sd / sxx.sqrt(),
    })
}

/// Differences between consecutive readings.
pub fn increments(values: &[f64]) -> Vec<f64> {
    values.windows(2).map(|w| w[1] - w[0]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_line() {
        let line = least_squares(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]).unwrap();
        assert!((line.slope - 2.0).abs() < 1e-12);
        assert!((line.intercept - 1.0).abs() < 1e-12);
        assert!(line.residual_sd < 1e-12);
    }

    #[test]
    fn residual_measures_scatter() {
        let line = least_squares(&[(0.0, 0.0), (1.0, 1.0), (2.0, 0.0), (3.0, 1.0)]).unwrap();
        assert!(line.residual_sd > 0.4, "{line:?}");
        // Sxx = 5 for x = 0..3, so the slope's error is sd / sqrt(5).
        assert!((line.slope_se - line.residual_sd / 5f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(least_squares(&[(1.0, 1.0)]).is_none());
        assert!(least_squares(&[(1.0, 1.0), (1.0, 2.0)]).is_none());
        assert_eq!(increments(&[1.0, 4.0, 4.0]), vec![3.0, 0.0]);
    }
}
