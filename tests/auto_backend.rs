//! `--backend auto` on a node whose CUDA driver is installed but does not work, against
//! fake-nccl (`FAKE_CUDA_INIT_ERROR` makes its `cuInit` fail) and a `libcuda.so.1` that lacks
//! the driver's entry points. Only "no device" (CUDA_ERROR_NO_DEVICE, 100) chooses the host
//! backend; any other failure is exit 2 with one line naming the code and what it means, since
//! host numbers printed on a GPU node would pass for the GPUs'.

use std::os::unix::fs::symlink;
use std::path::PathBuf;

use crate::support::bin::{ncclbench, run, Run};
use crate::support::fake_nccl::{fake_lib_dir, run_fake};

const ARGS: &str = "all_reduce -b 8 -e 64 -g 1";

fn auto_with_init_error(code: &str) -> Run {
    run_fake(ARGS, &[("FAKE_CUDA_INIT_ERROR", code)])
}

/// Asserts exit 2 with one line on stderr containing every text of `wanted`, and no rows.
fn refused(r: &Run, wanted: &[&str]) {
    assert_eq!(r.code, Some(2), "stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert_eq!(r.err.lines().count(), 1, "one line:\n{}", r.err);
    for text in wanted {
        assert!(r.err.contains(text), "missing {text:?} in:\n{}", r.err);
    }
    assert!(!r.out.contains("chose host"), "{}", r.out);
    assert!(!r.err.contains("panicked"), "{}", r.err);
}

#[test]
fn no_device_chooses_host_with_its_note() {
    let r = auto_with_init_error("100");
    assert_eq!(r.code, Some(0), "{}", r.err);
    assert!(
        r.out.contains("# --backend auto chose host: ") && r.out.contains("CUDA_ERROR_NO_DEVICE"),
        "{}",
        r.out
    );
    assert!(!r.out.contains("# NCCL library"), "{}", r.out);
}

#[test]
fn a_driver_that_is_not_ready_is_an_error_naming_the_fabric_manager() {
    let r = auto_with_init_error("802");
    refused(
        &r,
        &[
            "cuInit",
            "802",
            "CUDA_ERROR_SYSTEM_NOT_READY",
            "fabric manager",
        ],
    );
}

#[test]
fn a_mismatched_driver_is_an_error_naming_the_code() {
    let r = auto_with_init_error("803");
    refused(
        &r,
        &[
            "cuInit",
            "803",
            "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
            "kernel module",
        ],
    );
    let r = auto_with_init_error("804");
    refused(
        &r,
        &[
            "cuInit",
            "804",
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
            "forward compat",
        ],
    );
}

#[test]
fn an_unknown_driver_failure_is_an_error_naming_the_code() {
    refused(
        &auto_with_init_error("999"),
        &["cuInit", "999", "CUDA_ERROR_UNKNOWN"],
    );
    // A code no table knows still says which it was.
    refused(&auto_with_init_error("4242"), &["cuInit", "4242"]);
}

/// A `libcuda.so.1` without the driver's entry points (the C library stands in for a driver
/// too old to have them): exit 2 naming the missing entry point, never "chose host".
#[test]
fn a_driver_without_an_entry_point_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    symlink(c_library(), dir.path().join("libcuda.so.1")).unwrap();
    symlink(c_library(), dir.path().join("libcuda.so")).unwrap();
    let r = run(ncclbench()
        .args(ARGS.split_whitespace())
        .env("LD_LIBRARY_PATH", dir.path())
        .env("NCCLBENCH_NCCL_LIB", fake_lib_dir().join("libnccl.so.2")));
    refused(&r, &["lacks the entry point cuInit", "too old"]);
}

/// The file of the C library this test process runs with (from its memory map).
fn c_library() -> PathBuf {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            let name = p.rsplit('/').next().unwrap_or("");
            name.starts_with("libc.so") || name.starts_with("libc-")
        })
        .map(PathBuf::from)
        .expect("the C library in /proc/self/maps")
}
