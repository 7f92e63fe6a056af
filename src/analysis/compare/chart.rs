//! One chart per collective: the busbw-versus-size curves of before (dashed) and after
//! (solid), one colour per curve (type, op, root, ranks, placement), with sizes called slower
//! ringed in red and faster in green. Drawn with the analysis plot kit (same layout, axes,
//! legend and escaping, so nothing non-finite is ever written).

use super::model::CurveComparison;
use crate::analysis::plot::axes;
use crate::analysis::plot::frame::{Chart, LegendItem, Mark};
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

/// The chart of one collective's curves, a standalone SVG document.
pub(crate) fn busbw_svg(collective: &str, curves: &[&CurveComparison]) -> String {
    let sizes = curves.iter().flat_map(|c| c.sizes.iter());
    let x = axes::size_axis(sizes.clone().map(|s| s.bytes as f64), true);
    let (y, step) = axes::busbw_axis(sizes.flat_map(|s| [s.before.busbw_gbs, s.after.busbw_gbs]));
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
    axes::draw_busbw_axes(&mut chart, step);
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
