//! Known answers of the comparison statistics and of the whole build on synthetic rows:
//! identical inputs, a clear 10% slowdown, noise that swamps a change, the one-sample path,
//! that Benjamini-Hochberg cuts false calls on pure noise (seeded generator), alignment of
//! sizes and curves present on one side only, and no panic on hostile numbers.

use super::build;
use super::model::Comparison;
use super::side;
use super::stats::{bh_adjust, verdict, welch_log, Basis, Verdict};
use crate::analysis::input::{InputRow, ReadSet, SourceRef};
use crate::result::Placement;

/// A seeded generator (splitmix64) with standard normal draws (Box-Muller).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
    /// `n` times around `median` with relative (log-normal) noise `sigma`.
    fn times(&mut self, n: usize, median: f64, sigma: f64) -> Vec<f64> {
        (0..n)
            .map(|_| median * (sigma * self.normal()).exp())
            .collect()
    }
}

/// The verdict of one size on its own (one test, so q = p).
fn call(before: &[f64], after: &[f64], threshold: f64) -> (Verdict, Basis) {
    let mid = |v: &[f64]| crate::core::stats::median(v.to_vec()).unwrap();
    let test = welch_log(before, after);
    verdict(
        mid(after) / mid(before),
        threshold,
        test.map(|t| t.p_value),
        test.map(|t| t.ratio_gm),
    )
}

#[test]
fn welch_matches_a_hand_computed_answer() {
    // ln times: difference 0.17955, t = 2.36154, df = 3.99334, p = 0.077641 (numerical
    // integration of the t density).
    let t = welch_log(&[10.0, 11.0, 12.0], &[12.0, 13.0, 14.5]).unwrap();
    assert!((t.ratio_gm - 1.196_665_83).abs() < 1e-8, "{t:?}");
    assert!((t.df - 3.993_343_55).abs() < 1e-6, "{t:?}");
    assert!((t.p_value - 0.077_640_81).abs() < 1e-6, "{t:?}");
    assert!(t.ci_low < 1.0 && t.ci_high > t.ratio_gm);
    assert_eq!(welch_log(&[1.0], &[1.0, 2.0]), None, "one sample: no test");
    assert_eq!(welch_log(&[1.0, f64::NAN], &[1.0, 2.0]), None);
    assert_eq!(welch_log(&[1.0, 0.0], &[1.0, 2.0]), None);
}

#[test]
fn identical_inputs_are_unchanged() {
    let mut rng = Rng(1);
    let v = rng.times(5, 100.0, 0.02);
    let t = welch_log(&v, &v).unwrap();
    assert_eq!((t.ratio_gm, t.p_value), (1.0, 1.0));
    assert_eq!(
        call(&v, &v, 0.05),
        (Verdict::Unchanged, Basis::WithinThreshold)
    );
    // Constant samples, too (zero variance on both sides).
    assert_eq!(
        call(&[5.0; 3], &[5.0; 3], 0.05),
        (Verdict::Unchanged, Basis::WithinThreshold)
    );
}

#[test]
fn ten_percent_slower_with_five_quiet_cycles_is_slower() {
    let mut rng = Rng(2);
    let before = rng.times(5, 100.0, 0.01);
    let after = rng.times(5, 110.0, 0.01);
    assert_eq!(
        call(&before, &after, 0.05),
        (Verdict::Slower, Basis::Significant)
    );
    // And the mirror image is faster.
    assert_eq!(
        call(&after, &before, 0.05),
        (Verdict::Faster, Basis::Significant)
    );
    // A threshold above the change keeps it unchanged however significant.
    assert_eq!(
        call(&before, &after, 0.2),
        (Verdict::Unchanged, Basis::WithinThreshold)
    );
}

#[test]
fn noise_larger_than_the_change_is_unchanged() {
    let mut rng = Rng(3);
    let before = rng.times(5, 100.0, 0.3);
    let after = rng.times(5, 110.0, 0.3);
    let (v, basis) = call(&before, &after, 0.05);
    assert_eq!(v, Verdict::Unchanged, "{before:?} {after:?}");
    assert!(matches!(
        basis,
        Basis::NotSignificant | Basis::WithinThreshold
    ));
}

#[test]
fn one_sample_per_side_falls_back_to_the_threshold() {
    assert_eq!(
        call(&[100.0], &[110.0], 0.05),
        (Verdict::Slower, Basis::ThresholdOnly)
    );
    assert_eq!(
        call(&[100.0], &[103.0], 0.05),
        (Verdict::Unchanged, Basis::ThresholdOnly)
    );
    assert_eq!(
        call(&[110.0], &[100.0], 0.05),
        (Verdict::Faster, Basis::ThresholdOnly)
    );
    assert_eq!(Basis::ThresholdOnly.text(), "1 sample: threshold only");
    // One side with several samples still has no test.
    assert_eq!(
        call(&[100.0, 101.0, 99.0], &[120.0], 0.05).1,
        Basis::ThresholdOnly
    );
}

#[test]
fn the_threshold_is_symmetric_on_the_log_scale() {
    // 1.05x slower is beyond 5%; 1/1.05 = 0.952 faster is beyond too, 0.96 is not.
    assert_eq!(verdict(1.051, 0.05, None, None).0, Verdict::Slower);
    assert_eq!(verdict(1.0 / 1.051, 0.05, None, None).0, Verdict::Faster);
    assert_eq!(verdict(0.96, 0.05, None, None).0, Verdict::Unchanged);
    // Median and mean disagreeing in direction is not a call.
    assert_eq!(
        verdict(1.2, 0.05, Some(0.001), Some(0.9)),
        (Verdict::Unchanged, Basis::EstimatesDisagree)
    );
}

#[test]
fn benjamini_hochberg_known_answer() {
    let q = bh_adjust(&[Some(0.01), Some(0.04), None, Some(0.03), Some(0.005)]);
    let want = [Some(0.02), Some(0.04), None, Some(0.04), Some(0.02)];
    for (got, want) in q.iter().zip(want) {
        match (got, want) {
            (Some(g), Some(w)) => assert!((g - w).abs() < 1e-12, "{q:?}"),
            (g, w) => assert_eq!(*g, w),
        }
    }
    assert_eq!(bh_adjust(&[Some(0.9)]), vec![Some(0.9)]);
    assert_eq!(bh_adjust(&[Some(f64::NAN)]), vec![Some(1.0)]);
}

#[test]
fn multiple_testing_control_cuts_false_calls_on_pure_noise() {
    // 400 sizes, 5 samples a side from the same distribution: every call is false. With the
    // threshold at 0 only the statistics decide.
    let mut rng = Rng(42);
    let (mut p, mut gm, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..400 {
        let before = rng.times(5, 50.0, 0.05);
        let after = rng.times(5, 50.0, 0.05);
        let mid = |v: &[f64]| crate::core::stats::median(v.to_vec()).unwrap();
        let t = welch_log(&before, &after).unwrap();
        p.push(Some(t.p_value));
        gm.push(t.ratio_gm);
        ratio.push(mid(&after) / mid(&before));
    }
    let calls = |q: &[Option<f64>]| {
        (0..q.len())
            .filter(|&i| verdict(ratio[i], 0.0, q[i], Some(gm[i])).0 != Verdict::Unchanged)
            .count()
    };
    let raw = calls(&p);
    let adjusted = calls(&bh_adjust(&p));
    // About ALPHA x 400 = 20 false calls unadjusted (fewer where median and mean disagree).
    assert!(raw >= 8, "raw false calls {raw}");
    assert!(adjusted <= 2, "BH false calls {adjusted} (raw {raw})");
    assert!(adjusted < raw);
}

fn row(bytes: u64, time_us: f64, cycle: u32, nranks: usize) -> InputRow {
    InputRow {
        source: SourceRef {
            file: "t".into(),
            line: 1,
        },
        collective: Some("all_reduce".into()),
        dtype: "float".into(),
        op: "sum".into(),
        root: -1,
        nranks: Some(nranks),
        placement: Placement::OutOfPlace,
        cycle,
        run: 0,
        bytes,
        count: bytes / 4,
        time_us,
        algbw_gbs: 0.0,
        busbw_gbs: 0.0,
        wrong: Some(0.0),
        tuning: None,
    }
}

/// Rows for sizes 1K..1M (x4) with `cycles` samples each, time scaled by `slow(bytes)`.
fn sweep(rng: &mut Rng, cycles: u32, nranks: usize, slow: impl Fn(u64) -> f64) -> ReadSet {
    let mut set = ReadSet::default();
    for c in 0..cycles {
        for b in (0..6).map(|i| 1024u64 << (2 * i)) {
            let t = (10.0 + b as f64 / 20e3) * slow(b) * (0.01 * rng.normal()).exp();
            set.rows.push(row(b, t, c, nranks));
        }
    }
    set
}

fn compare_sets(before: &ReadSet, after: &ReadSet) -> Comparison {
    let (gb, ga) = (side::group(before), side::group(after));
    let summary = |s: &ReadSet| side::summary(&[], s, Default::default());
    build::compare((&gb, summary(before)), (&ga, summary(after)), 0.05)
}

#[test]
fn build_calls_only_the_slowed_sizes_and_compares_the_curve_numbers() {
    let mut rng = Rng(7);
    let before = sweep(&mut rng, 5, 8, |_| 1.0);
    let after = sweep(&mut rng, 5, 8, |b| if b >= 65536 { 1.1 } else { 1.0 });
    let cmp = compare_sets(&before, &after);
    assert_eq!(cmp.curves.len(), 1);
    let c = &cmp.curves[0];
    let slower: Vec<u64> = c
        .sizes
        .iter()
        .filter(|s| s.verdict == "slower")
        .map(|s| s.bytes)
        .collect();
    assert_eq!(slower, [65536, 262144, 1 << 20]);
    assert!(cmp.regression && !cmp.unlike_setup);
    assert_eq!((c.slower, c.faster, c.unchanged), (3, 0, 3));
    let plateau = c.plateau_busbw_gbs.change.unwrap();
    assert!(
        (-0.12..-0.07).contains(&plateau),
        "plateau change {plateau}"
    );
    assert!(c.latency_floor_us.change.unwrap().abs() < 0.03);
}

#[test]
fn one_sided_sizes_and_curves_are_listed_not_compared() {
    let mut rng = Rng(8);
    let mut before = sweep(&mut rng, 3, 8, |_| 1.0);
    before.rows.retain(|r| r.bytes != 1024);
    let mut after = sweep(&mut rng, 3, 8, |_| 1.0);
    after.rows.retain(|r| r.bytes != 1 << 20);
    after.rows.extend(sweep(&mut rng, 3, 16, |_| 1.0).rows);
    let cmp = compare_sets(&before, &after);
    assert_eq!(cmp.curves.len(), 1);
    assert_eq!(cmp.curves[0].only_before_bytes, [1 << 20]);
    assert_eq!(cmp.curves[0].only_after_bytes, [1024]);
    assert_eq!(cmp.curves[0].sizes.len(), 4);
    assert_eq!(cmp.only_after_curves.len(), 1);
    assert_eq!(cmp.only_after_curves[0].nranks, 16);
    assert!(cmp.unlike_setup, "8 vs 8+16 ranks: {:?}", cmp.differences);
    assert!(!cmp.regression);
}

#[test]
fn hostile_numbers_do_not_panic_or_leak_non_finite_values() {
    let mut before = ReadSet::default();
    let mut after = ReadSet::default();
    for (i, t) in [f64::NAN, f64::INFINITY, -1.0, 0.0, 1e-300, 1e300, 5.0]
        .into_iter()
        .enumerate()
    {
        before.rows.push(row(8, t, i as u32, 2));
        after.rows.push(row(8, 5.0, i as u32, 2));
        after.rows.push(row(u64::MAX, t, i as u32, 2));
        before.rows.push(row(u64::MAX, 1e300, i as u32, 2));
    }
    let cmp = compare_sets(&before, &after);
    assert_eq!(
        cmp.before.rows_skipped, 4,
        "NaN, inf, -1 and 0 are not times"
    );
    let json = super::json::render(&cmp);
    assert!(!json.contains("NaN") && !json.contains("inf"), "{json}");
    let text = super::text::render(&cmp);
    assert!(text.contains("all_reduce"));
    let _ = super::chart::busbw_svg("all_reduce", &cmp.curves.iter().collect::<Vec<_>>());
}
