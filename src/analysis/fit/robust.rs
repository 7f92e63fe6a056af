//! Robust segment fits: iteratively reweighted least squares with Tukey's bisquare on relative
//! residuals measured in units of a noise scale, and the scale estimate itself (the median
//! absolute residual, MAD).
//!
//! With scale `s` and `u = r / s`, the bisquare weight is `(1 - (u/c)^2)^2` for `|u| < c` and 0
//! beyond, `c = 4.685` (95% efficiency under Gaussian noise). The matching loss, scaled so that it
//! equals `u^2` for small residuals, is `(c^2/3) * (1 - (1 - (u/c)^2)^3)`: an outlying point
//! costs at most `c^2 / 3` (plus the price of its rejection, see [`Robust`]), so one bad size
//! can neither drag a segment nor buy a breakpoint. IRLS starts from a few Huber steps (convex,
//! so the start cannot be captured by the outlier) and then runs bisquare steps to convergence.
//! Cost: O(len x iterations).

use super::wls::{fit_line, weighted_cost, Line, Rel};

/// Bisquare tuning constant (in noise-scale units).
pub const BISQUARE_C: f64 = 4.685;
/// Huber tuning constant for the first steps.
const HUBER_K: f64 = 1.345;
/// Smallest relative noise scale assumed (1%): below it printed times are not that repeatable,
/// and a zero scale would reject every point of a slightly imperfect model.
pub const SCALE_FLOOR: f64 = 0.01;
/// Huber steps before the bisquare steps.
const HUBER_STEPS: usize = 4;
/// Most bisquare steps.
const MAX_STEPS: usize = 30;
/// IRLS stops when no weight moves by more than this (the cost is stationary at the optimum,
/// so the remaining error in it is second order).
const WEIGHT_TOL: f64 = 1e-3;

/// A weight as a function of the residual in scale units.
type WeightFn = fn(f64) -> f64;

/// Bisquare weight of a residual `u` in scale units.
pub fn bisquare_weight(u: f64) -> f64 {
    let v = u / BISQUARE_C;
    if v.abs() < 1.0 {
        (1.0 - v * v).powi(2)
    } else {
        0.0
    }
}

/// Bisquare loss of a residual `u` in scale units, normalised to `u^2` near zero and capped at
/// `c^2 / 3`.
pub fn bisquare_loss(u: f64) -> f64 {
    let v = (u / BISQUARE_C).clamp(-1.0, 1.0);
    BISQUARE_C * BISQUARE_C / 3.0 * (1.0 - (1.0 - v * v).powi(3))
}

/// Robust relative noise scale of residuals from a model with `params` fitted parameters:
/// `1.4826 x median |r|`, corrected by `sqrt(n / (n - params))` for the degrees of freedom used,
/// and never below [`SCALE_FLOOR`]. Cost: O(n log n).
pub fn mad_scale(residuals: &[f64], params: usize) -> f64 {
    let mut abs: Vec<f64> = residuals.iter().map(|r| r.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let n = abs.len();
    if n == 0 {
        return SCALE_FLOOR;
    }
    let median = if n % 2 == 1 {
        abs[n / 2]
    } else {
        (abs[n / 2 - 1] + abs[n / 2]) / 2.0
    };
    let dof = if n > params {
        (n as f64 / (n - params) as f64).sqrt()
    } else {
        1.0
    };
    let s = 1.4826 * median * dof;
    if s.is_finite() {
        s.max(SCALE_FLOOR)
    } else {
        SCALE_FLOOR
    }
}

/// How a robust segment fit measures and prices residuals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Robust {
    /// Relative noise scale `s`.
    pub scale: f64,
    /// Extra cost of each rejected point (a rejected point is in effect fitted by a parameter
    /// of its own, so the criterion charges it like one: `ln n`).
    pub outlier_penalty: f64,
}

/// Fits one segment. With `robust = None` this is plain least squares on relative error and
/// the cost is the relative residual sum of squares. With a [`Robust`] it is the bisquare
/// M-estimate and the cost is in squared noise-scale units:
/// `sum bisquare_loss(r_i / s) + outlier_penalty x (points with |r_i / s| >= c)`.
///
/// IRLS starts from the least-squares line, moved by a few Huber steps (convex, so an outlier
/// cannot capture the start), or from `warm` (typically the robust line of the same segment
/// one point shorter) when that already has the lower bisquare loss; either way bisquare steps
/// follow until the weights settle. Returns `None` when the line is undetermined.
pub fn robust_line(pts: &[Rel], robust: Option<Robust>, warm: Option<Line>) -> Option<(Line, f64)> {
    let ones = vec![1.0; pts.len()];
    let mut line = fit_line(pts, &ones)?;
    let Some(Robust {
        scale: s,
        outlier_penalty,
    }) = robust
    else {
        let cost = weighted_cost(&line, pts, &ones);
        return Some((line, cost));
    };
    let loss = |l: &Line| -> f64 {
        pts.iter()
            .map(|r| bisquare_loss(l.rel_residual(r) / s))
            .sum()
    };
    let mut huber_steps = HUBER_STEPS;
    if let Some(w) = warm.filter(|w| loss(w) < loss(&line)) {
        line = w;
        huber_steps = 0;
    }
    let mut w = ones;
    let phases: [(usize, WeightFn); 2] = [
        (huber_steps, |u: f64| (HUBER_K / u.abs()).min(1.0)),
        (MAX_STEPS, bisquare_weight),
    ];
    for (steps, weight) in phases {
        for _ in 0..steps {
            let mut moved = 0.0f64;
            for (wi, r) in w.iter_mut().zip(pts) {
                let next = weight(line.rel_residual(r) / s);
                moved = moved.max((next - *wi).abs());
                *wi = next;
            }
            if moved < WEIGHT_TOL {
                break;
            }
            match fit_line(pts, &w) {
                Some(l) => line = l,
                None => break,
            }
        }
    }
    let cost = pts
        .iter()
        .map(|r| {
            let u = line.rel_residual(r) / s;
            let rejected = if u.abs() >= BISQUARE_C {
                outlier_penalty
            } else {
                0.0
            };
            bisquare_loss(u) + rejected
        })
        .sum::<f64>();
    Some((line, cost))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_is_quadratic_near_zero_and_capped() {
        assert!((bisquare_loss(0.01) - 1e-4).abs() < 1e-8);
        let cap = BISQUARE_C * BISQUARE_C / 3.0;
        assert_eq!(bisquare_loss(10.0), cap);
        assert_eq!(bisquare_loss(-10.0), cap);
        assert_eq!(bisquare_weight(0.0), 1.0);
        assert_eq!(bisquare_weight(BISQUARE_C), 0.0);
    }

    #[test]
    fn mad_scale_hand_values_and_floor() {
        // |r| median 0.02 over 4 values (0.01, 0.02 | 0.02, 0.05 -> 0.02), no params.
        let s = mad_scale(&[0.01, -0.02, 0.02, 0.05], 0);
        assert!((s - 1.4826 * 0.02).abs() < 1e-12, "{s}");
        // Two params over 4 points: times sqrt(2).
        let s2 = mad_scale(&[0.01, -0.02, 0.02, 0.05], 2);
        assert!((s2 - s * 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(mad_scale(&[0.0; 5], 1), SCALE_FLOOR);
        assert_eq!(mad_scale(&[], 1), SCALE_FLOOR);
    }

    #[test]
    fn one_outlier_is_rejected_and_costs_the_cap_plus_its_penalty() {
        // Exact line t = 10 + x / 1000 on 12 doubling sizes, one point 40% high.
        let x: Vec<f64> = (0..12).map(|e| 1000.0 * (1u64 << e) as f64).collect();
        let mut t: Vec<f64> = x.iter().map(|x| 10.0 + x / 1000.0).collect();
        t[6] *= 1.4;
        let pts: Vec<Rel> = x.iter().zip(&t).map(|(&x, &t)| Rel::new(x, t)).collect();
        let (plain, plain_cost) = robust_line(&pts, None, None).expect("fit");
        let robust = Robust {
            scale: 0.01,
            outlier_penalty: 2.0,
        };
        let (line, cost) = robust_line(&pts, Some(robust), None).expect("fit");
        assert!(
            (line.alpha - 10.0).abs() < 1e-6,
            "{line:?} vs least squares {plain:?}"
        );
        assert!((line.beta - 1e-3).abs() < 1e-9, "{line:?}");
        // In noise units: the capped loss c^2/3 plus the outlier's own parameter.
        let want = BISQUARE_C * BISQUARE_C / 3.0 + 2.0;
        assert!((cost - want).abs() < 1e-9, "cost {cost} want {want}");
        assert!(
            plain_cost > 0.005,
            "least squares pays for the 29% residual: {plain_cost}"
        );
    }

    #[test]
    fn a_warm_start_is_used_only_when_it_is_better() {
        // Exact line t = 5 + x on 8 points plus two 50%-slow points.
        let x: Vec<f64> = (1..=10).map(|i| (1u64 << i) as f64).collect();
        let mut t: Vec<f64> = x.iter().map(|x| 5.0 + x).collect();
        (t[3], t[7]) = (t[3] * 1.5, t[7] * 1.5);
        let pts: Vec<Rel> = x.iter().zip(&t).map(|(&x, &t)| Rel::new(x, t)).collect();
        let robust = Some(Robust {
            scale: 0.01,
            outlier_penalty: 1.0,
        });
        let cold = robust_line(&pts, robust, None).expect("fit");
        let bad = Line {
            alpha: 1e6,
            beta: 0.0,
        };
        assert_eq!(
            robust_line(&pts, robust, Some(bad)),
            Some(cold),
            "worse start ignored"
        );
        let exact = Line {
            alpha: 5.0,
            beta: 1.0,
        };
        let (warm, cost) = robust_line(&pts, robust, Some(exact)).expect("fit");
        assert!((warm.alpha - 5.0).abs() < 1e-9 && (warm.beta - 1.0).abs() < 1e-12);
        assert!((cost - 2.0 * (BISQUARE_C * BISQUARE_C / 3.0 + 1.0)).abs() < 1e-9);
    }
}
