//! Optimal contiguous segmentation by dynamic programming, and the information criterion that
//! picks the number of segments.
//!
//! Points `0..n` are cut at candidate boundaries (every index when `n` is at most
//! [`MAX_CANDIDATES`], else about that many evenly spaced ones, so the cost stays bounded on
//! huge inputs). For every candidate segment the cost is computed once; then
//! `best[k][b] = min_a best[k-1][a] + cost(a, b)` gives the exact optimum for each segment count
//! `k`. Cost: O(M^2) segment fits plus O(K M^2) for the recursion, M candidates.
//!
//! The criterion is BIC: `n ln(RSS / n) + penalty` for least-squares fits (relative residual
//! sum of squares, noise unknown), or `chi2 + penalty` for robust fits whose cost is already in
//! noise units; the penalty is `(2k + 4(k - 1)) ln n`, two parameters per segment and four per
//! breakpoint ([`BREAKPOINT_PARAMS`]). The RSS is floored at `n x RSS_FLOOR^2` so exact
//! (noise-free) data does not reward extra segments for rounding error.

/// Largest number of candidate boundaries.
pub const MAX_CANDIDATES: usize = 64;
/// Relative residual floor (0.1%, the resolution of printed times) used by the criterion.
pub const RSS_FLOOR: f64 = 1e-3;

/// One segmentation: the first point index of each segment, and its total cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Partition {
    /// First index of each segment, ascending, starting with 0.
    pub starts: Vec<usize>,
    /// Sum of the segment costs.
    pub cost: f64,
}

/// Candidate boundaries for `n` points: `0, .., n` (all indices when `n <= MAX_CANDIDATES`).
pub fn candidates(n: usize) -> Vec<usize> {
    if n <= MAX_CANDIDATES {
        return (0..=n).collect();
    }
    let mut b: Vec<usize> = (0..=MAX_CANDIDATES)
        .map(|i| i * n / MAX_CANDIDATES)
        .collect();
    b.dedup();
    b
}

/// The best partition of `0..n` into exactly `k` segments, for every `k` in `1..=max_k`
/// (`None` where no partition respects `min_points`). `cost(first, last_exclusive)` returns a
/// segment's cost, or `None` when it cannot be fitted; it is called once per candidate segment.
pub fn best_partitions(
    bounds: &[usize],
    max_k: usize,
    min_points: usize,
    mut cost: impl FnMut(usize, usize) -> Option<f64>,
) -> Vec<Option<Partition>> {
    let m = bounds.len().saturating_sub(1);
    let mut seg = vec![None; (m + 1) * (m + 1)];
    for a in 0..m {
        for b in a + 1..=m {
            if bounds[b] - bounds[a] >= min_points {
                seg[a * (m + 1) + b] = cost(bounds[a], bounds[b]);
            }
        }
    }
    // best[b] for the current k: (cost, previous boundary).
    let mut prev: Vec<Option<f64>> = vec![None; m + 1];
    prev[0] = Some(0.0);
    let mut back: Vec<Vec<usize>> = Vec::with_capacity(max_k);
    let mut out = Vec::with_capacity(max_k);
    for _ in 0..max_k {
        let mut cur: Vec<Option<f64>> = vec![None; m + 1];
        let mut arg = vec![0usize; m + 1];
        for b in 1..=m {
            for a in 0..b {
                let (Some(p), Some(c)) = (prev[a], seg[a * (m + 1) + b]) else {
                    continue;
                };
                if cur[b].is_none_or(|best| p + c < best) {
                    cur[b] = Some(p + c);
                    arg[b] = a;
                }
            }
        }
        back.push(arg);
        out.push(cur[m].map(|cost| {
            let mut starts = Vec::with_capacity(back.len());
            let mut b = m;
            for arg in back.iter().rev() {
                b = arg[b];
                starts.push(bounds[b]);
            }
            starts.reverse();
            Partition { starts, cost }
        }));
        prev = cur;
    }
    out
}

/// Parameters charged per breakpoint. Plain BIC charges one, but a breakpoint's position is
/// picked as the best of every size, which fits noise far better than one continuous
/// parameter: with 1, 6% of noisy single-regime synthetic curves got a spurious breakpoint
/// (mostly in the flat latency region, where a regime's bandwidth is unidentified). 4 was
/// calibrated on 2,100 synthetic curves per regime count and noise kind (2% uniform and
/// log-normal; `tests/analysis_fit.rs`): 1 and 4 spurious breakpoints on single-regime curves,
/// at most 5 wrong regime counts elsewhere, while a real regime change gains hundreds of units
/// against the `6 ln n` a segment costs.
pub const BREAKPOINT_PARAMS: f64 = 4.0;

/// The criterion's penalty for `k` segments over `n` points: `(2k + 4(k - 1)) ln n`.
pub fn penalty(n: usize, k: usize) -> f64 {
    (2.0 * k as f64 + BREAKPOINT_PARAMS * (k as f64 - 1.0)) * (n as f64).ln()
}

/// BIC of a `k`-segment least-squares fit of `n` points with relative residual sum of squares
/// `rss` (noise unknown, so profiled out).
pub fn bic(rss: f64, n: usize, k: usize) -> f64 {
    let nf = n as f64;
    let floor = nf * RSS_FLOOR * RSS_FLOOR;
    nf * (rss.max(floor) / nf).ln() + penalty(n, k)
}

/// BIC of a `k`-segment robust fit whose cost `chi2` is already in squared noise-scale units
/// (noise known).
pub fn bic_known_scale(chi2: f64, n: usize, k: usize) -> f64 {
    chi2 + penalty(n, k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dp_finds_the_cheapest_cut_for_each_count() {
        // Six points; a segment costs 0 when it lies inside 0..3 or 3..6, else its length.
        let cost = |a: usize, b: usize| {
            Some(if b <= 3 || a >= 3 {
                0.0
            } else {
                (b - a) as f64
            })
        };
        let parts = best_partitions(&candidates(6), 3, 2, cost);
        assert_eq!(parts[0].as_ref().map(|p| p.cost), Some(6.0));
        let two = parts[1].as_ref().expect("two segments");
        assert_eq!((two.starts.clone(), two.cost), (vec![0, 3], 0.0));
        let three = parts[2].as_ref().expect("three segments of two");
        assert_eq!(three.starts, vec![0, 2, 4]);
        assert_eq!(three.cost, 2.0); // 2..4 straddles the cut
    }

    #[test]
    fn min_points_rules_out_partitions() {
        let parts = best_partitions(&candidates(5), 2, 3, |_, _| Some(1.0));
        assert!(parts[0].is_some());
        assert!(parts[1].is_none(), "5 points cannot make two segments of 3");
    }

    #[test]
    fn candidates_are_thinned_for_long_inputs() {
        let c = candidates(1000);
        assert_eq!((c[0], *c.last().unwrap_or(&0)), (0, 1000));
        assert_eq!(c.len(), MAX_CANDIDATES + 1);
        assert_eq!(candidates(3), vec![0, 1, 2, 3]);
    }

    #[test]
    fn bic_hand_values_and_choice() {
        // n = 20: one segment RSS 0.02 vs two segments RSS 0.005 (penalty 6 ln 20 more).
        let one = bic(0.02, 20, 1);
        let two = bic(0.005, 20, 2);
        assert!((one - (20.0 * (0.001f64).ln() + 2.0 * 20f64.ln())).abs() < 1e-9);
        assert!((two - (20.0 * (0.00025f64).ln() + 8.0 * 20f64.ln())).abs() < 1e-9);
        assert!(
            two < one,
            "a fourfold RSS drop (27.7) beats six parameters (18.0) at n = 20"
        );
        // A 2.2-fold drop does not: 20 ln 2.2 = 15.8 < 6 ln 20 = 18.0.
        assert!(bic(0.02 / 2.2, 20, 2) > one);
        assert!((bic_known_scale(12.0, 20, 2) - (12.0 + 8.0 * 20f64.ln())).abs() < 1e-9);
        // Below the floor all fits tie on RSS, so fewer segments win.
        assert!(bic(0.0, 20, 1) < bic(1e-30, 20, 2));
    }
}
