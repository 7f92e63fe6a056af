//! Charts of one curve, written as SVG by hand (a tiny builder: lines, circles, rectangles,
//! text) and rasterised to PNG with resvg and the embedded DejaVu Sans, 1200x700 px:
//!
//! * [`busbw_svg`]: busbw versus size, log2 size axis, measured points with min-max whiskers,
//!   the fitted model per regime, plateau, half-performance and 90% markers, switch points,
//!   and NCCL's algorithm/protocol bands when the points carry tuning annotations;
//! * [`time_svg`]: time versus size, log-log, points and fitted lines.
//!
//! Elements are grouped by what they show (`<g class="points">`, `model`, `plateau`,
//! `half-perf`, `sat90`, `switch`, `bands`, `floor`, `legend`), and nothing non-finite is
//! ever written: curves with no points or no regimes still give a valid, empty chart.

use crate::analysis::curve::CurveReport;
use crate::core::error::Error;

pub(crate) mod axes;
mod busbw;
mod common;
pub(crate) mod frame;
mod model;
mod png;
pub(crate) mod scale;
pub(crate) mod svg;
mod time;

#[cfg(test)]
mod tests;

pub(crate) use svg::NS_ATTR as SVG_NS_ATTR;

/// Colour of measured points.
const POINT_COLOR: &str = "#1c5fa8";

/// The busbw-versus-size chart of a curve, a standalone SVG document.
pub fn busbw_svg(curve: &CurveReport) -> String {
    busbw::chart(curve)
}

/// The time-versus-size chart of a curve (log-log), a standalone SVG document.
pub fn time_svg(curve: &CurveReport) -> String {
    time::chart(curve)
}

/// Rasterises an SVG document (such as a chart above) to PNG bytes, with the embedded font
/// only; errors (malformed SVG, absurd size) are [`Error::Output`].
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, Error> {
    png::svg_to_png(svg)
}
