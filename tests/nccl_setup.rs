//! The NCCL backend's setup and teardown on fake-nccl, where a GPU run needs more than the
//! plain path: the verification kernels loaded only by a run that checks (and outside `-M 1`'s
//! initialization figure), the `-e` clamp of ranks sharing a GPU, a default wait limit for
//! them, and communicators aborted rather than finalized on a context a kernel fault poisoned.

use crate::support::fake_nccl::run_fake as run;

/// The `# GPU memory usage` line's `Initialization` figure of `args`.
fn init_figure(args: &str) -> String {
    let r = run(args, &[]);
    assert_eq!(r.code, Some(0), "`{args}`:\n{}\n{}", r.out, r.err);
    let line = (r.out.lines())
        .find(|l| l.starts_with("# GPU memory usage"))
        .unwrap_or_else(|| panic!("`{args}`: no memory line:\n{}", r.out));
    line.split(" | ").next().expect(line).to_string()
}

#[test]
fn verification_kernels_load_only_for_a_check_and_outside_the_init_figure() {
    let common = "all_reduce --backend nccl -g 2 -b 1K -e 1K -n 1 -w 0 -M 1";
    // Nothing loaded for the host path: NCCL's own initialization.
    let nccl_only = init_figure(&format!("{common} -c 1 --verify host"));
    for args in [
        format!("{common} -c 0"),
        format!("{common} -c 1 --verify device"),
    ] {
        assert_eq!(init_figure(&args), nccl_only, "`{args}`");
    }
    let r = run(&format!("{common} -c 0"), &[]);
    assert!(
        r.out
            .contains("# verify: none (-c 0: the device kernels are not loaded)"),
        "{}",
        r.out
    );
}

#[test]
fn max_bytes_is_clamped_per_device_by_the_ranks_sharing_it() {
    // Two ranks on one 4.2 GiB device: each has 2.1 GiB of it, so -e is clamped as for one
    // rank on a 2.1 GiB device (nccl_fake's clamp test), not as for the whole 4.2 GiB.
    let args = "all_reduce --backend nccl -g 2 --devices 0,0 -b 1G -e 1G -n 1 -w 0";
    let r = run(args, &[("FAKE_CUDA_MEM_GIB", "4.2")]);
    assert_eq!(r.code, Some(0), "`{args}`:\n{}\n{}", r.out, r.err);
    assert!(
        r.out
            .contains("#\n# Reducing maxBytes to 35791394 due to memory limitation\n"),
        "{}",
        r.out
    );
}

#[test]
fn ranks_sharing_a_gpu_get_a_default_wait_limit_and_a_header_line() {
    // Op 8 (the second size's out-of-place verification launch) never completes; no -T, so
    // only the shared-GPU limit (2 s in this test build) ends the run.
    let args = "all_reduce --backend nccl -g 2 --devices 0,0 -b 1K -e 2K -f 2 -w 0 -n 1";
    let r = run(
        args,
        &[
            ("FAKE_NCCL_HANG_AT", "8"),
            ("NCCLBENCH_TEST_SHARED_GPU_WAIT_S", "2"),
        ],
    );
    assert_eq!(r.code, Some(4), "`{args}`:\n{}\n{}", r.out, r.err);
    assert!(
        r.out
            .contains("# ranks share a GPU: each wait times out after 2 s (-T sets another"),
        "{}",
        r.out
    );
    assert!(
        r.err.contains("Test timeout (2s)") && r.err.contains("communicators aborted"),
        "{}",
        r.err
    );
    // An explicit -T is the limit, and the line is not printed.
    let r = run(&format!("{args} -T 30"), &[]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert!(
        !r.out.contains("# ranks share a GPU: each wait"),
        "{}",
        r.out
    );
    // Ranks on their own GPUs have no default limit.
    let r = run("all_reduce --backend nccl -g 2 -b 1K -e 1K -w 0 -n 1", &[]);
    assert!(
        !r.out.contains("# ranks share a GPU: each wait"),
        "{}",
        r.out
    );
}

#[test]
fn a_sticky_cuda_error_aborts_the_communicators_instead_of_finalizing_them() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let args = "all_reduce --backend nccl -g 2 -b 1K -e 4K -f 2 -w 0 -n 2";
    let r = run(
        args,
        &[
            ("FAKE_CUDA_STICKY_ERROR", "3"),
            ("FAKE_NCCL_TRACE", trace.to_str().unwrap()),
        ],
    );
    assert_eq!(r.code, Some(2), "`{args}`:\n{}\n{}", r.out, r.err);
    assert!(r.err.contains("CUDA_ERROR_LAUNCH_FAILED"), "{}", r.err);
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
    let calls: Vec<String> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap_or("").to_string())
        .collect();
    let count = |name: &str| calls.iter().filter(|c| *c == name).count();
    assert_eq!(count("ncclCommAbort"), 2, "{calls:?}");
    assert_eq!(count("ncclCommFinalize"), 0, "{calls:?}");
}
