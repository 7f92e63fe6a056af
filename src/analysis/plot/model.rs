//! The fitted model evaluated for drawing, the size axis every chart shares, and the tuning
//! bands (runs of points where NCCL made the same algorithm/protocol choice).
//!
//! Per regime `T(S) = alpha + S / B` with `B` the asymptotic algbw, so
//! `algbw(S) = S / T(S)` and `busbw(S) = algbw(S) x factor`.

use crate::analysis::curve::{CurvePoint, CurveReport, Regime};
use crate::analysis::plot::axes;
use crate::analysis::plot::scale::{transform, Axis, Kind};
use crate::analysis::units;

/// Line colours of regimes 1, 2, ... (cycled).
pub(crate) const REGIME_COLORS: [&str; 6] = [
    "#d9480f", "#2b8a3e", "#862e9c", "#c2255c", "#e67700", "#0b7285",
];

/// Light fills of tuning bands (cycled by distinct choice).
pub(crate) const BAND_COLORS: [&str; 6] = [
    "#dbe8f7", "#fde4cc", "#d8f0d2", "#ebe0f7", "#fbdde6", "#f3f1c4",
];

/// Model samples drawn per regime.
const SAMPLES: usize = 48;

/// The colour of regime `i` (0-based).
pub(crate) fn regime_color(i: usize) -> &'static str {
    REGIME_COLORS[i % REGIME_COLORS.len()]
}

/// The regime's asymptotic algbw in GB/s: the fitted value, else busbw / factor; `None` when
/// neither is a positive number.
fn algbw(r: &Regime, factor: f64) -> Option<f64> {
    [r.algbw_gbs, r.busbw_gbs / factor]
        .into_iter()
        .find(|b| b.is_finite() && *b > 0.0)
}

/// Modelled time in microseconds at `bytes`.
pub(crate) fn time_us(r: &Regime, factor: f64, bytes: f64) -> Option<f64> {
    let t = r.alpha_us + bytes / (algbw(r, factor)? * 1e3);
    (t.is_finite() && t > 0.0).then_some(t)
}

/// Modelled busbw in GB/s at `bytes`.
pub(crate) fn busbw_gbs(r: &Regime, factor: f64, bytes: f64) -> Option<f64> {
    let b = bytes / (time_us(r, factor, bytes)? * 1e3) * factor;
    b.is_finite().then_some(b)
}

/// Sizes to evaluate a regime at: log-spaced over its range cut to the axis domain (a
/// one-size regime is widened by a quarter doubling each side so it shows as a short line).
pub(crate) fn regime_sizes(r: &Regime, x: &Axis) -> Vec<f64> {
    let (Some(mut lo), Some(mut hi)) = (
        transform(Kind::Log2, r.from_bytes as f64),
        transform(Kind::Log2, r.to_bytes as f64),
    ) else {
        return Vec::new();
    };
    if hi <= lo {
        (lo, hi) = (lo - 0.25, lo + 0.25);
    }
    let (lo, hi) = (lo.max(x.lo), hi.min(x.hi));
    if hi < lo {
        return Vec::new();
    }
    (0..SAMPLES)
        .map(|i| 2f64.powf(lo + (hi - lo) * i as f64 / (SAMPLES - 1) as f64))
        .collect()
}

/// Points a chart can place: positive size and finite values.
pub(crate) fn drawable(c: &CurveReport) -> Vec<&CurvePoint> {
    let mut pts: Vec<&CurvePoint> = c
        .points
        .iter()
        .filter(|p| p.bytes > 0 && p.time_us.is_finite() && p.busbw_gbs.is_finite())
        .collect();
    pts.sort_by_key(|p| p.bytes);
    pts
}

/// The size axis of a curve: every point and regime boundary, half a doubling of margin each
/// side; 1 B .. 1 KiB when there is nothing to show.
pub(crate) fn size_axis(c: &CurveReport) -> Axis {
    let pts = drawable(c);
    let sizes = pts
        .iter()
        .map(|p| p.bytes)
        .chain(c.regimes.iter().flat_map(|r| [r.from_bytes, r.to_bytes]));
    axes::size_axis(sizes.map(|b| b as f64), true)
}

/// A run of consecutive points with the same algorithm/protocol.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Band {
    /// Left edge in bytes (midway, on the log axis, from the previous run; 0 = axis start).
    pub lo_bytes: f64,
    /// Right edge in bytes (`f64::MAX` = axis end).
    pub hi_bytes: f64,
    /// `algorithm/protocol`.
    pub label: String,
    /// Fill colour (one per distinct label).
    pub color: &'static str,
}

/// Tuning bands from the points' annotations; empty when no point carries one. A point
/// without annotation ends the run before it.
pub(crate) fn bands(c: &CurveReport) -> Vec<Band> {
    let pts = drawable(c);
    let mut runs: Vec<(usize, usize, String)> = Vec::new();
    for (i, p) in pts.iter().enumerate() {
        let Some(label) = p.tuning.as_ref().map(units::tuning) else {
            continue;
        };
        match runs.last_mut() {
            Some((_, end, last)) if *end + 1 == i && *last == label => *end = i,
            _ => runs.push((i, i, label)),
        }
    }
    let mid = |a: usize, b: usize| (pts[a].bytes as f64 * pts[b].bytes as f64).sqrt();
    let mut labels: Vec<String> = Vec::new();
    runs.iter()
        .map(|(start, end, label)| {
            let lo = if *start == 0 {
                0.0
            } else {
                mid(start - 1, *start)
            };
            let hi = if end + 1 >= pts.len() {
                f64::MAX
            } else {
                mid(*end, end + 1)
            };
            let n = labels.iter().position(|l| l == label).unwrap_or_else(|| {
                labels.push(label.clone());
                labels.len() - 1
            });
            Band {
                lo_bytes: lo,
                hi_bytes: hi,
                label: label.clone(),
                color: BAND_COLORS[n % BAND_COLORS.len()],
            }
        })
        .collect()
}
