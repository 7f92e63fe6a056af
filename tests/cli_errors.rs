//! Bad input through the real binary: one clear line on stderr, exit status 2, nothing on
//! stdout, never a panic or a hang.

use crate::support::bin;
use std::process::Output;

fn ncclbench(args: &str) -> Output {
    bin::ncclbench()
        .args(args.split_whitespace())
        .env("NCCLBENCH_TEST", "1")
        .output()
        .expect("run ncclbench")
}

/// Asserts a usage error: exit 2, exactly one stderr line containing `needle`, empty stdout.
fn usage_error(args: &str, needle: &str) {
    let out = ncclbench(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "`{args}`: status {:?}, stderr: {err}",
        out.status
    );
    assert_eq!(
        err.lines().count(),
        1,
        "`{args}`: expected one stderr line, got: {err}"
    );
    assert!(
        err.contains(needle),
        "`{args}`: stderr {err:?} does not mention {needle:?}"
    );
    assert!(!err.contains("panicked"), "`{args}` panicked");
    assert!(
        out.stdout.is_empty(),
        "`{args}` printed to stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn min_bytes_above_max_bytes_is_refused() {
    usage_error("all_reduce -b 64 -e 8", "minbytes");
}

#[test]
fn zero_min_bytes_with_a_factor_is_refused_instead_of_looping_forever() {
    usage_error("all_reduce -b 0 -e 64 -f 2", "-b");
}

#[test]
fn unknown_collective_is_refused() {
    usage_error("all_reducer -b 8", "all_reducer");
}

#[test]
fn unknown_datatype_and_op_are_refused() {
    usage_error("all_reduce -d fp32", "fp32");
    usage_error("all_reduce -o average", "average");
}

#[test]
fn malformed_sizes_are_refused() {
    usage_error("all_reduce -b 1X", "1X");
    usage_error("all_reduce -e abc", "abc");
    usage_error("all_reduce -b -8", "-8");
}

#[test]
fn step_factor_below_one_or_fractional_is_refused() {
    usage_error("all_reduce -f 0", "-f");
    usage_error("all_reduce -f 1.5", "1.5");
}

#[test]
fn zero_iterations_are_refused() {
    usage_error("all_reduce -n 0", "-n");
}

#[test]
fn root_out_of_range_is_refused() {
    usage_error("broadcast -g 2 -b 8 -e 8 -r 2", "root 2");
}

#[test]
fn hypercube_with_three_ranks_is_refused_with_the_reason() {
    usage_error("hypercube -g 3 -b 1K -e 1K", "power-of-two");
}

#[test]
fn a_size_that_cannot_fit_in_memory_is_refused_before_allocating() {
    usage_error("all_reduce -g 2 -b 8 -e 100000G", "needs");
}

#[test]
fn unknown_options_and_stray_arguments_are_refused() {
    usage_error("all_reduce --bogus 1", "bogus");
    usage_error("all_reduce -b 8 extra", "extra");
}

#[test]
fn per_iter_skip_without_per_iter_timing_is_refused() {
    usage_error("all_reduce -K 2", "-K");
}

#[test]
fn help_prints_usage_and_exits_zero() {
    let out = ncclbench("all_reduce --help");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("--minbytes"), "{text}");
}

#[test]
fn a_devices_list_must_name_one_device_per_local_rank() {
    usage_error("all_reduce -g 2 --devices 0", "--devices lists 1 device");
    usage_error("all_reduce --devices 0,x", "'x' is not a CUDA device");
    usage_error("all_reduce --devices=-1", "not a CUDA device");
}

#[test]
fn nccl_tests_device_must_be_a_number() {
    let out = bin::ncclbench()
        .args(["all_reduce", "--backend", "nccl", "-b", "8", "-e", "8"])
        .env("NCCL_TESTS_DEVICE", "first")
        .env("NCCLBENCH_NCCL_LIB", "/nonexistent/libnccl.so.2")
        .output()
        .expect("run ncclbench");
    let err = String::from_utf8_lossy(&out.stderr);
    // The library is looked at first on this path, then the device choice; either way one
    // line and a non-zero status, never a panic.
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("panicked"));
}
