//! The time-versus-size chart on log-log axes: measured medians with min-max whiskers, the
//! fitted `alpha + S / B` line per regime, the latency floor and the switch points.

use crate::analysis::curve::CurveReport;
use crate::analysis::plot::common;
use crate::analysis::plot::frame::{Chart, LegendItem, Mark, BOTTOM, TOP};
use crate::analysis::plot::model;
use crate::analysis::plot::scale::{self, transform, Axis, Kind};
use crate::analysis::plot::svg::{Stroke, TextStyle};
use crate::analysis::units;

/// Colour of the latency-floor line.
const FLOOR_COLOR: &str = "#343a40";

/// The chart as a standalone SVG document.
pub(crate) fn chart(c: &CurveReport) -> String {
    let x = model::size_axis(c);
    let (lo, hi) = time_range(c, &x);
    let y = Axis::new(Kind::Log10, lo, hi, BOTTOM, TOP);
    let mut chart = Chart::new(
        &format!("{}: time versus size", units::key_label(c)),
        &common::subtitle(c),
        x,
        y,
    );
    chart.axes(
        &scale::size_ticks(&x),
        &scale::time_ticks(&y),
        "message size (bytes, log2 scale)",
        "time per operation (log scale)",
    );
    let mut legend =
        common::model_lines(&mut chart, c, |r, s| model::time_us(r, c.busbw_factor, s));
    legend.extend(floor(&mut chart, c));
    legend.extend(common::switch_markers(&mut chart, c, |p| p.time_us));
    legend.extend(common::anomaly_rings(&mut chart, c, |p| p.time_us));
    legend.insert(
        0,
        common::points(&mut chart, c, |p| (p.time_us, p.time_min_us, p.time_max_us)),
    );
    chart.legend(&legend);
    chart.finish()
}

/// The log10 time range in whole decades covering points, whiskers, model ends and the
/// latency floor; 1 us .. 10 us when there is nothing.
fn time_range(c: &CurveReport, x: &Axis) -> (f64, f64) {
    let points = model::drawable(c)
        .into_iter()
        .flat_map(|p| [p.time_us, p.time_min_us, p.time_max_us]);
    let fit = c.regimes.iter().flat_map(|r| {
        let sizes = model::regime_sizes(r, x);
        [sizes.first(), sizes.last()]
            .into_iter()
            .flatten()
            .filter_map(|s| model::time_us(r, c.busbw_factor, *s))
            .collect::<Vec<_>>()
    });
    let (lo, hi) = points
        .chain(fit)
        .chain(c.latency_floor_us)
        .filter_map(|t| transform(Kind::Log10, t))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| {
            (lo.min(t), hi.max(t))
        });
    if lo > hi {
        return (0.0, 1.0);
    }
    let (lo, hi) = ((lo - 0.02).floor(), (hi + 0.02).ceil());
    (lo.max(-300.0), hi.min(300.0).max(lo + 1.0))
}

/// The dashed latency-floor line, labelled at the right end (where times are high).
fn floor(chart: &mut Chart, c: &CurveReport) -> Vec<LegendItem> {
    let Some(floor) = c.latency_floor_us else {
        return Vec::new();
    };
    let Some(y) = chart.y.px(floor) else {
        return Vec::new();
    };
    let stroke = Stroke::dashed(FLOOR_COLOR, 2.0, "10 6");
    let text = format!("latency floor {} us", units::us(floor));
    chart.svg.open_group("floor");
    chart.svg.line(chart.x.px_lo, y, chart.x.px_hi, y, stroke);
    let style = TextStyle::new(15.0, "end", FLOOR_COLOR);
    chart.svg.text(chart.x.px_hi - 8.0, y - 8.0, &text, style);
    chart.svg.close_group();
    vec![LegendItem {
        mark: Mark::Line(stroke),
        lines: vec![text],
    }]
}
