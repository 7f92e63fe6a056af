//! The real libnccl.so.2 (from the nvidia-nccl-cu12 wheel that `.ci/run` installs; its path in
//! `NCCLBENCH_TEST_NCCL_LIB`) through the binary: `ncclbench env` loads it and reports its true
//! version, and a benchmark on a machine without a CUDA driver stops within seconds with one
//! line naming the missing driver. Skipped (with a note) where the variable is unset.

use crate::support::bin::ncclbench;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn real_lib() -> Option<PathBuf> {
    match std::env::var_os("NCCLBENCH_TEST_NCCL_LIB") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            eprintln!(
                "skipped: NCCLBENCH_TEST_NCCL_LIB is unset (scripts/fetch-nccl provides one)"
            );
            None
        }
    }
}

#[test]
fn env_reports_the_loaded_library_and_its_runtime_version() {
    let Some(lib) = real_lib() else { return };
    let out = ncclbench()
        .args(["env", "--json", "--nccl-lib"])
        .arg(&lib)
        .output()
        .expect("run ncclbench env");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("env --json is JSON");
    assert_eq!(v["schema"], "ncclbench-env/1");
    let nccl = &v["nccl"];
    assert_eq!(nccl["error"], serde_json::Value::Null);
    let canonical = std::fs::canonicalize(&lib).unwrap();
    assert_eq!(nccl["path"], canonical.display().to_string());
    let code = nccl["version_code"].as_i64().expect("a version code");
    assert!(code >= 21800, "wheel version {code}");
    let (major, minor, patch) = (code / 10000, code / 100 % 100, code % 100);
    assert_eq!(nccl["version"], format!("{major}.{minor}.{patch}"));
}

#[test]
fn a_benchmark_without_a_cuda_driver_fails_fast_with_one_line() {
    let Some(lib) = real_lib() else { return };
    if ncclbench::bench::cuda::Driver::load().is_ok() {
        eprintln!("skipped: this machine has a CUDA driver");
        return;
    }
    let start = Instant::now();
    let out = ncclbench()
        .args([
            "all_reduce",
            "--backend",
            "nccl",
            "-b",
            "8",
            "-e",
            "1K",
            "--nccl-lib",
        ])
        .arg(&lib)
        .output()
        .expect("run ncclbench");
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "CUDA failures exit 2: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no CUDA driver"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn auto_falls_back_to_host_and_says_why_without_a_driver() {
    let Some(lib) = real_lib() else { return };
    if ncclbench::bench::cuda::Driver::load().is_ok() {
        eprintln!("skipped: this machine has a CUDA driver");
        return;
    }
    let out = ncclbench()
        .args(["all_reduce", "-b", "8", "-e", "64", "-f", "2", "--nccl-lib"])
        .arg(&lib)
        .output()
        .expect("run ncclbench");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("# --backend auto chose host: no CUDA driver"),
        "{text}"
    );
}
