//! A realistic hand-made [`Analysis`] for the report and plot tests: an all_reduce curve 8 B ..
//! 1 GiB with three regimes and tuning annotations, an all_gather curve without tuning, a noisy
//! reduce_scatter curve with anomalies, and a 2-point broadcast curve with no regimes. Points
//! follow each regime's alpha-beta model with a small deterministic ripple.

use crate::analysis::curve::{Analysis, Anomaly, CurvePoint, CurveReport, Regime, SwitchPoint};
use crate::analysis::input::{Skipped, SourceRef, Tuning};

/// The file name with markup that the HTML report must escape.
pub(crate) const EVIL_FILE: &str = "logs/<script>alert(1)</script>.txt";

/// A regime literal.
fn regime(from: u64, to: u64, alpha: f64, algbw: f64, factor: f64, err: f64, n: usize) -> Regime {
    Regime {
        from_bytes: from,
        to_bytes: to,
        alpha_us: alpha,
        algbw_gbs: algbw,
        busbw_gbs: algbw * factor,
        rms_rel_err: err,
        points: n,
    }
}

/// Points at `2^lo ..= 2^hi` bytes following the regime that covers each size.
fn points(lo: u32, hi: u32, regimes: &[Regime], factor: f64, samples: usize) -> Vec<CurvePoint> {
    (lo..=hi)
        .map(|exp| {
            let bytes = 1u64 << exp;
            let r = regimes
                .iter()
                .find(|r| bytes <= r.to_bytes)
                .unwrap_or(&regimes[regimes.len() - 1]);
            let ripple = 1.0 + 0.005 * f64::from(exp % 5) - 0.01;
            let time_us = (r.alpha_us + bytes as f64 / (r.algbw_gbs * 1e3)) * ripple;
            CurvePoint {
                bytes,
                time_us,
                time_min_us: time_us * 0.98,
                time_max_us: time_us * 1.03,
                samples,
                busbw_gbs: bytes as f64 / (time_us * 1e3) * factor,
                tuning: None,
            }
        })
        .collect()
}

/// NCCL's decision for the all_reduce curve at `bytes`.
fn all_reduce_tuning(bytes: u64) -> Tuning {
    let (algo, proto, channels) = match bytes {
        0..=65536 => ("Tree", "LL", "0..7"),
        65537..=4194304 => ("Ring", "LL128", "0..15"),
        _ => ("Ring", "Simple", "0..31"),
    };
    Tuning {
        algo: algo.into(),
        proto: proto.into(),
        channels: channels.into(),
        model_time_us: None,
    }
}

/// all_reduce float sum, 8 ranks: 8 B .. 1 GiB, three regimes, tuning on every point.
pub(crate) fn all_reduce() -> CurveReport {
    let f = 1.75;
    let regimes = vec![
        regime(8, 65536, 10.0, 20.0, f, 0.012, 14),
        regime(131072, 4194304, 14.0, 120.0, f, 0.018, 6),
        regime(8388608, 1 << 30, 30.0, 200.0, f, 0.006, 8),
    ];
    let mut pts = points(3, 30, &regimes, f, 4);
    for p in &mut pts {
        p.tuning = Some(all_reduce_tuning(p.bytes));
    }
    CurveReport {
        collective: "all_reduce".into(),
        dtype: "float".into(),
        op: "sum".into(),
        nranks: 8,
        placement: "out_of_place".into(),
        rows: 112,
        collective_basis: None,
        setup: None,
        busbw_factor: f,
        latency_floor_us: Some(10.05),
        plateau_busbw_gbs: 347.6,
        plateau_busbw_fit_gbs: 350.0,
        half_perf_bytes: Some(6.0e6),
        plateau_fit_extrapolates: false,
        sat90_bytes: Some(64 << 20),
        efficiency_pct: Some(86.9),
        switch_points_bytes: vec![131072, 8388608],
        switch_points: vec![
            SwitchPoint {
                bytes: 131072,
                time_jump: 0.136,
                tuning_change: Some("Tree/LL -> Ring/LL128".into()),
            },
            SwitchPoint {
                bytes: 8388608,
                time_jump: 0.052,
                tuning_change: Some("Ring/LL128 -> Ring/Simple".into()),
            },
        ],
        regimes,
        anomalies: vec![],
        points: pts,
        notes: vec![],
    }
}

/// all_gather float, 8 ranks, in place: 1 KiB .. 256 MiB, two regimes, no tuning.
pub(crate) fn all_gather() -> CurveReport {
    let f = 0.875;
    let regimes = vec![
        regime(1024, 524288, 8.0, 30.0, f, 0.009, 10),
        regime(1 << 20, 1 << 28, 20.0, 160.0, f, 0.004, 9),
    ];
    CurveReport {
        collective: "all_gather".into(),
        dtype: "float".into(),
        op: "none".into(),
        nranks: 8,
        placement: "in_place".into(),
        rows: 38,
        collective_basis: None,
        setup: None,
        busbw_factor: f,
        latency_floor_us: Some(8.05),
        plateau_busbw_gbs: 139.2,
        plateau_busbw_fit_gbs: 140.0,
        half_perf_bytes: Some(3.2e6),
        plateau_fit_extrapolates: false,
        sat90_bytes: Some(32 << 20),
        efficiency_pct: Some(34.8),
        switch_points_bytes: vec![1 << 20],
        switch_points: vec![SwitchPoint {
            bytes: 1 << 20,
            time_jump: 0.042,
            tuning_change: None,
        }],
        points: points(10, 28, &regimes, f, 2),
        notes: vec![],
        regimes,
        anomalies: vec![],
    }
}

/// reduce_scatter bfloat16 sum, 4 ranks: one noisy regime and three anomalies.
pub(crate) fn reduce_scatter() -> CurveReport {
    let f = 0.75;
    let regimes = vec![regime(4096, 1 << 26, 15.0, 80.0, f, 0.085, 15)];
    let mut pts = points(12, 26, &regimes, f, 3);
    if let Some(dip) = pts.iter_mut().find(|p| p.bytes == 4 << 20) {
        dip.time_us *= 1.4;
        dip.time_min_us *= 1.4;
        dip.time_max_us *= 1.4;
        dip.busbw_gbs /= 1.4;
    }
    let anomaly = |kind: &str, bytes: u64, detail: &str| Anomaly {
        kind: kind.into(),
        bytes,
        detail: detail.into(),
    };
    CurveReport {
        collective: "reduce_scatter".into(),
        dtype: "bfloat16".into(),
        op: "sum".into(),
        nranks: 4,
        placement: "out_of_place".into(),
        rows: 45,
        collective_basis: None,
        setup: None,
        busbw_factor: f,
        latency_floor_us: Some(15.2),
        plateau_busbw_gbs: 59.1,
        plateau_busbw_fit_gbs: 60.0,
        half_perf_bytes: Some(1.2e6),
        plateau_fit_extrapolates: false,
        sat90_bytes: Some(16 << 20),
        efficiency_pct: Some(14.8),
        regimes,
        switch_points_bytes: vec![],
        switch_points: vec![],
        anomalies: vec![
            anomaly(
                "placement_disagreement",
                1 << 20,
                "in-place 18.20 us vs out-of-place 14.90 us (+22.1%)",
            ),
            anomaly(
                "dip",
                4 << 20,
                "busbw 37.1 GB/s, 29% below the neighbours (52.0 GB/s)",
            ),
            anomaly("wrong_data", 16 << 20, "#wrong 2 in cycle 1 of 3"),
        ],
        points: pts,
        notes: vec![],
    }
}

/// broadcast int8, 2 ranks: two points, no regimes, undefined fit numbers.
pub(crate) fn broadcast() -> CurveReport {
    let point = |bytes: u64, time_us: f64| CurvePoint {
        bytes,
        time_us,
        time_min_us: time_us,
        time_max_us: time_us,
        samples: 1,
        busbw_gbs: bytes as f64 / (time_us * 1e3),
        tuning: None,
    };
    CurveReport {
        collective: "broadcast".into(),
        dtype: "int8".into(),
        op: "none".into(),
        nranks: 2,
        placement: "out_of_place".into(),
        rows: 2,
        collective_basis: None,
        setup: None,
        busbw_factor: 1.0,
        latency_floor_us: Some(9.5),
        plateau_busbw_gbs: 0.0017,
        plateau_busbw_fit_gbs: f64::NAN,
        half_perf_bytes: None,
        plateau_fit_extrapolates: false,
        sat90_bytes: Some(16),
        efficiency_pct: Some(0.0),
        regimes: vec![],
        switch_points_bytes: vec![],
        switch_points: vec![],
        anomalies: vec![],
        points: vec![point(8, 9.5), point(16, 9.6)],
        notes: vec![],
    }
}

/// Seven skipped rows; one names a file with markup, one has a reason with markup.
fn skipped() -> Vec<Skipped> {
    let skip = |file: &str, line: usize, reason: &str| Skipped {
        source: SourceRef {
            file: file.into(),
            line,
        },
        reason: reason.into(),
    };
    vec![
        skip(EVIL_FILE, 12, "unparsable row: 7 fields, expected 13"),
        skip("runs/a.txt", 40, "time column is not a number: 'N/A'"),
        skip("runs/a.txt", 41, "time column is not a number: 'N/A'"),
        skip("runs/b.json", 3, "missing key <time> & <size>"),
        skip("runs/b.json", 4, "missing key 'time'"),
        skip("runs/c.csv", 9, "unknown placement 'sideways'"),
        skip("runs/c.csv", 10, "unknown placement 'sideways'"),
    ]
}

/// The whole fixture analysis, with `--peak-gbs 400`.
pub(crate) fn analysis() -> Analysis {
    Analysis {
        rows_read: 197,
        rows_skipped: 7,
        skipped: skipped(),
        peak_gbs: Some(400.0),
        curves: vec![all_gather(), all_reduce(), broadcast(), reduce_scatter()],
        notes: vec![],
    }
}
