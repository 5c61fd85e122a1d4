//! A small line chart drawn as inline SVG, for the HTML report. Hand-written
//! because it is one chart type with two series and a fitted line, and the
//! report must be one self-contained file: no script, no font, no CDN.
//!
//! Readable for colour-blind readers and in print: the series differ by
//! colour (Okabe–Ito blue, orange and vermillion), by line style (solid,
//! dashed, dotted) and by marker (filled circle, hollow square, triangle),
//! and every point has a tooltip.

use std::fmt::Write;

/// One line: a label, values per x position (None = no reading there).
pub struct Series<'a> {
    pub label: &'a str,
    pub values: Vec<Option<f64>>,
    pub style: Style,
}

#[derive(Clone, Copy)]
pub enum Style {
    /// After GC: solid blue, filled circles.
    Primary,
    /// After load: dashed orange, hollow squares.
    Secondary,
    /// The peak during the load: dotted vermillion, triangles.
    Peak,
}

/// A straight fitted line from (x0, y0) to (x1, y1), in data units.
pub struct FitLine {
    pub from: (f64, f64),
    pub to: (f64, f64),
}

const WIDTH: f64 = 480.0;
const HEIGHT: f64 = 200.0;
/// The y axis spans at least this much, so a flat series looks flat and
/// its ticks (one decimal) stay distinct.
const MIN_SPAN: f64 = 1.0;
const LEFT: f64 = 46.0;
const RIGHT: f64 = 10.0;
const TOP: f64 = 24.0;
const BOTTOM: f64 = 30.0;
const BLUE: &str = "#0072B2";
const ORANGE: &str = "#E69F00";
/// Okabe–Ito vermillion.
const VERMILLION: &str = "#D55E00";

/// Draws a chart of `series` over x = 0..n, y in the unit `unit`.
pub fn line_chart(
    title: &str,
    unit: &str,
    x_labels: &[String],
    series: &[Series],
    fit: Option<&FitLine>,
) -> String {
    let values = series
        .iter()
        .flat_map(|s| s.values.iter().flatten().copied());
    let (mut low, mut high) =
        values.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if low > high {
        (low, high) = (0.0, 1.0);
    }
    let pad = ((high - low) * 0.1).max(0.05);
    let (mut low, mut high) = ((low - pad).max(0.0), high + pad);
    if high - low < MIN_SPAN {
        let middle = (high + low) / 2.0;
        low = (middle - MIN_SPAN / 2.0).max(0.0);
        high = low + MIN_SPAN;
    }
    let n = x_labels.len().max(2);
    let x = |i: f64| LEFT + i * (WIDTH - LEFT - RIGHT) / (n - 1) as f64;
    let y = |v: f64| TOP + (high - v) * (HEIGHT - TOP - BOTTOM) / (high - low);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{title}">"#
    );
    let _ = write!(
        svg,
        r##"<text x="{LEFT}" y="14" class="chart-title">{title} ({unit})</text>"##
    );
    for k in 0..=3 {
        let v = low + (high - low) * k as f64 / 3.0;
        let yy = y(v);
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" class="grid"/><text x="{}" y="{:.1}" class="tick" text-anchor="end">{v:.1}</text>"##,
            WIDTH - RIGHT,
            LEFT - 4.0,
            yy + 3.0
        );
    }
    for (i, label) in x_labels.iter().enumerate() {
        let _ = write!(
            svg,
            r##"<text x="{:.1}" y="{}" class="tick" text-anchor="middle">{label}</text>"##,
            x(i as f64),
            HEIGHT - BOTTOM + 14.0
        );
    }
    if let Some(fit) = fit {
        let _ = write!(
            svg,
            r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" class="fit"><title>fitted line</title></line>"##,
            x(fit.from.0),
            y(fit.from.1),
            x(fit.to.0),
            y(fit.to.1)
        );
    }
    for s in series {
        draw_series(&mut svg, s, &x, &y, unit);
    }
    svg.push_str("</svg>");
    svg
}

fn draw_series(
    svg: &mut String,
    s: &Series,
    x: &dyn Fn(f64) -> f64,
    y: &dyn Fn(f64) -> f64,
    unit: &str,
) {
    let (color, dash) = match s.style {
        Style::Primary => (BLUE, ""),
        Style::Secondary => (ORANGE, r#" stroke-dasharray="5 3""#),
        Style::Peak => (VERMILLION, r#" stroke-dasharray="2 3""#),
    };
    let points: Vec<String> = s
        .values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| format!("{:.1},{:.1}", x(i as f64), y(v))))
        .collect();
    let _ = write!(
        svg,
        r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"{dash}/>"#,
        points.join(" ")
    );
    for (i, v) in s.values.iter().enumerate() {
        let Some(v) = v else { continue };
        let (cx, cy) = (x(i as f64), y(*v));
        let tip = format!("<title>{} cycle {i}: {v:.1} {unit}</title>", s.label);
        let _ = match s.style {
            Style::Primary => write!(
                svg,
                r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="3.5" fill="{color}">{tip}</circle>"#
            ),
            Style::Secondary => write!(
                svg,
                r#"<rect x="{:.1}" y="{:.1}" width="7" height="7" fill="white" stroke="{color}" stroke-width="1.5">{tip}</rect>"#,
                cx - 3.5,
                cy - 3.5
            ),
            Style::Peak => write!(
                svg,
                r#"<path d="M{cx:.1},{:.1} L{:.1},{:.1} L{:.1},{:.1} Z" fill="{color}">{tip}</path>"#,
                cy - 4.0,
                cx + 4.0,
                cy + 3.0,
                cx - 4.0,
                cy + 3.0
            ),
        };
    }
}

/// The legend shared by the charts of a route.
pub fn legend() -> String {
    format!(
        r##"<svg class="legend" viewBox="0 0 580 18" width="580" height="18" role="img" aria-label="legend">
<line x1="2" y1="9" x2="26" y2="9" stroke="{BLUE}" stroke-width="2"/><circle cx="14" cy="9" r="3.5" fill="{BLUE}"/><text x="32" y="13">after GC</text>
<line x1="110" y1="9" x2="134" y2="9" stroke="{ORANGE}" stroke-width="2" stroke-dasharray="5 3"/><rect x="118.5" y="5.5" width="7" height="7" fill="white" stroke="{ORANGE}" stroke-width="1.5"/><text x="140" y="13">after load</text>
<line x1="230" y1="9" x2="254" y2="9" class="fit"/><text x="260" y="13">fitted after-GC trend</text>
<line x1="420" y1="9" x2="444" y2="9" stroke="{VERMILLION}" stroke-width="2" stroke-dasharray="2 3"/><path d="M432,5 L436,12 L428,12 Z" fill="{VERMILLION}"/><text x="450" y="13">peak during load</text></svg>"##
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_points_lines_and_fit() {
        let labels: Vec<String> = (0..4).map(|i| i.to_string()).collect();
        let series = [
            Series {
                label: "after GC",
                values: vec![Some(7.6), Some(16.3), Some(24.8), Some(33.2)],
                style: Style::Primary,
            },
            Series {
                label: "after load",
                values: vec![None, Some(18.8), Some(27.2), Some(35.4)],
                style: Style::Secondary,
            },
        ];
        let fit = FitLine {
            from: (1.0, 16.3),
            to: (3.0, 33.2),
        };
        let svg = line_chart("heapUsed", "MB", &labels, &series, Some(&fit));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<circle").count(), 4);
        assert_eq!(svg.matches("<rect").count(), 3);
        assert!(svg.contains("after GC cycle 3: 33.2 MB"));
        assert!(svg.contains(r#"class="fit""#));
    }
}
