//! The statistics of a comparison, a pure leaf (only [`super::tdist`] is used): per size a
//! two-sample test of the times, per curve a false-discovery-rate adjustment over the sizes,
//! and the verdict that combines both with the threshold.
//!
//! * **Test**: Welch's unequal-variance t test on `ln(time)`. Each sample is itself the mean of
//!   `-n` iterations, so it is close to normal (central limit) and its spread scales with the
//!   time (hence the logarithm). Unlike rank tests (Mann-Whitney: a two-sided p-value can never
//!   go below 0.1 with 3 samples a side) it can support a change with the 3-5 cycles people
//!   run, and unlike a bootstrap (whose intervals are far too narrow at n = 3) it stays
//!   honest there. An outlying cycle inflates the variance and makes a call *less* likely, the
//!   safe direction. Cost O(n) plus about 200 t-tail evaluations for the interval.
//! * **Interval**: `exp(d +- t(df, 0.975) se)`, a 95% interval of the ratio of geometric-mean
//!   times (`d` the difference of mean log times). The headline ratio is the ratio of medians,
//!   which is what the tables show; a call also needs the two estimates to agree in direction.
//! * **Multiple testing**: Benjamini-Hochberg over the tested sizes of one curve (q-values).
//!   A regression usually moves a range of neighbouring sizes (a protocol switch point moved);
//!   Holm would demand p < 0.05 / (number of sizes) of the first one, out of reach with 3-5
//!   cycles, and hide exactly those. BH bounds the expected share of false calls among the
//!   calls, which is what a reader of the list cares about; it is valid for independent and
//!   positively dependent tests (sizes of one run share the machine's noise).
//! * **Threshold**: a size is slower when `after / before > 1 + t` and faster when
//!   `before / after > 1 + t` (symmetric on the log scale, so swapping the inputs swaps the
//!   verdicts). With fewer than two samples on a side there is no test: the threshold alone
//!   decides, and the verdict says so.

use super::tdist::{two_sided_p, two_sided_quantile};

/// Significance level of every call (and 1 - the interval's confidence).
pub const ALPHA: f64 = 0.05;

/// Welch's t test on log times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Test {
    /// Ratio of geometric means, after / before.
    pub ratio_gm: f64,
    /// Lower end of the 95% interval of `ratio_gm`.
    pub ci_low: f64,
    /// Upper end.
    pub ci_high: f64,
    /// Two-sided p-value of "no change".
    pub p_value: f64,
    /// Welch-Satterthwaite degrees of freedom (infinite when both variances are zero).
    pub df: f64,
}

/// What a size's numbers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// After takes less time.
    Faster,
    /// After takes more time.
    Slower,
    /// Neither supported nor beyond the threshold.
    Unchanged,
}

/// Why a verdict is what it is, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Significant (q <= [`ALPHA`]) and beyond the threshold.
    Significant,
    /// Beyond the threshold but not significant.
    NotSignificant,
    /// Within the threshold (whatever the test says).
    WithinThreshold,
    /// Median and geometric-mean ratios point in opposite directions.
    EstimatesDisagree,
    /// Fewer than two samples on a side: the threshold alone decided.
    ThresholdOnly,
}

impl Basis {
    /// The words the reports print.
    pub fn text(self) -> &'static str {
        match self {
            Basis::Significant => "significant",
            Basis::NotSignificant => "not significant",
            Basis::WithinThreshold => "within threshold",
            Basis::EstimatesDisagree => "median and mean disagree",
            Basis::ThresholdOnly => "1 sample: threshold only",
        }
    }
}

/// Mean and sample variance.
fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// Welch's test of `after` against `before` on log times. `None` unless both sides have at
/// least two samples, all finite and positive.
pub fn welch_log(before: &[f64], after: &[f64]) -> Option<Test> {
    let usable = |v: &[f64]| v.len() >= 2 && v.iter().all(|t| t.is_finite() && *t > 0.0);
    if !usable(before) || !usable(after) {
        return None;
    }
    let logs = |v: &[f64]| v.iter().map(|t| t.ln()).collect::<Vec<f64>>();
    let (mb, vb) = mean_var(&logs(before));
    let (ma, va) = mean_var(&logs(after));
    let (nb, na) = (before.len() as f64, after.len() as f64);
    let d = ma - mb;
    let (sb, sa) = (vb / nb, va / na);
    let se2 = sa + sb;
    if se2 <= 0.0 || se2.is_nan() {
        // No spread on either side: the difference is exact.
        let p_value = if d == 0.0 { 1.0 } else { 0.0 };
        let r = d.exp();
        return Some(Test {
            ratio_gm: r,
            ci_low: r,
            ci_high: r,
            p_value,
            df: f64::INFINITY,
        });
    }
    let se = se2.sqrt();
    let df = se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    // Defensive: should the denominator underflow, the normal limit is exact enough.
    let df = if df.is_finite() { df } else { 1e7 };
    let q = two_sided_quantile(ALPHA, df);
    Some(Test {
        ratio_gm: d.exp(),
        ci_low: (d - q * se).exp(),
        ci_high: (d + q * se).exp(),
        p_value: two_sided_p(d / se, df),
        df,
    })
}

/// Benjamini-Hochberg q-values: `q_(i) = min over j >= i of p_(j) m / j` (sorted ascending,
/// capped at 1), where `m` counts the present p-values; absent ones stay absent. O(m log m).
pub fn bh_adjust(p: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut order: Vec<(usize, f64)> = p
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (i, if v.is_nan() { 1.0 } else { v })))
        .collect();
    order.sort_by(|a, b| a.1.total_cmp(&b.1));
    let m = order.len() as f64;
    let mut q = vec![None; p.len()];
    let mut running = 1.0f64;
    for (rank, (i, pv)) in order.iter().enumerate().rev() {
        running = running.min(pv * m / (rank + 1) as f64);
        q[*i] = Some(running.clamp(0.0, 1.0));
    }
    q
}

/// The verdict of one size: `ratio` is median after / median before, `threshold` a fraction
/// (0.05 = 5%), `q` the adjusted p-value and `ratio_gm` the test's own estimate (both `None`
/// without a test).
pub fn verdict(
    ratio: f64,
    threshold: f64,
    q: Option<f64>,
    ratio_gm: Option<f64>,
) -> (Verdict, Basis) {
    let limit = 1.0 + threshold;
    let beyond = if ratio > limit {
        Verdict::Slower
    } else if ratio > 0.0 && 1.0 / ratio > limit {
        Verdict::Faster
    } else {
        Verdict::Unchanged
    };
    let (Some(q), Some(gm)) = (q, ratio_gm) else {
        return (beyond, Basis::ThresholdOnly);
    };
    if beyond == Verdict::Unchanged {
        return (Verdict::Unchanged, Basis::WithinThreshold);
    }
    if q > ALPHA {
        return (Verdict::Unchanged, Basis::NotSignificant);
    }
    if (gm > 1.0) != (ratio > 1.0) {
        return (Verdict::Unchanged, Basis::EstimatesDisagree);
    }
    (beyond, Basis::Significant)
}
