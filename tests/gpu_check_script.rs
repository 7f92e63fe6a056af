//! scripts/gpu-check.sh, the prepared GPU-machine check, runs start to finish against the fake
//! NCCL (small sizes): every step passes and leaves its files, so the script is ready for a
//! machine with GPUs.

use crate::support::bin::{root, EXE};
use crate::support::fake_nccl::fake_env;
use std::process::Command;

#[test]
fn the_gpu_check_script_runs_every_step_and_writes_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("check");
    let mut cmd = Command::new(root().join("scripts/gpu-check.sh"));
    fake_env(&mut cmd);
    let status = cmd
        .arg(&out)
        .arg(EXE)
        .env("GPU_CHECK_MAX", "64K")
        .env("GPU_CHECK_CHECK_MAX", "8K")
        .env("GPU_CHECK_PAIR_MAX", "64K")
        .env("FAKE_CUDA_DEVICES", "2")
        .output()
        .expect("run scripts/gpu-check.sh");
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap_or_default();
    assert!(
        status.status.success(),
        "{summary}\n{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(summary.contains("# failed steps: 0"), "{summary}");
    for f in [
        "env.json",
        "correctness/hypercube.csv",
        "perf/all_reduce_graph.json",
        "perf/all_reduce_device_timer.csv",
        "two_ranks_one_gpu/all_reduce.csv",
        "multi_gpu/alltoall.csv",
    ] {
        assert!(out.join(f).is_file(), "{f} missing:\n{summary}");
    }
    // One line per step: env x2, ten collectives, three sweeps, six pair runs, two multi-GPU.
    assert_eq!(
        summary.lines().filter(|l| l.contains(" rc=0 ")).count(),
        23,
        "{summary}"
    );
}
