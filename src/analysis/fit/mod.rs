//! Piecewise alpha-beta fitting of time versus size: a pure numeric leaf (no rows, no files;
//! nothing from the rest of the crate), in the spirit of criterion's `stats`.
//!
//! Model: the points are cut into 1..=K contiguous segments (regimes), each
//! `t = alpha + beta * x` with `alpha >= 0`, `beta >= 0` ([`wls`]). Fits minimise relative
//! error (times span six decades) and are robust: Tukey's bisquare on relative residuals in
//! units of a noise scale ([`robust`]), so a few outlying sizes neither bend a regime nor buy a
//! breakpoint. Breakpoints are chosen by exact dynamic programming and the segment count by BIC
//! ([`segment`]).
//!
//! The noise scale is not known in advance, so [`fit_piecewise`] alternates: the richest
//! least-squares segmentation (K segments) gives residuals, their MAD gives the scale, a robust
//! segmentation chosen by BIC with that scale gives new residuals, and so on until the scale
//! settles (at most [`MAX_PASSES`] robust passes). Starting from the richest model keeps the
//! misfit of too few regimes from passing for noise. Points whose final relative residual
//! exceeds `BISQUARE_C` scales are reported as outliers.
//!
//! Cost: O(M^2) robust segment fits per pass (M <= 64 candidate boundaries), each O(len x
//! iterations), warm-started from the segment one point shorter; about half a millisecond for
//! a 33-size curve (`benches/analyze.rs`).

pub mod robust;
pub mod segment;
pub mod wls;

use robust::{mad_scale, robust_line, Robust, BISQUARE_C};
use segment::{best_partitions, bic, bic_known_scale, candidates};
use wls::{Line, Rel};

/// Most robust passes (each re-estimates the noise scale and re-segments).
pub const MAX_PASSES: usize = 3;

/// One fitted regime over points `first..=last`.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// Index of the first point.
    pub first: usize,
    /// Index of the last point (inclusive).
    pub last: usize,
    /// Intercept, in the unit of `t`.
    pub alpha: f64,
    /// Slope: `t` per unit of `x` (1 / bandwidth); 0 when the segment is flat.
    pub beta: f64,
    /// Root-mean-square relative residual over the segment's non-outlier points (0 if none).
    pub rms_rel_err: f64,
}

/// A piecewise fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// The regimes, contiguous and covering every point, by increasing `x`.
    pub segments: Vec<Segment>,
    /// BIC of the chosen segmentation (lower is better; only comparable on the same points).
    pub criterion: f64,
    /// Robust relative noise scale of the residuals (at least [`robust::SCALE_FLOOR`]).
    pub noise: f64,
    /// Indices of points the robust fit rejected (relative residual above `4.685 x noise`).
    pub outliers: Vec<usize>,
}

/// Fits `t` (positive) against `x` (non-negative, strictly increasing) with 1..=`max_segments`
/// regimes of at least `min_points` points each (at least 2), chosen by BIC.
///
/// Returns `None` when the inputs are unusable: lengths differ, fewer than `min_points` points,
/// a non-finite value, `t <= 0`, `x < 0` or `x` not strictly increasing, or `max_segments == 0`
/// (and, defensively, when the values span so many decades that the fit is not finite).
pub fn fit_piecewise(
    x_bytes: &[f64],
    t_us: &[f64],
    max_segments: usize,
    min_points: usize,
) -> Option<Fit> {
    let (x, t) = (x_bytes, t_us);
    let n = x.len();
    let min_points = min_points.max(2);
    let valid = t.len() == n
        && n >= min_points
        && max_segments > 0
        && x.iter().all(|x| x.is_finite() && *x >= 0.0)
        && t.iter().all(|t| t.is_finite() && *t > 0.0)
        && x.windows(2).all(|w| w[0] < w[1]);
    if !valid {
        return None;
    }
    // Fit in units of the largest x and t (residuals are relative, so nothing else changes);
    // this keeps 1/t^2 finite for any finite input.
    let (xs, ts) = (
        x[n - 1].max(f64::MIN_POSITIVE),
        t.iter().copied().fold(0.0, f64::max),
    );
    let x: Vec<f64> = x.iter().map(|v| v / xs).collect();
    let t: Vec<f64> = t.iter().map(|v| v / ts).collect();
    let pts: Vec<Rel> = x.iter().zip(&t).map(|(&x, &t)| Rel::new(x, t)).collect();
    if !pts.iter().all(|r| r.p.is_finite() && r.q.is_finite()) {
        return None; // times spanning more than ~300 decades
    }
    let max_k = max_segments.min(n / min_points).max(1);
    let bounds = candidates(n);
    // The first noise estimate comes from the richest least-squares model (as Mallows' Cp
    // takes its variance from the full model): a misfit of too few regimes must not pass for
    // noise, or it would hide the regimes that explain it.
    let mut chosen = choose(&pts, &bounds, max_k, min_points, None, Pick::Richest)?;
    let mut scale: Option<f64> = None;
    for _ in 0..MAX_PASSES {
        let params = 3 * chosen.lines.len() - 1;
        let s = mad_scale(&residuals(&pts, &chosen), params);
        if scale.is_some_and(|old| (s / old - 1.0).abs() < 0.05) {
            break;
        }
        scale = Some(s);
        chosen = choose(&pts, &bounds, max_k, min_points, scale, Pick::Bic)?;
    }
    let noise = scale.unwrap_or(robust::SCALE_FLOOR);
    let mut fit = finish(&pts, &chosen, noise);
    for s in &mut fit.segments {
        s.alpha *= ts;
        s.beta *= ts / xs;
    }
    let finite = fit.criterion.is_finite()
        && fit
            .segments
            .iter()
            .all(|s| s.alpha.is_finite() && s.beta.is_finite() && s.rms_rel_err.is_finite());
    finite.then_some(fit)
}

/// A chosen segmentation with its lines.
struct Chosen {
    starts: Vec<usize>,
    lines: Vec<Line>,
    criterion: f64,
}

/// Which segment count [`choose`] keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Pick {
    /// The lowest BIC.
    Bic,
    /// The most segments that fit.
    Richest,
}

/// Segments optimally for every count and keeps one (see [`Pick`]): least squares with the
/// noise profiled out when `scale` is `None`, else robust with that noise scale.
fn choose(
    pts: &[Rel],
    bounds: &[usize],
    max_k: usize,
    min_points: usize,
    scale: Option<f64>,
    pick: Pick,
) -> Option<Chosen> {
    let n = pts.len();
    let robust = scale.map(|scale| Robust {
        scale,
        outlier_penalty: (n as f64).ln(),
    });
    let criterion = |cost: f64, k: usize| match robust {
        Some(_) => bic_known_scale(cost, n, k),
        None => bic(cost, n, k),
    };
    // Segments are costed by increasing end for each start: each warm-starts from the line of
    // the one before it, and every line is kept for the winner.
    let m = bounds.len();
    let mut slot = vec![0usize; n + 1];
    for (i, &b) in bounds.iter().enumerate() {
        slot[b] = i;
    }
    let mut lines: Vec<Option<Line>> = vec![None; m * m];
    let mut last: Option<(usize, Line)> = None;
    let cost = |a: usize, b: usize| {
        let warm = last.filter(|(start, _)| *start == a).map(|(_, l)| l);
        let (line, cost) = robust_line(&pts[a..b], robust, warm)?;
        last = Some((a, line));
        lines[slot[a] * m + slot[b]] = Some(line);
        Some(cost)
    };
    let parts = best_partitions(bounds, max_k, min_points, cost);
    let feasible = parts
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.as_ref().map(|p| (i + 1, p)));
    let (k, part) = match pick {
        Pick::Bic => feasible
            .min_by(|(ka, a), (kb, b)| criterion(a.cost, *ka).total_cmp(&criterion(b.cost, *kb))),
        Pick::Richest => feasible.max_by_key(|(k, _)| *k),
    }?;
    let lines = ends(&part.starts, n)
        .map(|(a, b)| lines[slot[a] * m + slot[b]])
        .collect::<Option<Vec<_>>>()?;
    Some(Chosen {
        starts: part.starts.clone(),
        lines,
        criterion: criterion(part.cost, k),
    })
}

/// `(first, last_exclusive)` of each segment.
fn ends(starts: &[usize], n: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    starts
        .iter()
        .enumerate()
        .map(move |(i, &a)| (a, starts.get(i + 1).copied().unwrap_or(n)))
}

/// Relative residual of every point under its segment's line.
fn residuals(pts: &[Rel], c: &Chosen) -> Vec<f64> {
    ends(&c.starts, pts.len())
        .zip(&c.lines)
        .flat_map(|((a, b), line)| pts[a..b].iter().map(move |r| line.rel_residual(r)))
        .collect()
}

/// Builds the public [`Fit`]: outliers and per-segment RMS over inliers.
fn finish(pts: &[Rel], c: &Chosen, noise: f64) -> Fit {
    let r = residuals(pts, c);
    let is_outlier = |i: usize| r[i].abs() > BISQUARE_C * noise;
    let segments = ends(&c.starts, pts.len())
        .zip(&c.lines)
        .map(|((a, b), line)| {
            let inliers: Vec<f64> = (a..b).filter(|&i| !is_outlier(i)).map(|i| r[i]).collect();
            let rms = if inliers.is_empty() {
                0.0
            } else {
                (inliers.iter().map(|r| r * r).sum::<f64>() / inliers.len() as f64).sqrt()
            };
            Segment {
                first: a,
                last: b - 1,
                alpha: line.alpha,
                beta: line.beta,
                rms_rel_err: rms,
            }
        })
        .collect();
    Fit {
        segments,
        criterion: c.criterion,
        noise,
        outliers: (0..pts.len()).filter(|&i| is_outlier(i)).collect(),
    }
}

#[cfg(test)]
mod tests;
