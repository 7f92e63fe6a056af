//! Per-iteration statistics (`-I`), a pure leaf: nearest-rank percentiles, population standard
//! deviation and coefficient of variation over the iterations left after `-K` skipped ones,
//! defined as nccl-tests 2.19 defines them; and the [`median`] that analysis and acceptance
//! take over samples and sizes.

/// Per-iteration statistics (`-I`), times in microseconds per operation.
#[derive(Debug, Clone, PartialEq)]
pub struct IterStats {
    /// Leading iterations left out of the statistics (`-K`).
    pub skipped: u32,
    /// Minimum.
    pub min_us: f64,
    /// Maximum.
    pub max_us: f64,
    /// Mean.
    pub mean_us: f64,
    /// Median (`sorted[n/2]`).
    pub p50_us: f64,
    /// 95th percentile (nearest rank).
    pub p95_us: f64,
    /// 99th percentile (nearest rank).
    pub p99_us: f64,
    /// Population standard deviation.
    pub stdev_us: f64,
    /// Coefficient of variation in percent.
    pub cv_pct: f64,
    /// Every iteration's time, skipped ones included.
    pub times_us: Vec<f64>,
    /// In a job of several processes, each process's own per-iteration times (the slowest of
    /// its local ranks), in world-rank order; `times_us` is their per-iteration maximum.
    /// Empty in a single process (nccl-tests writes the key only then).
    pub per_process_max_times_us: Vec<Vec<f64>>,
}

/// Summarises `times_us` (one entry per timed iteration, microseconds per operation), leaving
/// out the first `skip` iterations. Returns `None` when no iteration remains.
///
/// p50 is `sorted[n/2]`; p95/p99 use the nearest rank `min(n-1, ceil(n*p/100)-1)`.
/// Cost: O(n log n).
pub fn iter_stats(times_us: &[f64], skip: u32) -> Option<IterStats> {
    let kept = times_us.get(skip as usize..).filter(|k| !k.is_empty())?;
    let mut sorted = kept.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let mean = sorted.iter().sum::<f64>() / n as f64;
    let var = sorted.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / n as f64;
    let stdev = var.sqrt();
    let rank = |p: f64| {
        let idx = ((n as f64 * p / 100.0).ceil() as usize).saturating_sub(1);
        sorted[idx.min(n - 1)]
    };
    Some(IterStats {
        skipped: skip,
        min_us: sorted[0],
        max_us: sorted[n - 1],
        mean_us: mean,
        p50_us: sorted[n / 2],
        p95_us: rank(95.0),
        p99_us: rank(99.0),
        stdev_us: stdev,
        cv_pct: if mean > 0.0 {
            stdev / mean * 100.0
        } else {
            0.0
        },
        times_us: times_us.to_vec(),
        per_process_max_times_us: Vec::new(),
    })
}

/// The median: the middle value, or the mean of the two middle values for an even count;
/// `None` when empty. Values sort by `total_cmp`, so a NaN sorts to an end instead of
/// panicking. (The `-I` p50 of [`iter_stats`] is `sorted[n/2]` instead, as nccl-tests has it.)
pub fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_of_one_to_twenty_match_hand_computation() {
        let t: Vec<f64> = (1..=20).map(f64::from).collect();
        let s = iter_stats(&t, 0).unwrap();
        assert_eq!((s.min_us, s.max_us, s.mean_us), (1.0, 20.0, 10.5));
        assert_eq!(s.p50_us, 11.0); // sorted[10]
        assert_eq!(s.p95_us, 19.0); // ceil(19) - 1 = 18 -> 19
        assert_eq!(s.p99_us, 20.0); // ceil(19.8) - 1 = 19 -> 20
                                    // population variance of 1..=20 is (20^2 - 1) / 12
        assert!((s.stdev_us - (399.0f64 / 12.0).sqrt()).abs() < 1e-12);
        assert!((s.cv_pct - s.stdev_us / 10.5 * 100.0).abs() < 1e-12);
        assert_eq!(s.times_us.len(), 20);
    }

    #[test]
    fn skipped_iterations_are_left_out_of_the_summary_but_kept_in_the_times() {
        let t = [100.0, 1.0, 1.0, 1.0];
        let s = iter_stats(&t, 1).unwrap();
        assert_eq!((s.max_us, s.stdev_us, s.skipped), (1.0, 0.0, 1));
        assert_eq!(s.times_us, t.to_vec());
        assert!(iter_stats(&t, 4).is_none());
        assert!(iter_stats(&[], 0).is_none());
    }

    #[test]
    fn median_takes_the_middle_or_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![4.0]), Some(4.0));
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), Some(2.5));
        // Unlike the -I p50 (sorted[n/2]), which takes the upper of the middle two.
        assert_eq!(iter_stats(&[4.0, 1.0, 3.0, 2.0], 0).unwrap().p50_us, 3.0);
        assert_eq!(median(vec![1.0, f64::NAN, 0.0]), Some(1.0));
    }
}
