//! Chart parts drawn the same way on both charts, each given the quantity it plots: measured
//! points with whiskers, the model line per regime, switch-point markers, and the subtitle.

use crate::analysis::curve::{CurvePoint, CurveReport, Regime};
use crate::analysis::plot::frame::{Chart, LegendItem, Mark, BOTTOM, TOP};
use crate::analysis::plot::model;
use crate::analysis::plot::svg::Stroke;
use crate::analysis::plot::POINT_COLOR;
use crate::analysis::units;

/// Colour of anomaly rings.
const ANOMALY_COLOR: &str = "#e03131";
/// Colour of switch-point markers.
const SWITCH_COLOR: &str = "#5c5f66";
/// Regimes listed one by one in the legend; the rest are counted.
const LEGEND_REGIMES: usize = 5;

/// `112 rows, 28 sizes, busbw = algbw x 1.75, latency floor 10.05 us`.
pub(crate) fn subtitle(c: &CurveReport) -> String {
    format!(
        "{} rows, {} sizes, busbw = algbw x {}, latency floor {} us",
        c.rows,
        c.points.len(),
        units::factor(c.busbw_factor),
        units::us(c.latency_floor_us.unwrap_or(f64::NAN))
    )
}

/// Measured points: a dot at the median and, for pooled samples, a whisker over the spread.
/// `value` gives (median, low, high) of the plotted quantity.
pub(crate) fn points(
    chart: &mut Chart,
    c: &CurveReport,
    value: impl Fn(&CurvePoint) -> (f64, f64, f64),
) -> LegendItem {
    let pts = model::drawable(c);
    let whisker = Stroke::solid(POINT_COLOR, 1.5);
    let mut any_whisker = false;
    chart.svg.open_group("whiskers");
    for p in &pts {
        let (_, lo, hi) = value(p);
        if p.samples < 2 || lo.partial_cmp(&hi) != Some(std::cmp::Ordering::Less) {
            continue;
        }
        let (Some(x), Some(y_lo), Some(y_hi)) =
            (chart.x.px(p.bytes as f64), chart.y.px(lo), chart.y.px(hi))
        else {
            continue;
        };
        any_whisker = true;
        chart.svg.line(x, y_lo, x, y_hi, whisker);
        chart.svg.line(x - 4.0, y_lo, x + 4.0, y_lo, whisker);
        chart.svg.line(x - 4.0, y_hi, x + 4.0, y_hi, whisker);
    }
    chart.svg.close_group();
    chart.svg.open_group("points");
    for p in &pts {
        if let (Some(x), Some(y)) = (chart.x.px(p.bytes as f64), chart.y.px(value(p).0)) {
            chart.svg.circle(x, y, 4.5, POINT_COLOR);
        }
    }
    chart.svg.close_group();
    let mut lines = vec!["measured (median)".to_string()];
    if any_whisker {
        lines.push("bars: min..max sample".into());
    }
    LegendItem {
        mark: Mark::Dot(POINT_COLOR),
        lines,
    }
}

/// The model of each regime over its sizes, one colour per regime; `eval` gives the plotted
/// quantity of a regime at a size.
pub(crate) fn model_lines(
    chart: &mut Chart,
    c: &CurveReport,
    eval: impl Fn(&Regime, f64) -> Option<f64>,
) -> Vec<LegendItem> {
    let mut legend = Vec::new();
    chart.svg.open_group("model");
    for (i, r) in c.regimes.iter().enumerate() {
        let stroke = Stroke::solid(model::regime_color(i), 3.0);
        let line: Vec<(f64, f64)> = model::regime_sizes(r, &chart.x)
            .into_iter()
            .filter_map(|s| Some((chart.x.px(s)?, chart.y.px(eval(r, s)?)?)))
            .collect();
        chart.svg.polyline(&line, stroke);
        if i < LEGEND_REGIMES {
            legend.push(LegendItem {
                mark: Mark::Line(stroke),
                lines: vec![
                    format!(
                        "fit {}: {}",
                        i + 1,
                        units::size_range(r.from_bytes, r.to_bytes)
                    ),
                    format!(
                        "α {} us, {} GB/s",
                        units::us(r.alpha_us),
                        units::gbs(r.busbw_gbs)
                    ),
                ],
            });
        }
    }
    chart.svg.close_group();
    if c.regimes.len() > LEGEND_REGIMES {
        legend.push(LegendItem {
            mark: Mark::Line(Stroke::solid(model::regime_color(LEGEND_REGIMES), 3.0)),
            lines: vec![format!(
                "+{} more regimes",
                c.regimes.len() - LEGEND_REGIMES
            )],
        });
    }
    legend
}

/// A marker at each switch point, labelled with the size and the time jump.
pub(crate) fn switch_markers(
    chart: &mut Chart,
    c: &CurveReport,
    value: impl Fn(&CurvePoint) -> f64,
) -> Vec<LegendItem> {
    if c.switch_points.is_empty() {
        return Vec::new();
    }
    let stroke = Stroke::solid(SWITCH_COLOR, 1.5);
    chart.svg.open_group("switch");
    for s in &c.switch_points {
        let label = format!(
            "switch {} {}",
            units::size(s.bytes),
            units::jump(s.time_jump)
        );
        let low = label_low(chart, c, s.bytes as f64, &value);
        chart.vmarker(s.bytes as f64, stroke, &label, low);
    }
    chart.svg.close_group();
    vec![LegendItem {
        mark: Mark::Line(stroke),
        lines: vec![format!("switch points ({})", c.switch_points.len())],
    }]
}

/// A red ring around the measured point of each anomaly's size (anomalies at sizes without
/// a point are in the report only).
pub(crate) fn anomaly_rings(
    chart: &mut Chart,
    c: &CurveReport,
    value: impl Fn(&CurvePoint) -> f64,
) -> Vec<LegendItem> {
    if c.anomalies.is_empty() {
        return Vec::new();
    }
    let stroke = Stroke::solid(ANOMALY_COLOR, 2.5);
    let pts = model::drawable(c);
    chart.svg.open_group("anomalies");
    for a in &c.anomalies {
        let Some(p) = pts.iter().find(|p| p.bytes == a.bytes) else {
            continue;
        };
        if let (Some(x), Some(y)) = (chart.x.px(p.bytes as f64), chart.y.px(value(p))) {
            chart.svg.ring(x, y, 10.0, stroke);
        }
    }
    chart.svg.close_group();
    vec![LegendItem {
        mark: Mark::Ring(stroke),
        lines: vec![
            format!("anomalies ({})", c.anomalies.len()),
            "details in the report".into(),
        ],
    }]
}

/// Whether a marker label at `bytes` belongs at the bottom of the plot: yes when the nearest
/// measured point sits in the upper half (so the label does not cover the data).
pub(crate) fn label_low(
    chart: &Chart,
    c: &CurveReport,
    bytes: f64,
    value: impl Fn(&CurvePoint) -> f64,
) -> bool {
    let distance = |p: &CurvePoint| (p.bytes as f64 / bytes).log2().abs();
    model::drawable(c)
        .into_iter()
        .min_by(|a, b| distance(a).total_cmp(&distance(b)))
        .and_then(|p| chart.y.px(value(p)))
        .is_some_and(|y| y < (TOP + BOTTOM) / 2.0)
}
