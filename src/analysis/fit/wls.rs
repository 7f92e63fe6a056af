//! Weighted least squares for one alpha-beta segment, `t = alpha + beta * x`, on relative
//! error: minimise `sum w_i * ((t_i - alpha - beta * x_i) / t_i)^2` subject to `alpha >= 0` and
//! `beta >= 0`.
//!
//! Relative error is the right loss because times span six decades: an absolute loss would let
//! the largest sizes decide everything. With `p = 1/t` and `q = x/t` the relative residual is
//! `1 - alpha p - beta q`, so the fit is a two-regressor least-squares problem without
//! intercept: one pass of multiply-adds over [`Rel`] points, no division per point, and the
//! cost follows from the same sums. When the unconstrained solution leaves the feasible
//! quadrant, the convex problem's optimum lies on an edge (`alpha = 0` or `beta = 0`); both
//! edges are solved in closed form and compared. Cost: O(len) per fit.

/// A fitted line `t = alpha + beta * x`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// Intercept: time at zero bytes.
    pub alpha: f64,
    /// Slope: time per byte.
    pub beta: f64,
}

/// A point in relative form: `p = 1/t`, `q = x/t`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rel {
    /// `1 / t`.
    pub p: f64,
    /// `x / t`.
    pub q: f64,
}

impl Rel {
    /// The relative form of `(x, t)`; `t` must be positive.
    pub fn new(x: f64, t: f64) -> Rel {
        Rel {
            p: 1.0 / t,
            q: x / t,
        }
    }
}

impl Line {
    /// Relative residual `(t - alpha - beta x) / t` of a point.
    pub fn rel_residual(&self, r: &Rel) -> f64 {
        1.0 - self.alpha * r.p - self.beta * r.q
    }
}

/// Weighted sums of one segment's points.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    w: f64,
    wp: f64,
    wq: f64,
    wpp: f64,
    wpq: f64,
    wqq: f64,
    positive: usize,
}

impl Sums {
    fn of(pts: &[Rel], w: &[f64]) -> Sums {
        let mut s = Sums::default();
        for (r, &w) in pts.iter().zip(w) {
            s.positive += usize::from(w > 0.0);
            s.w += w;
            s.wp += w * r.p;
            s.wq += w * r.q;
            s.wpp += w * r.p * r.p;
            s.wpq += w * r.p * r.q;
            s.wqq += w * r.q * r.q;
        }
        s
    }

    /// `sum w (1 - a p - b q)^2`, expanded (clamped at 0 against rounding).
    fn cost(&self, l: &Line) -> f64 {
        let (a, b) = (l.alpha, l.beta);
        (self.w - 2.0 * a * self.wp - 2.0 * b * self.wq
            + a * a * self.wpp
            + 2.0 * a * b * self.wpq
            + b * b * self.wqq)
            .max(0.0)
    }
}

/// `sum w_i * r_i^2` with `r_i` the relative residual of point `i`.
pub fn weighted_cost(line: &Line, pts: &[Rel], w: &[f64]) -> f64 {
    pts.iter()
        .zip(w)
        .map(|(r, &w)| w * line.rel_residual(r).powi(2))
        .sum()
}

/// Fits `t = alpha + beta * x` minimising the weighted relative squared error with
/// `alpha, beta >= 0`, over points with distinct `x`. Returns `None` when fewer than two points
/// carry positive weight (the line is undetermined).
pub fn fit_line(pts: &[Rel], w: &[f64]) -> Option<Line> {
    let s = Sums::of(pts, w);
    if s.positive < 2 {
        return None;
    }
    let det = s.wpp * s.wqq - s.wpq * s.wpq;
    if det > 0.0 && det.is_finite() {
        let alpha = (s.wp * s.wqq - s.wq * s.wpq) / det;
        let beta = (s.wq * s.wpp - s.wp * s.wpq) / det;
        if alpha >= 0.0 && beta >= 0.0 {
            return Some(Line { alpha, beta });
        }
    }
    // The optimum is on an edge of the feasible quadrant.
    let ratio = |num: f64, den: f64| if den > 0.0 { (num / den).max(0.0) } else { 0.0 };
    let through_origin = Line {
        alpha: 0.0,
        beta: ratio(s.wq, s.wqq),
    };
    let flat = Line {
        alpha: ratio(s.wp, s.wpp),
        beta: 0.0,
    };
    Some(if s.cost(&through_origin) < s.cost(&flat) {
        through_origin
    } else {
        flat
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    fn rel(x: &[f64], t: &[f64]) -> Vec<Rel> {
        x.iter().zip(t).map(|(&x, &t)| Rel::new(x, t)).collect()
    }

    #[test]
    fn exact_line_is_recovered_across_ten_decades() {
        // t = 12 us + x / 50_000 (50 GB/s), x from 8 B to 8 GiB.
        let x: Vec<f64> = (3..=33).map(|e| (1u64 << e) as f64).collect();
        let t: Vec<f64> = x.iter().map(|x| 12.0 + x / 5e4).collect();
        let (pts, w) = (rel(&x, &t), vec![1.0; x.len()]);
        let line = fit_line(&pts, &w).expect("fit");
        assert!(close(line.alpha, 12.0, 1e-9), "{line:?}");
        assert!(close(line.beta, 2e-5, 1e-9), "{line:?}");
        assert!(weighted_cost(&line, &pts, &w) < 1e-20);
    }

    #[test]
    fn zero_weights_leave_points_out() {
        // The middle point is far off the line through the outer two; with weights (1, 0, 1)
        // the line goes exactly through (1, 2) and (3, 4): alpha 1, beta 1.
        let pts = rel(&[1.0, 2.0, 3.0], &[2.0, 9.0, 4.0]);
        let line = fit_line(&pts, &[1.0, 0.0, 1.0]).expect("fit");
        assert!(close(line.alpha, 1.0, 1e-12) && close(line.beta, 1.0, 1e-12));
    }

    #[test]
    fn negative_intercept_is_refit_through_the_origin() {
        // t = -1 + 2x exactly, so alpha would be -1. With alpha = 0 the relative loss
        // sum (1 - b x/t)^2 has the hand minimiser b = sum(x/t) / sum((x/t)^2).
        let (x, t) = ([1.0, 2.0, 3.0], [1.0, 3.0, 5.0]);
        let line = fit_line(&rel(&x, &t), &[1.0; 3]).expect("fit");
        let num: f64 = x.iter().zip(&t).map(|(x, t)| x / t).sum();
        let den: f64 = x.iter().zip(&t).map(|(x, t)| (x / t).powi(2)).sum();
        assert_eq!(line.alpha, 0.0);
        assert!(close(line.beta, num / den, 1e-12), "{line:?}");
    }

    #[test]
    fn falling_times_give_a_flat_line_at_the_weighted_mean() {
        // Decreasing times: beta would be negative; the best feasible line is flat at
        // sum(1/t) / sum(1/t^2).
        let (x, t) = ([1.0, 2.0, 3.0], [4.0, 3.0, 2.0]);
        let line = fit_line(&rel(&x, &t), &[1.0; 3]).expect("fit");
        let mean =
            t.iter().map(|t| 1.0 / t).sum::<f64>() / t.iter().map(|t| t.powi(-2)).sum::<f64>();
        assert_eq!(line.beta, 0.0);
        assert!(close(line.alpha, mean, 1e-12), "{line:?}");
    }

    #[test]
    fn expanded_cost_matches_the_residual_sum() {
        let pts = rel(&[1.0, 2.0, 4.0, 8.0], &[3.0, 3.5, 6.0, 9.0]);
        let w = [1.0, 0.5, 2.0, 1.0];
        let line = Line {
            alpha: 1.5,
            beta: 0.9,
        };
        let direct = weighted_cost(&line, &pts, &w);
        assert!(close(Sums::of(&pts, &w).cost(&line), direct, 1e-12));
    }

    #[test]
    fn one_weighted_point_is_undetermined() {
        assert_eq!(fit_line(&rel(&[1.0, 2.0], &[1.0, 2.0]), &[1.0, 0.0]), None);
        assert_eq!(fit_line(&rel(&[1.0], &[1.0]), &[1.0]), None);
    }
}
