//! The production report on constructed records: exact aggregates and percentiles, the
//! benchmark read at measured, interpolated and out-of-range sizes, time lost, and each cause
//! found where planted and not found where absent.

mod causes;

use crate::analysis::curve::{CurvePoint, CurveReport};
use crate::analysis::input::Tuning;
use crate::analysis::inspector::record::{Op, Origin, Record, Size, SizeRule, Source, Timing};
use crate::analysis::production::aggregate::{aggregate, percentile, spread};
use crate::analysis::production::baseline::{at, Baseline};
use crate::analysis::production::build;
use crate::analysis::production::model::{Inputs, Report};
use crate::core::collective::Collective;
use std::path::PathBuf;
use std::sync::Arc;

/// all_reduce at 8 ranks: busbw = bytes / time x 1.75.
const FACTOR: f64 = 1.75;

/// `r` with `edit` made to its fields.
fn re(r: &mut Record, edit: impl FnOnce(&mut Record)) {
    edit(r);
}

fn rec(comm: &str, rank: u32, bytes: u64, time_us: f64) -> Record {
    Record {
        source: Arc::new(Source {
            file: Arc::new(PathBuf::from("job.log")),
            origin: Origin::Json,
            comm_id: comm.into(),
            comm_name: Some(format!("{comm}-name")),
            rank: Some(rank),
            nranks: 8,
            nnodes: Some(2),
            host: Some(format!("h{}", rank / 4)),
            pid: None,
            gpu: None,
            algo_proto: None,
            format_version: Some("v4.0".into()),
        }),
        op: Op::Collective(Collective::AllReduce),
        seq: Some(u64::from(rank)),
        size: Size::Exact(bytes),
        size_rule: SizeRule::AsWritten,
        time_us,
        timing: Some(Timing::KernelGpu),
        busbw_gbs: None,
        timestamp_us: None,
    }
}

fn point(bytes: u64, time_us: f64) -> CurvePoint {
    CurvePoint {
        bytes,
        time_us,
        time_min_us: time_us,
        time_max_us: time_us,
        samples: 1,
        busbw_gbs: bytes as f64 / time_us * 1e-3 * FACTOR,
        tuning: Some(Tuning {
            algo: "Ring".into(),
            proto: "LL128".into(),
            channels: "0..7".into(),
            model_time_us: None,
        }),
    }
}

/// A benchmark curve from 1M to 64M at 100 GB/s busbw (time = bytes x 1.75 / 100e3 us),
/// half-performance size 256K.
fn curve() -> CurveReport {
    let points: Vec<CurvePoint> = (20..=26)
        .map(|k| point(1 << k, (1u64 << k) as f64 * FACTOR / 100e3))
        .collect();
    CurveReport {
        collective: "all_reduce".into(),
        dtype: "float".into(),
        op: "sum".into(),
        nranks: 8,
        placement: "out_of_place".into(),
        rows: points.len(),
        busbw_factor: FACTOR,
        collective_basis: None,
        setup: None,
        latency_floor_us: None,
        plateau_busbw_gbs: 100.0,
        plateau_busbw_fit_gbs: 100.0,
        plateau_fit_extrapolates: false,
        half_perf_bytes: Some(262_144.0),
        sat90_bytes: Some(1 << 20),
        efficiency_pct: None,
        regimes: Vec::new(),
        switch_points_bytes: Vec::new(),
        switch_points: Vec::new(),
        anomalies: Vec::new(),
        points,
        notes: Vec::new(),
    }
}

fn base() -> Baseline {
    Baseline {
        files: vec!["bench.json".into()],
        curves: vec![curve()],
    }
}

/// The benchmark's time at `bytes` on [`curve`] scaled by `1 / speed`.
fn t(bytes: u64, speed: f64) -> f64 {
    bytes as f64 * FACTOR / 100e3 / speed
}

fn kinds(r: &Report) -> Vec<(String, Option<u32>, Option<u64>)> {
    r.causes
        .iter()
        .map(|c| (c.kind.clone(), c.rank, c.bytes))
        .collect()
}

#[test]
fn percentiles_are_nearest_rank() {
    let v: Vec<f64> = (1..=20).map(f64::from).collect();
    assert_eq!(percentile(&v, 5.0), 1.0); // ceil(1) = 1st
    assert_eq!(percentile(&v, 50.0), 10.0); // ceil(10) = 10th
    assert_eq!(percentile(&v, 95.0), 19.0); // ceil(19) = 19th
    assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 50.0), 2.0);
    assert_eq!(percentile(&[7.0], 5.0), 7.0);
    assert!(percentile(&[], 50.0).is_nan());
    let s = spread([5.0, f64::NAN, 1.0, 3.0]);
    assert_eq!((s.p5, s.p50, s.p95), (1.0, 3.0, 5.0));
}

#[test]
fn aggregates_count_percentiles_shares_and_sources_exactly() {
    // comm a: 4 calls of 1M at 10, 20, 30, 40 us; comm b: 2 calls of 2M at 50 us each.
    let mut records: Vec<Record> = [10.0, 20.0, 30.0, 40.0]
        .iter()
        .enumerate()
        .map(|(i, &tm)| rec("a", i as u32, 1 << 20, tm))
        .collect();
    records.push(rec("b", 0, 2 << 20, 50.0));
    let mut cpu = rec("b", 1, 2 << 20, 50.0);
    re(&mut cpu, |p| p.timing = Some(Timing::KernelCpu));
    re(&mut cpu, |p| p.busbw_gbs = Some(12.5));
    records.push(cpu);
    let mut bad = rec("b", 2, 2 << 20, f64::NAN);
    bad.source = Arc::new(Source {
        comm_name: None,
        ..Source::clone(&bad.source)
    });
    records.push(bad);
    let agg = aggregate(&records);
    assert_eq!(agg.unusable, 1);
    assert_eq!(agg.total_time_us, 200.0);
    let a = &agg.groups[0];
    assert_eq!((a.comm_id.as_str(), a.count, a.bytes), ("a", 4, 1 << 20));
    assert_eq!(
        (a.time_us.p5, a.time_us.p50, a.time_us.p95),
        (10.0, 20.0, 40.0)
    );
    assert_eq!(a.total_time_us, 100.0);
    assert_eq!(a.time_share, 0.5);
    let bw = |tm: f64| (1u64 << 20) as f64 / tm * 1e-3 * FACTOR;
    assert_eq!(a.busbw_gbs.p50, bw(30.0)); // busbw sorted: 40, 30, 20, 10 us
    assert_eq!((a.busbw_gbs.p5, a.busbw_gbs.p95), (bw(40.0), bw(10.0)));
    let b = &agg.groups[1];
    assert_eq!((b.count, b.time_share), (2, 0.5));
    assert_eq!(b.timing.len(), 2);
    assert_eq!((b.timing[0].count, b.timing[1].count), (1, 1));
    // The written busbw wins over the computed one.
    assert_eq!(b.busbw_gbs.p5, 12.5);
    assert_eq!(b.comm_name.as_deref(), Some("b-name"));
}

#[test]
fn ranks_and_hosts_are_relative_to_the_same_calls() {
    let records: Vec<Record> = (0..8)
        .map(|r| rec("a", r, 1 << 20, if r == 5 { 40.0 } else { 20.0 }))
        .collect();
    let report = build(&records, Inputs::default(), None);
    assert_eq!(report.ranks.len(), 8);
    assert_eq!(report.ranks[5].rel_busbw_p50, 0.5);
    assert_eq!(report.ranks[0].rel_busbw_p50, 1.0);
    assert_eq!(report.hosts.len(), 2);
    assert_eq!(
        (report.hosts[1].host.as_str(), report.hosts[1].ranks),
        ("h1", 4)
    );
    assert_eq!(report.hosts[1].total_time_us, 20.0 * 3.0 + 40.0);
}

#[test]
fn the_benchmark_is_read_at_measured_and_interpolated_sizes_never_beyond() {
    let c = curve();
    let m = at(&c, (4u64 << 20) as f64).unwrap();
    assert_eq!((m.source, m.time_us), ("measured", t(4 << 20, 1.0)));
    assert!((m.busbw_gbs - 100.0).abs() < 1e-9);
    assert_eq!(m.algo_proto.as_deref(), Some("Ring/LL128"));
    // 3M between 2M and 4M: time linear in log-log, so proportional here.
    let i = at(&c, (3u64 << 20) as f64).unwrap();
    assert_eq!(i.source, "interpolated");
    assert!((i.time_us / t(3 << 20, 1.0) - 1.0).abs() < 1e-12);
    let below = at(&c, 4096.0).unwrap_err();
    assert!(
        below.contains("below the benchmark's smallest size 1M"),
        "{below}"
    );
    let above = at(&c, (1u64 << 30) as f64).unwrap_err();
    assert!(
        above.contains("above the benchmark's largest size 64M"),
        "{above}"
    );
    let none = base().curve_for("all_gather", 8).unwrap_err();
    assert!(
        none.contains("no benchmark curve for all_gather at 8 ranks"),
        "{none}"
    );
}

#[test]
fn the_fitted_regime_spanning_a_size_is_read_first_and_gaps_between_regimes_are_interpolated() {
    let mut c = curve();
    let regime = |from: u64, to: u64, alpha_us: f64| crate::analysis::curve::Regime {
        from_bytes: from,
        to_bytes: to,
        alpha_us,
        algbw_gbs: 100.0 / FACTOR,
        busbw_gbs: 100.0,
        rms_rel_err: 0.01,
        points: 3,
    };
    // 1M..4M and 16M..64M fitted with a 10 us latency term; 4M..16M is a gap.
    c.regimes = vec![
        regime(1 << 20, 4 << 20, 10.0),
        regime(16 << 20, 64 << 20, 10.0),
    ];
    let s = 2u64 << 20;
    let f = at(&c, s as f64).unwrap();
    assert_eq!(f.source, "fitted");
    assert!(
        (f.time_us - (10.0 + t(s, 1.0))).abs() < 1e-9,
        "{}",
        f.time_us
    );
    assert!((f.busbw_gbs - s as f64 / f.time_us * 1e-3 * FACTOR).abs() < 1e-9);
    // A measured size inside a regime reads the fit, not the point.
    assert_eq!(at(&c, (16u64 << 20) as f64).unwrap().source, "fitted");
    // 8M lies between the regimes: the measured point; 6M: interpolated between 4M and 8M.
    let m = at(&c, (8u64 << 20) as f64).unwrap();
    assert_eq!((m.source, m.time_us), ("measured", t(8 << 20, 1.0)));
    assert_eq!(at(&c, (6u64 << 20) as f64).unwrap().source, "interpolated");
    // Beyond the measured sizes nothing is read, fit or not.
    assert!(at(&c, (128u64 << 20) as f64).is_err());
}

#[test]
fn time_lost_is_job_time_minus_benchmark_time_over_the_records() {
    let s = 8u64 << 20;
    let records = vec![rec("a", 0, s, t(s, 0.5)), rec("a", 1, s, t(s, 1.0))];
    let r = build(&records, Inputs::default(), Some(&base()));
    let v = r.groups[0].baseline.as_ref().unwrap();
    assert!((v.lost_us - t(s, 1.0)).abs() < 1e-9);
    // busbw 50 and 100 GB/s: the nearest-rank median is the first, 50.
    assert!((v.ratio - 0.5).abs() < 1e-9);
    assert_eq!(r.total_lost_us, Some(v.lost_us));
}
