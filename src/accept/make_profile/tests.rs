//! Tests of `accept --make-profile`: profiles made from generated runs, parsed back.

use super::text::round_sig;
use super::*;
use crate::accept::profile::{parse, Baseline, BusbwCheck, LatencyCheck, Profile};
use std::path::Path;

const HEAD: &str =
    "cycle,collective,dtype,op,root,nranks,placement,bytes,count,time_us,algbw_gbs,busbw_gbs,wrong\n";

/// One CSV record; the tuple is (collective, dtype, op, root).
fn rec(
    cycle: u32,
    (coll, dtype, op, root): (&str, &str, &str, i64),
    placement: &str,
    bytes: u64,
    time: f64,
    busbw: f64,
) -> String {
    format!("{cycle},{coll},{dtype},{op},{root},8,{placement},{bytes},1,{time},{busbw},{busbw},0\n")
}

/// The message of a usage error (anything else fails the test).
fn usage(result: Result<String, Error>) -> String {
    match result {
        Err(Error::Usage(msg)) => msg,
        other => panic!("expected a usage error, got {other:?}"),
    }
}

/// Parses made text back; it must be a valid profile.
fn reparse(text: &str) -> Profile {
    parse(text, "made", None).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// all_reduce float/sum rows over 7 sizes x 3 samples (cycles 0 and 1 in one file, a third
/// sample in another), all_gather int32 rows, and rows that must be left out: in-place,
/// another (more common) dtype, op max, a 0-byte row, and a broadcast at root 1.
fn write_run(dir: &Path) -> Vec<PathBuf> {
    type Size = (u64, [f64; 3], [f64; 3]);
    let all_reduce: [Size; 7] = [
        (8, [10.0, 12.0, 11.0], [0.001; 3]),
        (64, [12.0, 13.0, 11.0], [0.01; 3]),
        (512, [15.0, 14.0, 16.0], [0.06; 3]),
        (1 << 20, [50.0; 3], [40.0; 3]),
        (16 << 20, [90.0; 3], [300.0, 310.0, 305.0]),
        (256 << 20, [1200.0; 3], [400.0, 390.0, 410.0]),
        (1 << 30, [4500.0; 3], [420.0, 415.0, 425.0]),
    ];
    let (mut a, mut b) = (HEAD.to_string(), HEAD.to_string());
    for (bytes, time, busbw) in all_reduce {
        for cycle in 0..2 {
            let (t, bw) = (time[cycle], busbw[cycle]);
            let c = cycle as u32;
            a += &rec(
                c,
                ("all_reduce", "float", "sum", -1),
                "out_of_place",
                bytes,
                t,
                bw,
            );
            a += &rec(
                c,
                ("all_reduce", "float", "sum", -1),
                "in_place",
                bytes,
                1e6,
                1.0,
            );
            // Twice: int32 is the most common dtype, yet float is preferred.
            for _ in 0..2 {
                a += &rec(
                    c,
                    ("all_reduce", "int32", "sum", -1),
                    "out_of_place",
                    bytes,
                    1e6,
                    1.0,
                );
            }
            a += &rec(
                c,
                ("all_reduce", "float", "max", -1),
                "out_of_place",
                bytes,
                1e6,
                1.0,
            );
        }
        b += &rec(
            0,
            ("all_reduce", "float", "sum", -1),
            "out_of_place",
            bytes,
            time[2],
            busbw[2],
        );
    }
    for (bytes, time, busbw) in [(1024, 20.0, 1.0), (4096, 22.0, 3.0)] {
        b += &rec(
            0,
            ("all_gather", "int32", "none", -1),
            "out_of_place",
            bytes,
            time,
            busbw,
        );
    }
    b += &rec(
        0,
        ("all_gather", "half", "none", -1),
        "out_of_place",
        4096,
        1.0,
        100.0,
    );
    b += &rec(
        0,
        ("all_reduce", "float", "sum", -1),
        "out_of_place",
        0,
        1.0,
        0.0,
    );
    b += &rec(
        0,
        ("broadcast", "float", "none", 1),
        "out_of_place",
        4096,
        1.0,
        100.0,
    );
    let paths = vec![dir.join("a.csv"), dir.join("b.csv")];
    std::fs::write(&paths[0], a).unwrap();
    std::fs::write(&paths[1], b).unwrap();
    paths
}

/// Thresholds from synthetic CSV: per-size medians over cycles and files, plateau and
/// latency over 3 sizes (2 when the collective has 2), margins applied and rounded to 3
/// significant digits, left-out rows ignored; the text parses back into those numbers.
#[test]
fn csv_run_gives_expected_thresholds_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let paths = write_run(dir.path());
    let text = make_profile(&paths, "lab-a", 7.0).unwrap();
    let p = reparse(&text);
    assert_eq!(p.name, "lab-a");
    assert!(!p.typical);
    assert_eq!(p.ranks, Some(8));
    assert!(p.description.starts_with("made from "), "{}", p.description);
    assert!(p.description.contains("a.csv"));
    assert!(text.starts_with("# Made by `ncclbench accept --make-profile`"));
    assert!(text.contains("less 7%"));
    assert_eq!(
        p.suite.collectives,
        [Collective::AllReduce, Collective::AllGather]
    );
    assert_eq!(
        (p.suite.perf_min_bytes, p.suite.perf_max_bytes),
        (8, 1 << 30)
    );
    // Plateau medians 305, 400, 420 -> 400 x 0.93 = 372; all_gather 1, 3 -> 2 x 0.93.
    assert_eq!(
        p.busbw,
        [
            BusbwCheck {
                collective: Collective::AllReduce,
                min_bytes: 16 << 20,
                max_bytes: None,
                min_gbs: 372.0,
                typical_gbs: None,
            },
            BusbwCheck {
                collective: Collective::AllGather,
                min_bytes: 1024,
                max_bytes: None,
                min_gbs: 1.86,
                typical_gbs: None,
            }
        ]
    );
    // Small-size medians 11, 12, 15 -> 12 x 1.07 = 12.84 -> 12.9; all_gather 21 x 1.07.
    assert_eq!(
        p.latency,
        [
            LatencyCheck {
                collective: Collective::AllReduce,
                min_bytes: 0,
                max_bytes: 512,
                max_us: 12.9,
                typical_us: None,
            },
            LatencyCheck {
                collective: Collective::AllGather,
                min_bytes: 0,
                max_bytes: 4096,
                max_us: 22.5,
                typical_us: None,
            }
        ]
    );
    assert_eq!(
        p.baseline,
        Some(Baseline {
            paths: paths.clone(),
            threshold_pct: 5.0
        })
    );
    // A margin of 0 keeps the medians themselves.
    let p = reparse(&make_profile(&paths, "x", 0.0).unwrap());
    assert_eq!((p.busbw[0].min_gbs, p.latency[0].max_us), (400.0, 12.0));
}

/// nccl-tests text (3 cycles of reduce_scatter in half, 3 sizes): dtype other than float
/// is taken when there is no float; the directory form of the input works too.
#[test]
fn nccl_tests_text_run() {
    let dir = tempfile::tempdir().unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/analysis/nccltests_2.19.6_cycles.txt");
    std::fs::copy(&sample, dir.path().join("run.txt")).unwrap();
    let text = make_profile(&[dir.path().to_path_buf()], "rs", 10.0).unwrap();
    let p = reparse(&text);
    assert_eq!(p.suite.collectives, [Collective::ReduceScatter]);
    assert_eq!(p.ranks, Some(8));
    assert_eq!(
        (p.suite.perf_min_bytes, p.suite.perf_max_bytes),
        (1024, 16384)
    );
    // busbw medians 0.04, 0.17, 0.59 -> 0.17 x 0.9 = 0.153.
    assert_eq!((p.busbw[0].min_bytes, p.busbw[0].min_gbs), (1024, 0.153));
    // time medians 20.75, 21.5, 24.25 -> 21.5 x 1.1 = 23.65 -> 23.7.
    assert_eq!((p.latency[0].max_bytes, p.latency[0].max_us), (16384, 23.7));
    assert!(text.contains("dtype half"), "{text}");
}

/// Bad margins, names and inputs are usage errors.
#[test]
fn bad_input_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let paths = write_run(dir.path());
    for margin in [-1.0, 100.0, f64::NAN] {
        let msg = usage(make_profile(&paths, "x", margin));
        assert!(
            msg.starts_with("profile margin must be at least 0 and below 100"),
            "{msg}"
        );
    }
    assert_eq!(
        usage(make_profile(&paths, " ", 5.0)),
        "profile name is empty"
    );
    assert_eq!(
        usage(make_profile(&[], "x", 5.0)),
        "no result files to make a profile from"
    );
    let in_place = dir.path().join("in_place.csv");
    let only = rec(
        0,
        ("all_reduce", "float", "sum", -1),
        "in_place",
        8,
        1.0,
        1.0,
    );
    std::fs::write(&in_place, format!("{HEAD}{only}")).unwrap();
    let msg = usage(make_profile(std::slice::from_ref(&in_place), "x", 5.0));
    assert_eq!(
        msg,
        format!(
            "{}: no out-of-place rows above 0 bytes with op sum (or none) at root 0 or -1 to make a profile from",
            in_place.display()
        )
    );
    let unnamed = dir.path().join("unnamed.txt");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/analysis/nccltests_2.19.6_cycles.txt");
    let text = std::fs::read_to_string(sample).unwrap();
    let text = text.replace("# Collective test starting: reduce_scatter_perf\n", "");
    std::fs::write(&unnamed, text).unwrap();
    let msg = usage(make_profile(&[unnamed], "x", 5.0));
    assert!(msg.contains("do not say which collective"), "{msg}");
}

/// Rounding to 3 significant digits, down for floors and up for ceilings, at every scale.
#[test]
fn three_significant_digits() {
    let cases = [
        (412.37, false, 412.0),
        (412.37, true, 413.0),
        (0.0012345, true, 0.00124),
        (0.0012345, false, 0.00123),
        (123456.0, false, 123000.0),
        (999.95, true, 1000.0),
        (999.95, false, 999.0),
        (1000.0, false, 1000.0),
        (0.17 * 0.9, false, 0.153),
        (12.0 * 1.1, true, 13.2),
        (5.0, true, 5.0),
    ];
    for (x, up, want) in cases {
        assert_eq!(round_sig(x, up), want, "round_sig({x}, {up})");
    }
    assert_eq!(size_text(8 << 30), "\"8G\"");
    assert_eq!(size_text(3 << 20), "\"3M\"");
    assert_eq!(size_text(1536), "1536");
    assert_eq!(size_text(0), "0");
}
