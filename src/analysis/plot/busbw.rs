//! The busbw-versus-size chart: measured medians with min-max whiskers, the fitted model per
//! regime, the plateau, the half-performance and 90% sizes, the switch points, and NCCL's
//! algorithm/protocol bands when the points carry tuning annotations.

use crate::analysis::curve::CurveReport;
use crate::analysis::plot::frame::{Chart, LegendItem, Mark, BOTTOM, TOP};
use crate::analysis::plot::model::{self, Band};
use crate::analysis::plot::scale::Axis;
use crate::analysis::plot::svg::{Stroke, TextStyle};
use crate::analysis::plot::{axes, common};
use crate::analysis::units;

/// Colour of the half-performance marker.
const HALF_COLOR: &str = "#c92a2a";
/// Colour of the 90% marker.
const SAT_COLOR: &str = "#1864ab";
/// Colour of the plateau line.
const PLATEAU_COLOR: &str = "#343a40";

/// The chart as a standalone SVG document.
pub(crate) fn chart(c: &CurveReport) -> String {
    let x = model::size_axis(c);
    let (y, step) = axes::busbw_axis(y_values(c, &x));
    let mut chart = Chart::new(
        &format!("{}: busbw versus size", units::key_label(c)),
        &common::subtitle(c),
        x,
        y,
    );
    let bands = model::bands(c);
    draw_bands(&mut chart, &bands);
    axes::draw_busbw_axes(&mut chart, step);
    let mut legend =
        common::model_lines(&mut chart, c, |r, s| model::busbw_gbs(r, c.busbw_factor, s));
    legend.extend(plateau(&mut chart, c));
    legend.extend(markers(&mut chart, c));
    legend.extend(common::switch_markers(&mut chart, c, |p| p.busbw_gbs));
    legend.extend(common::anomaly_rings(&mut chart, c, |p| p.busbw_gbs));
    legend.insert(
        0,
        common::points(&mut chart, c, |p| {
            let spread = |t: f64| p.busbw_gbs * p.time_us / t;
            (p.busbw_gbs, spread(p.time_max_us), spread(p.time_min_us))
        }),
    );
    let mut seen: Vec<&str> = Vec::new();
    for b in &bands {
        if !seen.contains(&b.label.as_str()) {
            seen.push(&b.label);
            legend.push(LegendItem {
                mark: Mark::Swatch(b.color),
                lines: vec![format!("NCCL {}", b.label)],
            });
        }
    }
    chart.legend(&legend);
    chart.finish()
}

/// The busbw values the axis must show: points (with whiskers), plateaus and model ends.
fn y_values(c: &CurveReport, x: &Axis) -> Vec<f64> {
    let points = model::drawable(c).into_iter().flat_map(|p| {
        let hi = p.busbw_gbs * p.time_us / p.time_min_us;
        [p.busbw_gbs, hi]
    });
    let fit = c.regimes.iter().filter_map(|r| {
        let sizes = model::regime_sizes(r, x);
        model::busbw_gbs(r, c.busbw_factor, *sizes.last()?)
    });
    points
        .chain(fit)
        .chain([c.plateau_busbw_gbs, c.plateau_busbw_fit_gbs])
        .collect()
}

/// Shaded spans of NCCL's choices, labelled above the plot area when the label fits.
fn draw_bands(chart: &mut Chart, bands: &[Band]) {
    if bands.is_empty() {
        return;
    }
    chart.svg.open_group("bands");
    for b in bands {
        let lo = chart.x.px(b.lo_bytes).unwrap_or(chart.x.px_lo);
        let hi = chart.x.px(b.hi_bytes).unwrap_or(chart.x.px_hi);
        if hi - lo < 1.0 {
            continue;
        }
        chart
            .svg
            .rect(lo, TOP, hi - lo, BOTTOM - TOP, b.color, Some(0.8));
        // About 8.5 px per character at 14 px.
        let fits = |s: &str| s.chars().count() as f64 * 8.5 + 6.0 <= hi - lo;
        let proto = b.label.rsplit('/').next().unwrap_or_default();
        let label = if fits(&b.label) {
            Some(b.label.as_str())
        } else if fits(proto) {
            Some(proto)
        } else {
            None
        };
        if let Some(label) = label {
            let style = TextStyle::new(14.0, "middle", "#333333");
            chart.svg.text((lo + hi) / 2.0, TOP - 8.0, label, style);
        }
    }
    chart.svg.close_group();
}

/// The dashed plateau line labelled with the measured and fitted values (left end, where
/// the curve is low).
fn plateau(chart: &mut Chart, c: &CurveReport) -> Vec<LegendItem> {
    let Some(y) = chart
        .y
        .px(c.plateau_busbw_gbs)
        .filter(|_| c.plateau_busbw_gbs > 0.0)
    else {
        return Vec::new();
    };
    let stroke = Stroke::dashed(PLATEAU_COLOR, 2.0, "10 6");
    let text = format!("plateau {} GB/s", units::gbs(c.plateau_busbw_gbs));
    chart.svg.open_group("plateau");
    chart.svg.line(chart.x.px_lo, y, chart.x.px_hi, y, stroke);
    let style = TextStyle::new(15.0, "start", PLATEAU_COLOR);
    chart.svg.text(chart.x.px_lo + 8.0, y - 8.0, &text, style);
    chart.svg.close_group();
    vec![LegendItem {
        mark: Mark::Line(stroke),
        lines: vec![
            text,
            match c.plateau_busbw_fit_gbs {
                fit if fit.is_finite() => format!("fit {} GB/s", units::gbs(fit)),
                _ => "no fit".to_string(),
            },
        ],
    }]
}

/// Half-performance and 90%-of-plateau markers.
fn markers(chart: &mut Chart, c: &CurveReport) -> Vec<LegendItem> {
    let mut legend = Vec::new();
    let half = c.half_perf_bytes.unwrap_or(f64::NAN);
    if half.is_finite() && half > 0.0 {
        let stroke = Stroke::dashed(HALF_COLOR, 2.0, "6 4");
        let text = format!("half-perf {}", units::size_f(half));
        chart.svg.open_group("half-perf");
        let low = common::label_low(chart, c, half, |p| p.busbw_gbs);
        chart.vmarker(half, stroke, &text, low);
        chart.svg.close_group();
        legend.push(LegendItem {
            mark: Mark::Line(stroke),
            lines: vec![text, "(alpha x bandwidth)".into()],
        });
    }
    if let Some(sat) = c.sat90_bytes.filter(|b| *b > 0) {
        let stroke = Stroke::dashed(SAT_COLOR, 2.0, "2 4");
        let text = format!("90% at {}", units::size(sat));
        chart.svg.open_group("sat90");
        let low = common::label_low(chart, c, sat as f64, |p| p.busbw_gbs);
        chart.vmarker(sat as f64, stroke, &text, low);
        chart.svg.close_group();
        legend.push(LegendItem {
            mark: Mark::Line(stroke),
            lines: vec![text, "(of plateau)".into()],
        });
    }
    legend
}
