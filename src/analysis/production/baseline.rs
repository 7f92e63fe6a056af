//! The benchmark side: the curves `ncclbench analyze` builds from benchmark result files, and
//! the benchmark's time and busbw at a job's size.
//!
//! A job's size is read off the benchmark's **fitted** curve where a fitted regime covers it:
//! `T = alpha + r x S / B` of that regime (the fit `analyze` reports, which smooths one noisy
//! size and leaves out outliers). Where no regime covers the size (a curve too short to fit,
//! or the doubling between two regimes) the **measured** curve (its pooled median per size) is
//! read instead: at a size the benchmark ran, that point; between two sizes it ran, the time
//! interpolated linearly in log(size)-log(time) between them (the alpha-beta model is locally a
//! power law). Outside [smallest, largest] measured size there is no number, only the reason:
//! the benchmark says nothing about sizes it did not run, so nothing is extrapolated.

use crate::analysis::curve::{CurvePoint, CurveReport};
use crate::analysis::units;
use crate::core::collective::Collective;

/// Benchmark curves, as `analyze` built them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Baseline {
    /// The benchmark result files (for the report's inputs line).
    pub files: Vec<String>,
    /// The curves.
    pub curves: Vec<CurveReport>,
}

/// The benchmark at one size.
#[derive(Debug, Clone, PartialEq)]
pub struct AtSize {
    /// Time of one call, microseconds.
    pub time_us: f64,
    /// Bus bandwidth, GB/s.
    pub busbw_gbs: f64,
    /// `fitted`, `measured` or `interpolated`.
    pub source: &'static str,
    /// NCCL's algorithm/protocol there (`Ring/LL128`), when the benchmark carries it and, for
    /// a size it did not run, both measured neighbours agree.
    pub algo_proto: Option<String>,
}

impl Baseline {
    /// The curve to compare a job's `collective` at `nranks` with: the out-of-place curve
    /// (nccl-tests' headline placement) of that collective and rank count with the most
    /// sizes, the first in key order on a tie. `Err` says what the baseline has instead.
    pub fn curve_for(&self, collective: &str, nranks: u32) -> Result<&CurveReport, String> {
        let mut candidates: Vec<&CurveReport> = self
            .curves
            .iter()
            .filter(|c| c.collective == collective && c.nranks == nranks as usize)
            .collect();
        candidates.sort_by_key(|c| (c.placement != "out_of_place", usize::MAX - c.points.len()));
        candidates.first().copied().ok_or_else(|| {
            let mut have: Vec<String> = self
                .curves
                .iter()
                .map(|c| format!("{} {} ranks", c.collective, units::nranks(c.nranks)))
                .collect();
            have.dedup();
            format!(
                "no benchmark curve for {collective} at {nranks} ranks (the baseline has: {})",
                if have.is_empty() {
                    "none".to_string()
                } else {
                    have.join(", ")
                }
            )
        })
    }
}

/// Points usable for reading off a size: positive size and time, by size.
fn usable(c: &CurveReport) -> Vec<&CurvePoint> {
    let mut pts: Vec<&CurvePoint> = c
        .points
        .iter()
        .filter(|p| p.bytes > 0 && p.time_us.is_finite() && p.time_us > 0.0)
        .collect();
    pts.sort_by_key(|p| p.bytes);
    pts
}

/// busbw of `bytes` in `time_us` on curve `c` (its own factors).
fn busbw(c: &CurveReport, bytes: f64, time_us: f64) -> f64 {
    let ratio = Collective::parse(&c.collective)
        .filter(|_| c.nranks > 0)
        .map_or(1.0, |col| col.algbw_ratio(c.nranks));
    bytes * ratio / time_us * 1e-3 * c.busbw_factor
}

/// `Ring/LL128` of a point's tuning.
fn choice(p: &CurvePoint) -> Option<String> {
    p.tuning.as_ref().map(units::tuning)
}

/// The benchmark at `bytes` on curve `c`, or why there is no number.
pub fn at(c: &CurveReport, bytes: f64) -> Result<AtSize, String> {
    let pts = usable(c);
    let (Some(first), Some(last)) = (pts.first(), pts.last()) else {
        return Err("the benchmark curve has no usable points".into());
    };
    if bytes < first.bytes as f64 {
        return Err(format!(
            "size {} is below the benchmark's smallest size {}: not extrapolated",
            units::size_f(bytes),
            units::size(first.bytes)
        ));
    }
    if bytes > last.bytes as f64 {
        return Err(format!(
            "size {} is above the benchmark's largest size {}: not extrapolated",
            units::size_f(bytes),
            units::size(last.bytes)
        ));
    }
    let exact = pts.iter().find(|p| p.bytes as f64 == bytes);
    let hi = pts.partition_point(|p| (p.bytes as f64) < bytes);
    let algo_proto = match exact {
        Some(p) => choice(p),
        None => {
            let (ca, cb) = (choice(pts[hi - 1]), choice(pts[hi]));
            if ca == cb {
                ca
            } else {
                None
            }
        }
    };
    if let Some(time_us) = fitted(c, bytes) {
        return Ok(AtSize {
            time_us,
            busbw_gbs: busbw(c, bytes, time_us),
            source: "fitted",
            algo_proto,
        });
    }
    if let Some(p) = exact {
        return Ok(AtSize {
            time_us: p.time_us,
            busbw_gbs: busbw(c, bytes, p.time_us),
            source: "measured",
            algo_proto,
        });
    }
    let (a, b) = (pts[hi - 1], pts[hi]);
    let f = (bytes.ln() - (a.bytes as f64).ln()) / ((b.bytes as f64).ln() - (a.bytes as f64).ln());
    let time_us = (a.time_us.ln() + f * (b.time_us.ln() - a.time_us.ln())).exp();
    Ok(AtSize {
        time_us,
        busbw_gbs: busbw(c, bytes, time_us),
        source: "interpolated",
        algo_proto,
    })
}

/// The fitted time of one call at `bytes`, from the regime whose measured sizes span it;
/// `None` when no regime does or its model gives no positive finite time.
fn fitted(c: &CurveReport, bytes: f64) -> Option<f64> {
    let r = c
        .regimes
        .iter()
        .find(|r| r.from_bytes as f64 <= bytes && bytes <= r.to_bytes as f64)?;
    let ratio = Collective::parse(&c.collective)
        .filter(|_| c.nranks > 0)
        .map_or(1.0, |col| col.algbw_ratio(c.nranks));
    // A regime without a bandwidth term (algbw 0) is flat: its time is alpha.
    let transfer = if r.algbw_gbs > 0.0 {
        ratio * bytes / (r.algbw_gbs * 1e3)
    } else {
        0.0
    };
    let t = r.alpha_us + transfer;
    (t.is_finite() && t > 0.0).then_some(t)
}
