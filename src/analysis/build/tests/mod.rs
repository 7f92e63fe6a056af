//! Builder tests on hand-made [`ReadSet`]s: pooling, bandwidth factors, every anomaly kind (and
//! silence on clean data), and the whole-curve numbers of an exact curve against hand values.

mod honest_numbers;
mod untrusted;

use super::*;
use crate::analysis::curve::CurveReport;
use crate::analysis::input::{SourceRef, Tuning};
use crate::result::Placement;

/// A row of `collective` over `nranks` with nccl-tests' bandwidth columns for a given factor.
fn row(collective: Option<&str>, nranks: Option<usize>, bytes: u64, time_us: f64) -> InputRow {
    let factor = collective
        .and_then(crate::core::collective::Collective::parse)
        .zip(nranks)
        .map_or(1.5, |(c, n)| c.busbw_factor(n));
    let algbw = bytes as f64 / time_us * 1e-3;
    InputRow {
        source: SourceRef {
            file: "t".into(),
            line: 1,
        },
        collective: collective.map(str::to_string),
        dtype: "float".into(),
        op: "sum".into(),
        root: -1,
        nranks,
        placement: Placement::OutOfPlace,
        cycle: 0,
        run: 0,
        bytes,
        count: bytes / 4,
        time_us,
        algbw_gbs: algbw,
        busbw_gbs: algbw * factor,
        wrong: Some(0.0),
        tuning: None,
    }
}

/// An exact all_reduce curve over 4 ranks: `T = 10 us + S / (10 GB/s)`, 1 KiB .. 1 GiB.
fn exact_rows() -> Vec<InputRow> {
    (10..=30)
        .map(|e| {
            row(
                Some("all_reduce"),
                Some(4),
                1 << e,
                10.0 + (1u64 << e) as f64 / 1e4,
            )
        })
        .collect()
}

fn only_curve(rows: Vec<InputRow>) -> CurveReport {
    let a = analyze(
        &ReadSet {
            rows,
            skipped: vec![],
            inferred: vec![],
            group_rows: 0,
        },
        None,
    );
    assert_eq!(a.curves.len(), 1);
    a.curves.into_iter().next().expect("one curve")
}

fn kinds(c: &CurveReport) -> Vec<(&str, u64)> {
    c.anomalies
        .iter()
        .map(|a| (a.kind.as_str(), a.bytes))
        .collect()
}

#[test]
fn exact_curve_numbers_equal_hand_values() {
    let a = analyze(
        &ReadSet {
            rows: exact_rows(),
            skipped: vec![],
            inferred: vec![],
            group_rows: 0,
        },
        Some(20.0),
    );
    let c = &a.curves[0];
    let busbw = |s: f64| s / (10.0 + s / 1e4) * 1e-3 * 1.5; // factor 2(n-1)/n = 1.5
    assert_eq!(c.busbw_factor, 1.5);
    assert!(
        (c.latency_floor_us.expect("latency-bound") - (10.0 + 2048.0 / 1e4)).abs() < 1e-12,
        "median of 1K,2K,4K"
    );
    let plateau = busbw((1u64 << 29) as f64); // median of the largest three sizes
    assert!((c.plateau_busbw_gbs - plateau).abs() < 1e-9);
    assert_eq!(c.regimes.len(), 1, "{:?}", c.regimes);
    assert!(
        (c.plateau_busbw_fit_gbs - 15.0).abs() < 1e-6,
        "10 GB/s x 1.5"
    );
    assert!(
        (c.half_perf_bytes.expect("defined") - 1e5).abs() < 1e-3,
        "10 us x 1e4 B/us"
    );
    // busbw/plateau >= 0.9 first at 1 MiB: 512 KiB gives 0.8398 of the asymptote.
    assert_eq!(c.sat90_bytes, Some(1 << 20));
    assert!((c.efficiency_pct.expect("peak given") - plateau / 20.0 * 100.0).abs() < 1e-9);
    assert!(c.anomalies.is_empty(), "clean data: {:?}", c.anomalies);
    assert!(c.switch_points.is_empty() && c.switch_points_bytes.is_empty());
    assert_eq!((a.rows_read, a.rows_skipped, c.rows), (21, 0, 21));
}

#[test]
fn cycles_runs_and_roots_pool_into_one_point() {
    let mut rows = Vec::new();
    for (i, t) in [12.0, 10.0, 11.0].into_iter().enumerate() {
        let mut r = row(Some("broadcast"), Some(2), 4096, t);
        (r.cycle, r.run, r.root) = (i as u32, i as u32 % 2, i as i64);
        rows.push(r);
    }
    let c = only_curve(rows);
    let p = &c.points[0];
    assert_eq!(
        (p.samples, p.time_us, p.time_min_us, p.time_max_us),
        (3, 11.0, 10.0, 12.0)
    );
    assert!(
        (p.busbw_gbs - 4096.0 / 11.0 * 1e-3).abs() < 1e-12,
        "busbw at the median time"
    );
    assert_eq!(c.rows, 3);
    assert!(
        c.regimes.is_empty() && c.half_perf_bytes.is_none(),
        "one size: no fit"
    );
}

#[test]
fn busbw_factor_from_the_table_or_measured() {
    let c = only_curve(vec![row(Some("all_gather"), Some(8), 1 << 20, 50.0)]);
    assert_eq!(c.busbw_factor, 7.0 / 8.0);
    // Unknown collective and ranks: median busbw/algbw of the rows (the helper uses 1.5).
    let c = only_curve(vec![
        row(None, None, 1 << 20, 50.0),
        row(None, None, 1 << 21, 90.0),
    ]);
    assert_eq!((c.collective.as_str(), c.nranks), ("unknown", 0));
    assert!((c.busbw_factor - 1.5).abs() < 1e-12);
    // Hypercube: algbw counts (n-1)/n of the bytes, factor 1.
    let c = only_curve(vec![row(Some("hypercube"), Some(4), 1 << 20, 100.0)]);
    assert!((c.points[0].busbw_gbs - 0.75 * (1 << 20) as f64 / 100.0 * 1e-3).abs() < 1e-12);
}

#[test]
fn wrong_data_and_unusable_times_are_reported() {
    let mut rows = exact_rows();
    rows[4].wrong = Some(3.0);
    let mut nan = rows[6].clone();
    nan.time_us = f64::NAN;
    rows.push(nan);
    let c = only_curve(rows);
    assert_eq!(
        kinds(&c),
        vec![("wrong_data", 1 << 14), ("unusable_time", 1 << 16)]
    );
    assert!(
        c.anomalies[0].detail.contains("#wrong = 3"),
        "{}",
        c.anomalies[0].detail
    );
    assert_eq!(c.rows, 22);
}

#[test]
fn spread_samples_are_a_cycle_disagreement() {
    let mut rows = exact_rows();
    let mut slow = rows[8].clone();
    slow.time_us *= 1.12;
    rows.push(slow);
    rows.push(rows[8].clone());
    let c = only_curve(rows);
    assert_eq!(kinds(&c), vec![("cycle_disagreement", 1 << 18)]);
}

#[test]
fn a_slow_size_is_a_dip_and_an_outlier() {
    let mut rows = exact_rows();
    rows[12].time_us *= 1.5; // 4 MiB
    let c = only_curve(rows);
    assert_eq!(kinds(&c), vec![("dip", 1 << 22), ("outlier", 1 << 22)]);
    assert_eq!(
        c.regimes.len(),
        1,
        "the outlier buys no breakpoint: {:?}",
        c.regimes
    );
}

#[test]
fn placements_that_disagree_are_flagged_on_both_curves() {
    let mut rows = exact_rows();
    for r in exact_rows() {
        let mut ip = r.clone();
        ip.placement = Placement::InPlace;
        if ip.bytes == 1 << 15 {
            ip.time_us *= 1.2;
        }
        rows.push(ip);
    }
    let a = analyze(
        &ReadSet {
            rows,
            skipped: vec![],
            inferred: vec![],
            group_rows: 0,
        },
        None,
    );
    assert_eq!(a.curves.len(), 2);
    assert_eq!(a.curves[0].placement, "in_place", "sorted by key");
    for c in &a.curves {
        let found: Vec<_> = kinds(c)
            .into_iter()
            .filter(|k| k.0 != "outlier" && k.0 != "dip")
            .collect();
        assert_eq!(
            found,
            vec![("placement_disagreement", 1 << 15)],
            "{:?}",
            c.anomalies
        );
    }
}

#[test]
fn switch_points_carry_the_time_jump_and_the_decision_change() {
    // LL-like regime (5 us, 2 GB/s) then Simple-like (60 us, 40 GB/s), crossing near 116 KB.
    let tuned = |proto: &str| Tuning {
        algo: "Ring".into(),
        proto: proto.into(),
        channels: "0..1".into(),
        model_time_us: None,
    };
    let rows: Vec<InputRow> = (3..=30)
        .map(|e| {
            let s = (1u64 << e) as f64;
            let (ll, simple) = (5.0 + s / 2e3, 60.0 + s / 4e4);
            let mut r = row(Some("all_reduce"), Some(2), 1 << e, ll.min(simple));
            r.tuning = Some(tuned(if ll <= simple { "LL" } else { "Simple" }));
            r
        })
        .collect();
    let c = only_curve(rows);
    assert_eq!(c.switch_points_bytes, vec![1 << 17], "{:?}", c.regimes);
    let sp = &c.switch_points[0];
    let (before, after) = (5.0 + 65536.0 / 2e3, 60.0 + 131072.0 / 4e4);
    assert!((sp.time_jump - (after / before - 1.0)).abs() < 1e-12);
    assert_eq!(sp.tuning_change.as_deref(), Some("LL/Ring -> Simple/Ring"));
    assert!(
        (c.regimes[1].busbw_gbs - 40.0).abs() < 1e-6,
        "factor 1 at 2 ranks"
    );
    let unmatched = |c: &crate::analysis::curve::CurveReport| {
        c.anomalies
            .iter()
            .filter(|a| a.kind == "decision_change_without_step")
            .map(|a| a.bytes)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        unmatched(&c),
        Vec::<u64>::new(),
        "the step matches the change"
    );
    // The same straight curve, but NCCL relabels the channels at 1 MiB: a decision change
    // with no step in the fit is reported at that size.
    let rows: Vec<InputRow> = (3..=30)
        .map(|e| {
            let mut r = row(
                Some("all_reduce"),
                Some(2),
                1 << e,
                5.0 + (1u64 << e) as f64 / 2e3,
            );
            let mut t = tuned("LL");
            if e >= 20 {
                t.channels = "0..3".into();
            }
            r.tuning = Some(t);
            r
        })
        .collect();
    assert_eq!(unmatched(&only_curve(rows)), vec![1 << 20]);
}

#[test]
fn tiny_and_degenerate_curves_stay_finite() {
    let mut zero = row(Some("all_reduce"), Some(2), 0, 0.0);
    zero.algbw_gbs = 0.0;
    // 8 B in 1e-310 us overflows the bandwidth: reported as 0, never inf or NaN.
    let rows = vec![zero, row(Some("all_reduce"), Some(2), 8, 1e-310)];
    let c = only_curve(rows);
    let json = serde_json::to_string(&c).expect("serialise");
    let options = [
        "\"efficiency_pct\":null",
        "\"tuning\":null",
        "\"sat90_bytes\":null",
        "\"half_perf_bytes\":null",
    ];
    let json = options.iter().fold(json, |j, o| j.replace(o, ""));
    assert!(
        !json.contains("null"),
        "a non-finite number was serialised as null: {json}"
    );
    assert_eq!(
        (c.latency_floor_us, c.plateau_busbw_gbs),
        (Some(1e-310), 0.0)
    );
    assert_eq!((c.sat90_bytes, c.regimes.len()), (None, 0));
    assert!(analyze(&ReadSet::default(), None).curves.is_empty());
}
