//! Numbers that would not be what they say: a latency floor of a bandwidth-bound sweep, a
//! half-performance size of a clamped alpha, a fitted plateau the data never reached, a time
//! that falls as the size grows, and curves of different setups pooled into one.

use crate::analysis::build::setup::Setups;
use crate::analysis::build::*;
use crate::analysis::input::SourceRef;
use crate::result::Placement;

/// An all_reduce row over 8 ranks from `file`.
fn row(file: &str, bytes: u64, time_us: f64) -> InputRow {
    let algbw = bytes as f64 / time_us * 1e-3;
    InputRow {
        source: SourceRef {
            file: file.into(),
            line: 1,
        },
        collective: Some("all_reduce".into()),
        dtype: "float".into(),
        op: "sum".into(),
        root: -1,
        nranks: Some(8),
        placement: Placement::OutOfPlace,
        cycle: 0,
        run: 0,
        bytes,
        count: bytes / 4,
        time_us,
        algbw_gbs: algbw,
        busbw_gbs: algbw * 1.75,
        wrong: Some(0.0),
        tuning: None,
    }
}

fn set(rows: Vec<InputRow>) -> ReadSet {
    ReadSet {
        rows,
        ..ReadSet::default()
    }
}

/// `T = alpha + S / (bw GB/s)` over `2^from .. 2^to` bytes.
fn sweep(file: &str, from: u32, to: u32, alpha: f64, bw: f64) -> Vec<InputRow> {
    (from..=to)
        .map(|e| row(file, 1 << e, alpha + (1u64 << e) as f64 / (bw * 1e3)))
        .collect()
}

#[test]
fn a_sweep_starting_at_8_mib_has_no_latency_floor() {
    let c = &analyze(&set(sweep("f", 23, 30, 20.0, 100.0)), None).curves[0];
    assert_eq!(c.latency_floor_us, None, "{:?}", c.regimes);
    assert!(
        c.notes.iter().any(|n| n
            .starts_with("latency_floor_us: none; the smallest size 8388608 B is bandwidth-bound")),
        "{:?}",
        c.notes
    );
    // The same curve from 8 B has one.
    let c = &analyze(&set(sweep("f", 3, 30, 20.0, 100.0)), None).curves[0];
    assert!(c.latency_floor_us.is_some_and(|f| (f - 20.0).abs() < 0.01));
    assert!(c.notes.is_empty(), "{:?}", c.notes);
}

#[test]
fn a_clamped_alpha_gives_no_half_performance_size() {
    // Times 5 us below a pure bandwidth line: the best alpha is negative, clamped to 0.
    let c = &analyze(&set(sweep("f", 20, 30, -5.0, 100.0)), None).curves[0];
    assert_eq!(c.regimes.last().map(|r| r.alpha_us), Some(0.0));
    assert_eq!(c.half_perf_bytes, None);
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("half_perf_bytes: none; the last regime's")
                && n.contains("fitted latency is 0 (clamped)")),
        "{:?}",
        c.notes
    );
}

#[test]
fn a_plateau_the_sweep_never_reached_is_flagged_as_an_extrapolation() {
    // 100 us latency at 100 GB/s: the half-performance size is 10 MB, the sweep ends at 16 MiB,
    // where busbw is 62% of the fitted asymptote.
    let c = &analyze(&set(sweep("f", 10, 24, 100.0, 100.0)), None).curves[0];
    assert!(c.plateau_fit_extrapolates);
    assert!(c.plateau_busbw_fit_gbs > 1.5 * c.plateau_busbw_gbs);
    let a = c
        .anomalies
        .iter()
        .find(|a| a.kind == "fit_extrapolates")
        .expect("flagged");
    assert!(
        a.detail.contains("quote the measured plateau"),
        "{}",
        a.detail
    );
    // A sweep far past the half-performance size reached its plateau.
    let c = &analyze(&set(sweep("f", 10, 34, 100.0, 100.0)), None).curves[0];
    assert!(!c.plateau_fit_extrapolates, "{:?}", c.anomalies);
}

#[test]
fn time_falling_as_the_size_doubles_is_an_anomaly_naming_both_sizes() {
    let mut rows = sweep("f", 10, 26, 10.0, 100.0);
    let slow = rows.iter_mut().find(|r| r.bytes == 1 << 20).expect("1 MiB");
    slow.time_us = 1481.0;
    let c = &analyze(&set(rows), None).curves[0];
    let drops: Vec<&crate::analysis::curve::Anomaly> = c
        .anomalies
        .iter()
        .filter(|a| a.kind == "time_drop")
        .collect();
    assert_eq!(drops.len(), 1, "{:?}", c.anomalies);
    assert_eq!(drops[0].bytes, 1 << 20);
    assert!(
        drops[0].detail.starts_with(
            "time falls from 1481.00 us at 1048576 B to 30.97 us at 2097152 B (-97.9%"
        ),
        "{}",
        drops[0].detail
    );
    // A clean sweep has none.
    let c = &analyze(&set(sweep("f", 10, 26, 10.0, 100.0)), None).curves[0];
    assert!(c.anomalies.iter().all(|a| a.kind != "time_drop"));
}

#[test]
fn files_of_different_setups_are_kept_apart_unless_pooled() {
    let mut rows = sweep("h100.txt", 10, 20, 10.0, 100.0);
    rows.extend(sweep("a100.txt", 10, 20, 20.0, 50.0));
    rows.extend(sweep("bare.csv", 10, 20, 15.0, 80.0));
    let setups: Setups = [
        (
            "h100.txt",
            "GPU NVIDIA H100 80GB HBM3; 2 hosts, 16 processes; NCCL 2.22.3",
        ),
        (
            "a100.txt",
            "GPU NVIDIA A100-SXM4-80GB; 1 host, 1 process; NCCL 2.18.3",
        ),
        ("bare.csv", ""),
    ]
    .into_iter()
    .map(|(f, s)| (f.to_string(), s.to_string()))
    .collect();
    let a = analyze_setups(&set(rows.clone()), None, &setups, false);
    let curves: Vec<(Option<&str>, usize)> = a
        .curves
        .iter()
        .map(|c| (c.setup.as_deref(), c.rows))
        .collect();
    assert_eq!(
        curves,
        [
            (
                Some("GPU NVIDIA A100-SXM4-80GB; 1 host, 1 process; NCCL 2.18.3"),
                11
            ),
            (
                Some("GPU NVIDIA H100 80GB HBM3; 2 hosts, 16 processes; NCCL 2.22.3"),
                11
            ),
            (Some(setup::UNRECORDED), 11),
        ]
    );
    assert_eq!(a.notes.len(), 1, "{:?}", a.notes);
    assert!(a.notes[0].contains("kept apart, one curve per setup (--pool-setups pools them)"));
    let pooled = analyze_setups(&set(rows), None, &setups, true);
    assert_eq!(pooled.curves.len(), 1);
    assert_eq!(
        (pooled.curves[0].rows, pooled.curves[0].setup.clone()),
        (33, None)
    );
    assert!(
        pooled.notes[0].contains("pooled into one curve (--pool-setups)"),
        "{:?}",
        pooled.notes
    );
    // One recorded setup and a file that records none: nothing to tell apart.
    let mut rows = sweep("h100.txt", 10, 20, 10.0, 100.0);
    rows.extend(sweep("bare.csv", 10, 20, 15.0, 80.0));
    let a = analyze_setups(&set(rows), None, &setups, false);
    assert_eq!((a.curves.len(), a.notes.len()), (1, 0));
}
