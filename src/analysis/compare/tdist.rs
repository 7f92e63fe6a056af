//! Student's t distribution, as far as a two-sided test needs it: the two-sided tail
//! probability and its inverse. A pure leaf (no `crate::` imports).
//!
//! `P(|T| >= t) = I_x(df/2, 1/2)` with `x = df / (df + t^2)`, where `I` is the regularised
//! incomplete beta function, taken from `statrs`. The quantile inverts the tail by bisection
//! (to relative precision 1e-12), so both directions rest on the one function the tests check
//! against published t tables (tails to 2e-7, 97.5% quantiles to 1e-7, df 1 to 1e6).

/// Two-sided tail probability `P(|T| >= |t|)` of Student's t with `df` degrees of freedom;
/// 1 for `t = 0`, 0 for an infinite `t`. `df` must be positive (callers ensure it); NaN in
/// gives NaN out.
pub fn two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_infinite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    // Out of its domain (NaN in, df <= 0) statrs reports an error: NaN out.
    statrs::function::beta::checked_beta_reg(df / 2.0, 0.5, x)
        .map_or(f64::NAN, |p| p.clamp(0.0, 1.0))
}

/// The `t` with `two_sided_p(t, df) = tail` (so `tail = 0.05` gives the 97.5% quantile):
/// bisection to relative precision 1e-12. `tail` outside (0, 1) gives 0 (tail >= 1) or
/// infinity (tail <= 0).
pub fn two_sided_quantile(tail: f64, df: f64) -> f64 {
    if tail >= 1.0 || tail.is_nan() || df.is_nan() || df <= 0.0 {
        return 0.0;
    }
    if tail <= 0.0 {
        return f64::INFINITY;
    }
    let mut hi = 1.0;
    while two_sided_p(hi, df) > tail {
        hi *= 2.0;
        if hi > 1e12 {
            return f64::INFINITY;
        }
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if two_sided_p(mid, df) > tail {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    (lo + hi) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn tail_probabilities_match_published_tables() {
        // 2 * pt(-t, df), cross-checked by numerical integration of the density
        let cases = [
            (2.0, 10.0, 0.073_388_035_7),
            (2.776_445_1, 4.0, 0.05),
            (1.0, 1.0, 0.5),
            (12.706_204_7, 1.0, 0.05),
            (3.0, 30.0, 0.005_389_964_07),
            (1.959_963_985, 1e6, 0.050_000_277),
            (0.0, 5.0, 1.0),
        ];
        for (t, df, want) in cases {
            let p = two_sided_p(t, df);
            assert!(close(p, want, 2e-7), "t={t} df={df}: {p} vs {want}");
        }
        assert_eq!(two_sided_p(f64::INFINITY, 3.0), 0.0);
    }

    #[test]
    fn quantiles_invert_the_tail() {
        // R: qt(0.975, df)
        for (df, want) in [
            (1.0, 12.706_204_74),
            (2.0, 4.302_652_73),
            (4.0, 2.776_445_11),
            (10.0, 2.228_138_85),
        ] {
            let q = two_sided_quantile(0.05, df);
            assert!(close(q, want, 1e-7), "df={df}: {q} vs {want}");
            assert!(close(two_sided_p(q, df), 0.05, 1e-10));
        }
        assert_eq!(two_sided_quantile(1.0, 3.0), 0.0);
        assert!(two_sided_quantile(0.0, 3.0).is_infinite());
        assert_eq!(two_sided_quantile(0.05, 0.0), 0.0);
    }
}
