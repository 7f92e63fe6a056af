//! One chart per collective: the busbw-versus-size curves of before (dashed) and after
//! (solid), one colour per curve (type, op, root, ranks, placement), with sizes called slower
//! ringed in red and faster in green. Drawn with the analysis plot kit (same layout, axes,
//! legend and escaping, so nothing non-finite is ever written).

use super::model::CurveComparison;
use crate::analysis::plot::frame::{Chart, LegendItem, Mark, BOTTOM, LEFT, RIGHT, TOP};
use crate::analysis::plot::scale::{self, transform, Axis, Kind};
use crate::analysis::plot::svg::Stroke;

/// Line colours of curves 1, 2, ... (cycled).
const COLORS: [&str; 6] = [
    "#1c5fa8", "#d9480f", "#2b8a3e", "#862e9c", "#c2255c", "#0b7285",
];
/// Ring colour of sizes called slower.
const SLOWER: &str = "#e03131";
/// Ring colour of sizes called faster.
const FASTER: &str = "#2f9e44";
/// Curves listed one by one in the legend.
const LEGEND_CURVES: usize = 8;

/// The legend name of a curve within its collective's chart.
fn short(c: &CurveComparison) -> String {
    let mut parts = vec![c.id.dtype.clone()];
    if !c.id.op.is_empty() {
        parts.push(c.id.op.clone());
    }
    if c.id.root >= 0 {
        parts.push(format!("r{}", c.id.root));
    }
    parts.push(format!("n{}", c.id.nranks));
    parts.push(
        if c.id.placement == "in_place" {
            "ip"
        } else {
            "oop"
        }
        .into(),
    );
    parts.join(" ")
}

/// The log2 size axis over every compared size, half a doubling of margin each side.
fn size_axis(curves: &[&CurveComparison]) -> Axis {
    let ts = curves
        .iter()
        .flat_map(|c| c.sizes.iter())
        .filter_map(|s| transform(Kind::Log2, s.bytes as f64));
    let (lo, hi) = ts.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| {
        (lo.min(t), hi.max(t))
    });
    let (lo, hi) = if lo > hi {
        (0.0, 10.0)
    } else if hi - lo < 2.0 {
        ((lo + hi) / 2.0 - 1.5, (lo + hi) / 2.0 + 1.5)
    } else {
        (lo - 0.5, hi + 0.5)
    };
    Axis::new(Kind::Log2, lo, hi, LEFT, RIGHT)
}

/// The chart of one collective's curves, a standalone SVG document.
pub(crate) fn busbw_svg(collective: &str, curves: &[&CurveComparison]) -> String {
    let x = size_axis(curves);
    let top = curves
        .iter()
        .flat_map(|c| c.sizes.iter())
        .flat_map(|s| [s.before.busbw_gbs, s.after.busbw_gbs])
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.05 } else { 1.0 };
    let step = scale::nice_step(top, 6.0);
    let y = Axis::new(
        Kind::Linear,
        0.0,
        (top / step).ceil().max(1.0) * step,
        BOTTOM,
        TOP,
    );
    let (slower, faster): (usize, usize) = curves
        .iter()
        .fold((0, 0), |(s, f), c| (s + c.slower, f + c.faster));
    let mut chart = Chart::new(
        &format!("{collective}: busbw before (dashed) and after (solid)"),
        &format!(
            "{} curve(s); {slower} size(s) slower, {faster} faster",
            curves.len()
        ),
        x,
        y,
    );
    chart.axes(
        &scale::size_ticks(&x),
        &scale::linear_ticks(&y, step),
        "message size (bytes, log2 scale)",
        "bus bandwidth (GB/s)",
    );
    let mut legend = Vec::new();
    chart.svg.open_group("curves");
    for (i, c) in curves.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let line = |chart: &Chart, after: bool| -> Vec<(f64, f64)> {
            c.sizes
                .iter()
                .filter_map(|s| {
                    let v = if after { &s.after } else { &s.before };
                    Some((chart.x.px(s.bytes as f64)?, chart.y.px(v.busbw_gbs)?))
                })
                .collect()
        };
        let before = line(&chart, false);
        let after = line(&chart, true);
        chart
            .svg
            .polyline(&before, Stroke::dashed(color, 2.0, "8 5"));
        chart.svg.polyline(&after, Stroke::solid(color, 2.5));
        for (px, py) in &after {
            chart.svg.circle(*px, *py, 3.5, color);
        }
        if i < LEGEND_CURVES {
            legend.push(LegendItem {
                mark: Mark::Line(Stroke::solid(COLORS[i % COLORS.len()], 2.5)),
                lines: vec![short(c)],
            });
        }
    }
    chart.svg.close_group();
    if curves.len() > LEGEND_CURVES {
        legend.push(LegendItem {
            mark: Mark::Dot("#888888"),
            lines: vec![format!("+{} more curves", curves.len() - LEGEND_CURVES)],
        });
    }
    for (verdict, color, count) in [("slower", SLOWER, slower), ("faster", FASTER, faster)] {
        if count == 0 {
            continue;
        }
        let stroke = Stroke::solid(color, 2.5);
        chart.svg.open_group(verdict);
        for c in curves {
            for s in c.sizes.iter().filter(|s| s.verdict == verdict) {
                if let (Some(px), Some(py)) =
                    (chart.x.px(s.bytes as f64), chart.y.px(s.after.busbw_gbs))
                {
                    chart.svg.ring(px, py, 9.0, stroke);
                }
            }
        }
        chart.svg.close_group();
        legend.push(LegendItem {
            mark: Mark::Ring(Stroke::solid(color, 2.5)),
            lines: vec![format!("{verdict} ({count})")],
        });
    }
    legend.push(LegendItem {
        mark: Mark::Line(Stroke::dashed("#555555", 2.0, "8 5")),
        lines: vec!["dashed: before".into(), "solid: after".into()],
    });
    chart.legend(&legend);
    chart.finish()
}
