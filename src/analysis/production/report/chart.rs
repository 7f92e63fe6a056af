//! The production chart of one (collective, ranks): the benchmark's measured busbw curve,
//! and over it each group of the job at its size: a vertical band from its p5 to its p95
//! busbw, a dot at the median whose area grows with the group's share of the job's
//! communication time, one colour per communicator.

use crate::analysis::curve::CurveReport;
use crate::analysis::plot::axes;
use crate::analysis::plot::frame::{Chart, LegendItem, Mark};
use crate::analysis::plot::svg::Stroke;
use crate::analysis::production::model::Group;
use crate::analysis::production::report::tables;
use crate::analysis::units;

/// The benchmark curve's colour.
const BENCH_COLOR: &str = "#343a40";
/// One colour per communicator (cycled).
const COMM_COLORS: [&str; 6] = [
    "#1c5fa8", "#d9480f", "#2b8a3e", "#862e9c", "#c2255c", "#e67700",
];

/// The chart as a standalone SVG document; `groups` are the job's groups of this curve's
/// collective and rank count.
pub(crate) fn chart(curve: &CurveReport, groups: &[&Group]) -> String {
    let sizes = curve.points.iter().map(|p| p.bytes as f64);
    let x = axes::size_axis(sizes.chain(groups.iter().map(|g| g.bytes as f64)), false);
    let bw = curve.points.iter().map(|p| p.busbw_gbs);
    let (y, step) = axes::busbw_axis(bw.chain(groups.iter().map(|g| g.busbw_gbs.p95)));
    let mut chart = Chart::new(
        &format!("{}: the job against the benchmark", units::key_label(curve)),
        &format!(
            "{} job group(s); bands p5..p95 busbw, dot area by share of communication time",
            groups.len()
        ),
        x,
        y,
    );
    axes::draw_busbw_axes(&mut chart, step);
    let mut legend = Vec::new();
    chart.svg.open_group("benchmark");
    let mut pts: Vec<(f64, f64)> = curve
        .points
        .iter()
        .filter_map(|p| Some((chart.x.px(p.bytes as f64)?, chart.y.px(p.busbw_gbs)?)))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    chart.svg.polyline(&pts, Stroke::solid(BENCH_COLOR, 2.5));
    chart.svg.close_group();
    legend.push(LegendItem {
        mark: Mark::Line(Stroke::solid(BENCH_COLOR, 2.5)),
        lines: vec!["benchmark (measured)".into()],
    });
    let mut comms: Vec<String> = Vec::new();
    chart.svg.open_group("job");
    for g in groups {
        let name = tables::comm(&g.comm_name, &g.comm_id);
        let i = comms.iter().position(|c| *c == name).unwrap_or_else(|| {
            comms.push(name.clone());
            comms.len() - 1
        });
        let color = COMM_COLORS[i % COMM_COLORS.len()];
        let b = &g.busbw_gbs;
        let (Some(px), Some(y5), Some(y95), Some(y50)) = (
            chart.x.px(g.bytes as f64),
            chart.y.px(b.p5),
            chart.y.px(b.p95),
            chart.y.px(b.p50),
        ) else {
            continue;
        };
        chart
            .svg
            .rect(px - 5.0, y95, 10.0, (y5 - y95).max(1.0), color, Some(0.3));
        chart
            .svg
            .circle(px, y50, 3.0 + 25.0 * g.time_share.sqrt(), color);
    }
    chart.svg.close_group();
    for (i, c) in comms.iter().enumerate() {
        legend.push(LegendItem {
            mark: Mark::Dot(COMM_COLORS[i % COMM_COLORS.len()]),
            lines: vec![c.clone()],
        });
    }
    chart.legend(&legend);
    chart.finish()
}
