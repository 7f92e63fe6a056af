//! The runner's reaction to broken backends: wrong data reaches the rows, the out-of-bounds
//! counter and exit status 7; a hung wait under `-T` stops the run with a timeout error (exit 4)
//! naming the case, after the sinks were finished with every completed row.

use crate::support::fault::{Fault, Faulty};
use crate::support::run::{config, run_captured, run_with};
use ncclbench::bench::backend::host::HostBackend;
use ncclbench::core::error::{exit, Error};
use std::time::{Duration, Instant};

#[test]
fn wrong_data_is_reported_per_placement_and_fails_the_run_with_status_7() {
    let cfg = config("all_gather -g 2 -b 1K -e 4K -f 2 -n 2");
    let mut b = Faulty::new(
        HostBackend::new(2).unwrap(),
        Fault::FlipBit {
            rank: 1,
            elem: 0,
            bit: 30,
        },
    );
    let out = run_with(&cfg, &mut b).unwrap();
    assert_eq!(out.rows.len(), 3);
    for row in &out.rows {
        assert_eq!(
            (row.out_of_place.wrong, row.in_place.wrong),
            (Some(1), Some(1)),
            "{:?}",
            row.key
        );
    }
    assert_eq!(
        out.summary.out_of_bounds, 6,
        "3 sizes x 2 placements failed"
    );
    assert_eq!(out.exit_code(), exit::RESULTS);
}

#[test]
fn without_checking_wrong_data_goes_unreported_and_the_run_passes() {
    let cfg = config("all_gather -g 2 -b 1K -e 4K -f 2 -n 2 -c 0");
    let mut b = Faulty::new(
        HostBackend::new(2).unwrap(),
        Fault::FlipBit {
            rank: 1,
            elem: 0,
            bit: 30,
        },
    );
    let out = run_with(&cfg, &mut b).unwrap();
    assert!(out
        .rows
        .iter()
        .all(|r| r.out_of_place.wrong.is_none() && r.in_place.wrong.is_none()));
    assert_eq!(out.exit_code(), exit::OK);
}

#[test]
fn a_hung_wait_times_out_names_the_case_and_finishes_the_outputs() {
    let cfg = config("broadcast -g 2 -b 1K -e 1K -T 1");
    let mut b = Faulty::new(HostBackend::new(2).unwrap(), Fault::Hang);
    let start = Instant::now();
    let (out, sink) = run_captured(&cfg, &mut b);
    let err = out.unwrap_err();
    assert!(matches!(err, Error::Timeout { seconds: 1, .. }), "{err:?}");
    assert_eq!(err.exit_code(), exit::TIMEOUT);
    let msg = err.to_string();
    assert!(
        msg.contains("Test timeout (1s)") && msg.contains("broadcast float 1024 B"),
        "{msg}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "the timeout bounds the wait"
    );
    let summary = sink.finished.expect("sinks are finished on error");
    assert!(summary.error.unwrap().contains("Test timeout"));
}
