//! Weighted least squares for one alpha-beta segment, `t = alpha + beta * x`, on relative
//! error: minimise `sum w_i * ((t_i - alpha - beta * x_i) / t_i)^2` subject to `alpha >= 0` and
//! `beta >= 0`.
//!
//! Relative error is the right loss because times span six decades: an absolute loss would let
//! the largest sizes decide everything. The unconstrained solution is computed on centred sums
//! (stable even when `x` spans ten decades); when it leaves the feasible quadrant the convex
//! problem's optimum lies on an edge (`alpha = 0` or `beta = 0`), and both edges are solved in
//! closed form and compared. Cost: O(len) per fit.

/// A fitted line `t = alpha + beta * x`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// Intercept: time at zero bytes.
    pub alpha: f64,
    /// Slope: time per byte.
    pub beta: f64,
}

impl Line {
    /// Model value at `x`.
    pub fn at(&self, x: f64) -> f64 {
        self.alpha + self.beta * x
    }

    /// Relative residual `(t - model) / t`; `t` must be positive.
    pub fn rel_residual(&self, x: f64, t: f64) -> f64 {
        (t - self.at(x)) / t
    }
}

/// `sum w_i * r_i^2` with `r_i` the relative residual of point `i`.
pub fn weighted_cost(line: &Line, x: &[f64], t: &[f64], w: &[f64]) -> f64 {
    x.iter()
        .zip(t)
        .zip(w)
        .map(|((&x, &t), &w)| w * line.rel_residual(x, t).powi(2))
        .sum()
}

/// Fits `t = alpha + beta * x` minimising the weighted relative squared error with
/// `alpha, beta >= 0`. `x` must be strictly increasing and `t` positive (the caller checks).
/// Returns `None` when fewer than two points carry positive weight (the line is undetermined).
pub fn fit_line(x: &[f64], t: &[f64], w: &[f64]) -> Option<Line> {
    let u: Vec<f64> = t.iter().zip(w).map(|(&t, &w)| w / (t * t)).collect();
    if u.iter().filter(|&&u| u > 0.0).count() < 2 {
        return None;
    }
    let su: f64 = u.iter().sum();
    let xm = dot3(&u, x, None) / su;
    let tm = dot3(&u, t, None) / su;
    let (mut sxx, mut sxt) = (0.0, 0.0);
    for ((&u, &x), &t) in u.iter().zip(x).zip(t) {
        sxx += u * (x - xm) * (x - xm);
        sxt += u * (x - xm) * (t - tm);
    }
    if !(sxx > 0.0) {
        return None;
    }
    let beta = sxt / sxx;
    let alpha = tm - beta * xm;
    if alpha >= 0.0 && beta >= 0.0 {
        return Some(Line { alpha, beta });
    }
    // The optimum is on an edge of the feasible quadrant.
    let sxx0 = dot3(&u, x, Some(x));
    let through_origin = Line {
        alpha: 0.0,
        beta: if sxx0 > 0.0 {
            (dot3(&u, x, Some(t)) / sxx0).max(0.0)
        } else {
            0.0
        },
    };
    let flat = Line {
        alpha: tm.max(0.0),
        beta: 0.0,
    };
    let best = if weighted_cost(&through_origin, x, t, w) < weighted_cost(&flat, x, t, w) {
        through_origin
    } else {
        flat
    };
    Some(best)
}

/// `sum u_i * a_i * b_i` (`b_i = 1` when `b` is `None`).
fn dot3(u: &[f64], a: &[f64], b: Option<&[f64]>) -> f64 {
    match b {
        Some(b) => u.iter().zip(a).zip(b).map(|((u, a), b)| u * a * b).sum(),
        None => u.iter().zip(a).map(|(u, a)| u * a).sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    #[test]
    fn exact_line_is_recovered_across_ten_decades() {
        // t = 12 us + x / 50_000 (50 GB/s), x from 8 B to 8 GiB.
        let x: Vec<f64> = (3..=33).map(|e| (1u64 << e) as f64).collect();
        let t: Vec<f64> = x.iter().map(|x| 12.0 + x / 5e4).collect();
        let line = fit_line(&x, &t, &vec![1.0; x.len()]).expect("fit");
        assert!(close(line.alpha, 12.0, 1e-9), "{line:?}");
        assert!(close(line.beta, 2e-5, 1e-9), "{line:?}");
        assert!(weighted_cost(&line, &x, &t, &vec![1.0; x.len()]) < 1e-20);
    }

    #[test]
    fn weights_are_relative_two_point_hand_values() {
        // Three points, the middle one off the line through the outer two. With weights
        // w = (1, 0, 1) the line goes exactly through (1, 2) and (3, 4): alpha 1, beta 1.
        let (x, t) = ([1.0, 2.0, 3.0], [2.0, 9.0, 4.0]);
        let line = fit_line(&x, &t, &[1.0, 0.0, 1.0]).expect("fit");
        assert!(close(line.alpha, 1.0, 1e-12) && close(line.beta, 1.0, 1e-12));
    }

    #[test]
    fn negative_intercept_is_refit_through_the_origin() {
        // t = -1 + 2x unconstrained; with alpha = 0 the relative loss sum (1 - 2b*x/t)^2...
        // has minimiser b = sum(x/t) / sum(x^2/t^2) (hand formula for alpha = 0).
        let (x, t) = ([1.0, 2.0, 3.0], [1.0, 3.0, 5.0]);
        let line = fit_line(&x, &t, &[1.0; 3]).expect("fit");
        let num: f64 = x.iter().zip(&t).map(|(x, t)| x / t).sum();
        let den: f64 = x.iter().zip(&t).map(|(x, t)| (x / t).powi(2)).sum();
        assert_eq!(line.alpha, 0.0);
        assert!(close(line.beta, num / den, 1e-12), "{line:?}");
    }

    #[test]
    fn falling_times_give_a_flat_line_at_the_weighted_mean() {
        // Decreasing times: beta would be negative; the best feasible line is flat at the
        // relative-weighted mean sum(1/t) / sum(1/t^2).
        let (x, t) = ([1.0, 2.0, 3.0], [4.0, 3.0, 2.0]);
        let line = fit_line(&x, &t, &[1.0; 3]).expect("fit");
        let mean =
            t.iter().map(|t| 1.0 / t).sum::<f64>() / t.iter().map(|t| t.powi(-2)).sum::<f64>();
        assert_eq!(line.beta, 0.0);
        assert!(close(line.alpha, mean, 1e-12), "{line:?}");
    }

    #[test]
    fn one_weighted_point_is_undetermined() {
        assert_eq!(fit_line(&[1.0, 2.0], &[1.0, 2.0], &[1.0, 0.0]), None);
        assert_eq!(fit_line(&[1.0], &[1.0], &[1.0]), None);
    }
}
