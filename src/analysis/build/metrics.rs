//! The numbers of one curve: its fitted regimes (from [`crate::analysis::fit`]) and the
//! whole-curve figures an engineer reads off a busbw plot.
//!
//! Definitions (every value is finite; "undefined" is reported as 0 or `None`, and a `None`
//! that an engineer would otherwise read as a number comes with its reason for the notes):
//! * latency floor: median of the pooled times of the smallest (up to) three sizes with
//!   `bytes > 0`; `None` when there is none or the smallest size is bandwidth-bound.
//! * measured plateau: median busbw of the largest (up to) three sizes; 0 without points.
//! * fitted plateau: busbw of the last regime; 0 without regimes or when that regime is flat;
//!   flagged when it lies above every measured busbw of its regime (an extrapolation).
//! * half-performance size: `alpha / beta` of the last regime, in bytes of the size axis (where
//!   the latency and bandwidth terms are equal and busbw is half the fitted plateau); `None`
//!   with the reason when undefined (no regime, no bandwidth term, alpha clamped to 0).
//! * 90% size: the smallest measured size whose busbw reaches 90% of the measured plateau.
//! * switch points: the first size of every regime after the first, with the measured relative
//!   time change from the previous size and the change of NCCL's decision when annotated.

use super::pool::Scale;
use crate::analysis::curve::{CurvePoint, Regime, SwitchPoint};
use crate::analysis::fit::fit_piecewise;
use crate::analysis::input::Tuning;
use crate::core::stats::median;

/// Most regimes per curve.
pub const MAX_REGIMES: usize = 4;
/// Fewest points per regime.
pub const MIN_REGIME_POINTS: usize = 3;

/// The regimes of a curve and the points the robust fit rejected.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fitted {
    /// Regimes by size; empty when fewer than [`MIN_REGIME_POINTS`] points can be fitted.
    pub regimes: Vec<Regime>,
    /// Indices into the curve's points of rejected (outlying) sizes.
    pub outliers: Vec<usize>,
    /// Relative noise scale the fit estimated.
    pub noise: f64,
}

/// `v`, or 0 when it is not finite (overflow on absurd inputs).
fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// Fits time versus bytes over the points with `bytes > 0` and a positive time (size-0 calls
/// return before any transfer and do not follow the model).
pub fn fit_regimes(points: &[CurvePoint], scale: &Scale) -> Fitted {
    let idx: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].bytes > 0 && points[i].time_us > 0.0)
        .collect();
    let x: Vec<f64> = idx.iter().map(|&i| points[i].bytes as f64).collect();
    let t: Vec<f64> = idx.iter().map(|&i| points[i].time_us).collect();
    let Some(fit) = fit_piecewise(&x, &t, MAX_REGIMES, MIN_REGIME_POINTS) else {
        return Fitted::default();
    };
    let regimes = fit
        .segments
        .iter()
        .map(|s| {
            let algbw_gbs = if s.beta > 0.0 {
                finite(scale.algbw_ratio / s.beta * 1e-3)
            } else {
                0.0
            };
            Regime {
                from_bytes: points[idx[s.first]].bytes,
                to_bytes: points[idx[s.last]].bytes,
                alpha_us: s.alpha,
                algbw_gbs,
                busbw_gbs: finite(algbw_gbs * scale.busbw_factor),
                rms_rel_err: s.rms_rel_err,
                points: s.last - s.first + 1,
            }
        })
        .collect();
    Fitted {
        regimes,
        outliers: fit.outliers.iter().map(|&i| idx[i]).collect(),
        noise: fit.noise,
    }
}

/// Median time of the smallest up-to-three sizes with `bytes > 0`; `None` (with the reason)
/// when there is none, or when the fit says the smallest size is bandwidth-bound: the first
/// regime's transfer term at that size (`S / B`) exceeds its latency term (alpha), as in a
/// sweep that starts at 8 MiB, which measures no latency. The fitted terms decide, not the
/// measured time, so one noisy small size cannot hide a floor. Without regimes (too few
/// sizes) the median stands unchecked.
pub fn latency_floor_us(
    points: &[CurvePoint],
    regimes: &[Regime],
    scale: &Scale,
) -> (Option<f64>, Option<String>) {
    let sized: Vec<&CurvePoint> = points.iter().filter(|p| p.bytes > 0).collect();
    let Some(floor) = median(sized.iter().take(3).map(|p| p.time_us).collect()) else {
        return (None, Some("latency_floor_us: no size above 0 B".into()));
    };
    if let (Some(first), Some(r)) = (sized.first(), regimes.first()) {
        // beta = algbw_ratio / algbw; a regime without a bandwidth term transfers nothing.
        let transfer = if r.algbw_gbs > 0.0 {
            scale.algbw_ratio * first.bytes as f64 / (r.algbw_gbs * 1e3)
        } else {
            0.0
        };
        if transfer > r.alpha_us {
            return (
                None,
                Some(format!(
                    "latency_floor_us: none; the smallest size {} B is bandwidth-bound (fitted \
                     transfer term {transfer:.2} us above the latency term {:.2} us)",
                    first.bytes, r.alpha_us
                )),
            );
        }
    }
    (Some(floor), None)
}

/// Median busbw of the largest up-to-three sizes, or 0.
pub fn plateau_busbw_gbs(points: &[CurvePoint]) -> f64 {
    let last = points.iter().rev().take(3);
    median(last.map(|p| p.busbw_gbs).collect()).unwrap_or(0.0)
}

/// Busbw of the last regime, or 0.
pub fn plateau_fit_gbs(regimes: &[Regime]) -> f64 {
    regimes.last().map_or(0.0, |r| r.busbw_gbs)
}

/// `alpha x bandwidth` of the last regime in bytes; `None` without regimes, and (with the
/// reason) when that regime has no bandwidth term, or when its alpha is 0 (the fit clamps a negative
/// latency to 0, and a 0 B half-performance size would be an artefact of that clamp).
pub fn half_perf_bytes(regimes: &[Regime], scale: &Scale) -> (Option<f64>, Option<String>) {
    let none = |why: String| (None, Some(format!("half_perf_bytes: none; {why}")));
    // NaN counts as not positive.
    let positive = |v: f64| v > 0.0;
    match regimes.last() {
        // No regimes: nothing fitted, which the empty regime list already says.
        None => (None, None),
        Some(r) if !(positive(r.algbw_gbs) && positive(scale.algbw_ratio)) => {
            none("the last regime's time does not grow with size".into())
        }
        Some(r) if !positive(r.alpha_us) => none(format!(
            "the last regime's ({} B..{} B) fitted latency is 0 (clamped)",
            r.from_bytes, r.to_bytes
        )),
        Some(r) => {
            let v = r.alpha_us * r.algbw_gbs * 1e3 / scale.algbw_ratio;
            if v.is_finite() {
                (Some(v), None)
            } else {
                none("the product overflows".into())
            }
        }
    }
}

/// How far the fitted plateau may lie above the best measured busbw of its regime before the
/// fit counts as extrapolating. An alpha-beta asymptote is always above every measured point
/// (busbw(S) = B x S / (S + alpha x B)); within this share the sweep reached the plateau.
pub const EXTRAPOLATION: f64 = 0.02;

/// Whether the last regime's fitted busbw lies more than [`EXTRAPOLATION`] above every
/// measured busbw of that regime: then the sweep never reached the fitted plateau, the fit
/// extrapolates beyond the data, and the measured plateau is the number to quote.
/// `Some(max measured)` in that case.
pub fn fit_extrapolates(points: &[CurvePoint], regimes: &[Regime]) -> Option<f64> {
    let r = regimes.last().filter(|r| r.busbw_gbs > 0.0)?;
    let max = points
        .iter()
        .filter(|p| p.bytes >= r.from_bytes && p.bytes <= r.to_bytes)
        .map(|p| p.busbw_gbs)
        .fold(f64::NEG_INFINITY, f64::max);
    (max.is_finite() && r.busbw_gbs > max * (1.0 + EXTRAPOLATION)).then_some(max)
}

/// Smallest size with busbw at least 90% of `plateau`; `None` when the plateau is not positive.
pub fn sat90_bytes(points: &[CurvePoint], plateau: f64) -> Option<u64> {
    if plateau > 0.0 {
        points
            .iter()
            .find(|p| p.busbw_gbs >= 0.9 * plateau)
            .map(|p| p.bytes)
    } else {
        None
    }
}

/// `plateau / peak` in percent when a positive peak is given.
pub fn efficiency_pct(plateau: f64, peak_gbs: Option<f64>) -> Option<f64> {
    peak_gbs
        .filter(|p| p.is_finite() && *p > 0.0)
        .map(|p| finite(plateau / p * 100.0))
}

/// The switch point at the first size of each regime after the first.
pub fn switch_points(points: &[CurvePoint], regimes: &[Regime]) -> Vec<SwitchPoint> {
    regimes
        .iter()
        .skip(1)
        .filter_map(|r| {
            let j = points.iter().position(|p| p.bytes == r.from_bytes)?;
            let (prev, here) = (points.get(j.checked_sub(1)?)?, &points[j]);
            let time_jump = if prev.time_us > 0.0 {
                finite(here.time_us / prev.time_us - 1.0)
            } else {
                0.0
            };
            Some(SwitchPoint {
                bytes: r.from_bytes,
                time_jump,
                tuning_change: tuning_change(prev.tuning.as_ref(), here.tuning.as_ref()),
            })
        })
        .collect()
}

/// `LL/Ring -> LL128/Ring` (protocol/algorithm, plus channels when those change), `no decision
/// change` when both sides agree, `None` unless both sides are annotated.
pub fn tuning_change(before: Option<&Tuning>, after: Option<&Tuning>) -> Option<String> {
    let (a, b) = (before?, after?);
    if a.same_decision(b) {
        return Some("no decision change".into());
    }
    let label = |t: &Tuning| format!("{}/{}", t.proto, t.algo);
    let mut s = format!("{} -> {}", label(a), label(b));
    if a.channels != b.channels {
        s.push_str(&format!(" (channels {} -> {})", a.channels, b.channels));
    }
    Some(s)
}
