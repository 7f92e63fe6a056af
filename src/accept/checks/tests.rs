//! The checks judge exactly what they say: medians over the sizes in range, out-of-place
//! rows only, failure when nothing was measured, wrong elements named.

use super::*;
use crate::analysis::input::SourceRef;
use crate::core::collective::Collective;

fn row(coll: &str, bytes: u64, time_us: f64, busbw: f64, p: Placement) -> InputRow {
    InputRow {
        source: SourceRef {
            file: "x.csv".into(),
            line: 1,
        },
        collective: Some(coll.into()),
        dtype: "float".into(),
        op: "sum".into(),
        root: -1,
        nranks: Some(8),
        placement: p,
        cycle: 0,
        run: 0,
        bytes,
        count: bytes / 4,
        time_us,
        algbw_gbs: busbw,
        busbw_gbs: busbw,
        wrong: None,
        tuning: None,
    }
}

/// An all_reduce curve: 8 B .. 8 GiB, busbw rising to `plateau`, in-place rows 10x better
/// (so a check that read them would pass wrongly).
fn curve(plateau: f64, floor_us: f64) -> Vec<InputRow> {
    let mut rows = Vec::new();
    let mut b = 8u64;
    while b <= 8 << 30 {
        let t = floor_us + b as f64 / (plateau * 1e3);
        let bw = b as f64 / (t * 1e3);
        rows.push(row("all_reduce", b, t, bw, Placement::OutOfPlace));
        rows.push(row(
            "all_reduce",
            b,
            t / 10.0,
            bw * 10.0,
            Placement::InPlace,
        ));
        b *= 2;
    }
    rows
}

fn bw_check(min_gbs: f64) -> BusbwCheck {
    BusbwCheck {
        collective: Collective::AllReduce,
        min_bytes: 1 << 30,
        max_bytes: Some(8 << 30),
        min_gbs,
        typical_gbs: Some((350.0, 480.0)),
    }
}

const DONE: RunEnd = RunEnd::Completed { seconds: 1.0 };

#[test]
fn busbw_passes_and_fails_on_the_median_of_the_plateau_range() {
    let rows = curve(400.0, 15.0);
    let ok = busbw(&bw_check(350.0), &rows, &DONE);
    assert_eq!(ok.status, Status::Pass, "{ok:?}");
    let m = ok.measured_value.unwrap();
    assert!((390.0..400.0).contains(&m), "median plateau {m}");
    assert_eq!(ok.name, "busbw 1 GiB..8 GiB");
    assert_eq!(ok.expected, ">= 350 GB/s (typical 350-480)");
    let bad = busbw(&bw_check(350.0), &curve(300.0, 15.0), &DONE);
    assert_eq!(bad.status, Status::Fail);
    assert_eq!(bad.class, FailureClass::Performance);
    assert!(
        bad.detail.as_deref().unwrap().contains("at 1 GiB"),
        "{bad:?}"
    );
}

#[test]
fn latency_judges_the_small_sizes_out_of_place() {
    let chk = LatencyCheck {
        collective: Collective::AllReduce,
        min_bytes: 0,
        max_bytes: 8,
        max_us: 20.0,
        typical_us: None,
    };
    let ok = latency(&chk, &curve(400.0, 15.0), &DONE);
    assert_eq!((ok.status, ok.name.as_str()), (Status::Pass, "time <= 8 B"));
    assert!((ok.measured_value.unwrap() - 15.0).abs() < 0.01);
    // 25 us out of place fails although the in-place rows (2.5 us) would pass.
    let bad = latency(&chk, &curve(400.0, 25.0), &DONE);
    assert_eq!(bad.status, Status::Fail, "{bad:?}");
}

#[test]
fn a_range_with_no_measured_size_fails_and_says_what_was_swept() {
    let rows: Vec<InputRow> = curve(400.0, 15.0)
        .into_iter()
        .filter(|r| r.bytes <= 1 << 20)
        .collect();
    let c = busbw(&bw_check(1.0), &rows, &DONE);
    assert_eq!(c.status, Status::Fail);
    assert_eq!(c.measured, "no size in range");
    assert_eq!(c.detail.as_deref(), Some("the sweep measured 8 B..1 MiB"));
}

#[test]
fn a_stage_that_did_not_run_leaves_its_checks_not_run() {
    let c = busbw(&bw_check(1.0), &[], &RunEnd::NotRun(FailureClass::Timeout));
    assert_eq!((c.status, c.class), (Status::NotRun, FailureClass::Timeout));
    let c = completion(
        Stage::Performance,
        "all_reduce",
        &RunEnd::NotRun(FailureClass::Timeout),
        &[],
        300,
    );
    assert_eq!(c.status, Status::NotRun);
}

#[test]
fn wrong_elements_fail_correctness_and_name_the_case() {
    let mut rows = curve(400.0, 15.0);
    for r in &mut rows {
        r.wrong = Some(0.0);
    }
    assert_eq!(no_wrong("all_reduce", &DONE, &rows).status, Status::Pass);
    rows[3].wrong = Some(12.0);
    rows[3].dtype = "bfloat16".into();
    let c = no_wrong("all_reduce", &DONE, &rows);
    assert_eq!(
        (c.status, c.class),
        (Status::Fail, FailureClass::Correctness)
    );
    assert_eq!(c.measured_value, Some(12.0));
    assert!(
        c.detail
            .as_deref()
            .unwrap()
            .starts_with("bfloat16 sum 16 B in_place: 12 wrong"),
        "{c:?}"
    );
    // Nothing verified proves nothing.
    let unchecked = curve(400.0, 15.0);
    assert_eq!(
        no_wrong("all_reduce", &DONE, &unchecked).status,
        Status::Fail
    );
}

#[test]
fn completion_carries_the_class_of_the_error() {
    let c = completion(
        Stage::Correctness,
        "reduce",
        &RunEnd::Failed(FailureClass::Timeout, "Test timeout (5s)".into()),
        &[],
        5,
    );
    assert_eq!((c.status, c.class), (Status::Fail, FailureClass::Timeout));
    assert_eq!(c.name, "completes within -T 5 s");
    let e = Error::Timeout {
        seconds: 5,
        what: "x".into(),
    };
    assert_eq!(class_of(&e), FailureClass::Timeout);
    assert_eq!(class_of(&Error::Backend("x".into())), FailureClass::Backend);
    assert_eq!(class_of(&Error::Cuda("x".into())), FailureClass::Setup);
}
