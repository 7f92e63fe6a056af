//! `-D`/`--device_implementation` and `-V`/`--device_cta_count`: nccl-tests' value forms and
//! defaults, `-D 0` runs, a device-API implementation is refused with one line.

use super::{run, usage};

#[test]
fn defaults_are_nccl_tests_and_d_zero_runs() {
    assert_eq!(run(&["ncclbench", "all_reduce"]).device_cta_count, 16);
    let c = run(&["ncclbench", "alltoall", "-D", "0", "-V", "64"]);
    assert_eq!(c.device_cta_count, 64);
    let c = run(&["ncclbench", "alltoall", "--device_implementation=0x0"]);
    assert_eq!(c.device_cta_count, 16);
    assert_eq!(
        run(&["ncclbench", "all_reduce", "--device_cta_count", "010"]).device_cta_count,
        8
    );
}

#[test]
fn a_device_api_implementation_is_refused_in_one_line() {
    for d in ["1", "4", "-1"] {
        let msg = usage(&["ncclbench", "all_reduce", "-D", d]);
        assert!(msg.contains("-D/--device_implementation"), "{msg}");
        assert!(msg.contains("no device-API kernels"), "{msg}");
        assert_eq!(msg.lines().count(), 1, "{msg}");
    }
}

#[test]
fn cta_counts_outside_nccl_tests_range_are_refused() {
    for v in ["0", "129", "-16", "abc"] {
        let msg = usage(&["ncclbench", "all_reduce", "-V", v]);
        assert!(msg.contains("device_cta_count"), "{v}: {msg}");
    }
    assert_eq!(
        run(&["ncclbench", "all_reduce", "-V", "128"]).device_cta_count,
        128
    );
    assert_eq!(
        run(&["ncclbench", "all_reduce", "-V", "1"]).device_cta_count,
        1
    );
}
