//! `--timer device` needs stream memory operations (`cuStreamWaitValue32`). The v2 entry point
//! (drivers from CUDA 11.7) is always usable; the v1 one only where the device reports
//! CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS. Where neither works the run must say why in one
//! line and exit 2 before any result row; where one works it must run. fake-nccl impersonates
//! an older driver with FAKE_CUDA_DRIVER_VERSION and disables v1 with
//! FAKE_CUDA_NO_STREAM_MEM_OPS=1.

use crate::support::bin::{ncclbench, run, Run};
use crate::support::fake_nccl::fake_env;

const ARGS: &str = "all_reduce --backend nccl -g 2 -b 1K -e 4K -f 2 -n 2 -w 1 --timer device";

fn timer_run(envs: &[(&str, &str)]) -> Run {
    let mut cmd = ncclbench();
    fake_env(&mut cmd).args(ARGS.split_whitespace());
    cmd.envs(envs.iter().copied());
    run(&mut cmd)
}

fn rows(out: &str) -> usize {
    let row = |l: &&str| !l.starts_with('#') && !l.trim().is_empty();
    out.lines().filter(row).count()
}

#[test]
fn a_driver_without_usable_stream_waits_is_refused_in_one_line_before_any_row() {
    let r = timer_run(&[
        ("FAKE_CUDA_DRIVER_VERSION", "11040"),
        ("FAKE_CUDA_NO_STREAM_MEM_OPS", "1"),
    ]);
    assert_eq!(r.code, Some(2), "{}\n{}", r.out, r.err);
    assert_eq!(rows(&r.out), 0, "no result row:\n{}", r.out);
    let lines: Vec<&str> = r.err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line:\n{}", r.err);
    for word in [
        "--timer device",
        "CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS",
        "NVreg_EnableStreamMemOPs=1",
    ] {
        assert!(lines[0].contains(word), "{word} in: {}", lines[0]);
    }
}

#[test]
fn the_v1_wait_runs_where_the_device_allows_it_and_v2_needs_no_attribute() {
    for envs in [
        &[("FAKE_CUDA_DRIVER_VERSION", "11040")][..],
        &[("FAKE_CUDA_NO_STREAM_MEM_OPS", "1")][..],
    ] {
        let r = timer_run(envs);
        assert_eq!(r.code, Some(0), "{envs:?}:\n{}\n{}", r.out, r.err);
        assert_eq!(rows(&r.out), 3, "{envs:?}:\n{}", r.out);
    }
}
