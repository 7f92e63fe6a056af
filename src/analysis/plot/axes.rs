//! The axes every busbw-versus-size chart shares (analyze's, compare's and the production
//! report's): a log2 size axis with half a doubling of margin, a linear busbw axis from zero
//! to a round step above the highest value, and their ticks and titles.

use crate::analysis::plot::frame::{Chart, BOTTOM, LEFT, RIGHT, TOP};
use crate::analysis::plot::scale::{self, transform, Axis, Kind};

/// The log2 axis over `bytes`, half a doubling of margin each side (0 to 10 with no size).
/// With `widen`, a span under two doublings is widened to three around its middle, so that a
/// single size does not fill the plot.
pub(crate) fn size_axis(bytes: impl IntoIterator<Item = f64>, widen: bool) -> Axis {
    let ts = bytes.into_iter().filter_map(|b| transform(Kind::Log2, b));
    let (lo, hi) = ts.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| {
        (lo.min(t), hi.max(t))
    });
    let (lo, hi) = if lo > hi {
        (0.0, 10.0)
    } else if widen && hi - lo < 2.0 {
        let mid = (lo + hi) / 2.0;
        (mid - 1.5, mid + 1.5)
    } else {
        (lo - 0.5, hi + 0.5)
    };
    Axis::new(Kind::Log2, lo, hi, LEFT, RIGHT)
}

/// The busbw axis over `values` (non-finite and non-positive ones ignored): from 0 to the
/// round step at or above the highest value plus 5%; with its tick step.
pub(crate) fn busbw_axis(values: impl IntoIterator<Item = f64>) -> (Axis, f64) {
    let top = values
        .into_iter()
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.05 } else { 1.0 };
    let step = scale::nice_step(top, 6.0);
    let hi = (top / step).ceil().max(1.0) * step;
    (Axis::new(Kind::Linear, 0.0, hi, BOTTOM, TOP), step)
}

/// Draws the size and busbw axes of `chart`, busbw ticks every `step`.
pub(crate) fn draw_busbw_axes(chart: &mut Chart, step: f64) {
    let (x, y) = (chart.x, chart.y);
    chart.axes(
        &scale::size_ticks(&x),
        &scale::linear_ticks(&y, step),
        "message size (bytes, log2 scale)",
        "bus bandwidth (GB/s)",
    );
}
