//! Tests of [`fit_piecewise`] on exact, hand-built curves (the noisy synthetic sweeps live in
//! `tests/analysis_fit.rs`).

use super::*;

/// Doubling grid `2^lo ..= 2^hi` bytes.
fn grid(lo: u32, hi: u32) -> Vec<f64> {
    (lo..=hi).map(|e| (1u64 << e) as f64).collect()
}

/// Time of the fastest of `(alpha_us, bytes_per_us)` regimes, in order of size: the regime
/// index changes where the next one becomes faster.
fn times(x: &[f64], regimes: &[(f64, f64)]) -> Vec<f64> {
    x.iter()
        .map(|&x| {
            regimes
                .iter()
                .map(|(a, b)| a + x / b)
                .fold(f64::INFINITY, f64::min)
        })
        .collect()
}

#[test]
fn exact_single_regime_gives_one_segment_with_exact_parameters() {
    let x = grid(3, 33);
    let t = times(&x, &[(20.0, 1e5)]);
    let fit = fit_piecewise(&x, &t, 4, 3).expect("fit");
    assert_eq!(fit.segments.len(), 1, "{fit:?}");
    let s = &fit.segments[0];
    assert_eq!((s.first, s.last), (0, x.len() - 1));
    assert!(
        (s.alpha - 20.0).abs() < 1e-9 && (s.beta - 1e-5).abs() < 1e-15,
        "{s:?}"
    );
    assert!(fit.outliers.is_empty());
}

#[test]
fn exact_two_regimes_are_cut_where_the_faster_one_takes_over() {
    // 5 us + S/5 KB/us vs 40 us + S/100 KB/us: crossover at 35 / (1/5e3 - 1/1e5) = 184 KB,
    // so 256 KiB (2^18) is the first size of the second regime.
    let x = grid(3, 30);
    let t = times(&x, &[(5.0, 5e3), (40.0, 1e5)]);
    let fit = fit_piecewise(&x, &t, 4, 3).expect("fit");
    assert_eq!(fit.segments.len(), 2, "{fit:?}");
    assert_eq!(x[fit.segments[1].first], (1u64 << 18) as f64);
    assert!((fit.segments[0].alpha - 5.0).abs() < 1e-6);
    assert!((fit.segments[1].beta - 1e-5).abs() < 1e-12);
}

#[test]
fn one_outlying_size_is_rejected_not_fitted() {
    let x = grid(10, 30);
    let mut t = times(&x, &[(10.0, 2e4)]);
    t[9] *= 1.5;
    let fit = fit_piecewise(&x, &t, 4, 3).expect("fit");
    assert_eq!(fit.segments.len(), 1, "{fit:?}");
    assert_eq!(fit.outliers, vec![9]);
    assert!((fit.segments[0].alpha - 10.0).abs() < 1e-6);
    assert!(fit.segments[0].rms_rel_err < 1e-9, "inliers fit exactly");
}

#[test]
fn few_points_limit_the_segment_count() {
    let x = grid(3, 7);
    let t = times(&x, &[(5.0, 1.0), (100.0, 1e6)]);
    let fit = fit_piecewise(&x, &t, 4, 3).expect("five points allow one segment");
    assert_eq!(fit.segments.len(), 1);
    assert_eq!(fit_piecewise(&x[..2], &t[..2], 4, 3), None);
}

#[test]
fn unusable_inputs_give_none() {
    let (x, t) = (grid(3, 8), vec![1.0; 6]);
    assert!(fit_piecewise(&x, &t, 4, 3).is_some());
    assert_eq!(fit_piecewise(&x, &t[..5], 4, 3), None, "length mismatch");
    assert_eq!(fit_piecewise(&x, &t, 0, 3), None, "no segments allowed");
    let mut bad = t.clone();
    bad[2] = f64::NAN;
    assert_eq!(fit_piecewise(&x, &bad, 4, 3), None);
    bad[2] = 0.0;
    assert_eq!(fit_piecewise(&x, &bad, 4, 3), None);
    let mut unsorted = x.clone();
    unsorted.swap(1, 2);
    assert_eq!(fit_piecewise(&unsorted, &t, 4, 3), None);
}

#[test]
fn thousands_of_sizes_are_fitted_on_thinned_candidates() {
    // A linear step sweep (nccl-tests -i): 4000 sizes, two regimes crossing at 2e8 bytes
    // (index 1999), which lies within one candidate spacing (63 points) of a candidate.
    let x: Vec<f64> = (1..=4000).map(|i| i as f64 * 1e5).collect();
    let t = times(&x, &[(10.0, 1e4), (18_010.0, 1e5)]);
    let fit = fit_piecewise(&x, &t, 4, 3).expect("fit");
    assert_eq!(fit.segments.len(), 2, "{:?}", fit.segments);
    assert!(
        fit.segments[1].first.abs_diff(2000) <= 63,
        "{:?}",
        fit.segments
    );
    let last = fit.segments.last().expect("segment");
    assert!((last.beta - 1e-5).abs() < 1e-7, "{last:?}");
}
