//! The nccl-tests build step of scripts/gpu-check.sh: recorded as failed when there is no nvcc
//! (and the check goes on with ncclbench alone), and, with the nvcc stand-in, nccl-tests' own
//! Makefile builds only the binaries needed, for this GPU's architecture, against the libnccl
//! ncclbench loads.

use super::harness::{check, tiny_tarball, Step};
use crate::support::bin::root;
use std::fs;
use std::path::Path;
use std::process::Command;

#[test]
fn without_nvcc_the_build_is_recorded_as_failed_and_ncclbench_still_runs() {
    let nvcc_here = Command::new("sh")
        .args(["-c", "command -v nvcc"])
        .output()
        .unwrap();
    let c = check(|dir, cmd| {
        // NCCL 2.29 refuses two ranks on one GPU: that step is a recorded skip, not a failure.
        cmd.env("CUDA_HOME", dir.join("no-cuda"))
            .env("FAKE_NCCL_VERSION", "22903")
            .env("GPU_CHECK_COLLS", "all_reduce");
        vec![tiny_tarball(dir)]
    });
    assert_eq!(c.code, Some(1), "{}", c.summary);
    let build = c.named("build/nccl-tests");
    assert_eq!(build.len(), 1, "{}", c.summary);
    assert_eq!(build[0].status, "FAIL");
    if nvcc_here.stdout.is_empty() && !Path::new("/usr/local/cuda/bin/nvcc").exists() {
        assert!(build[0].note.starts_with("no nvcc"), "{}", build[0].note);
    }
    let nt: Vec<&Step> = c
        .steps
        .iter()
        .filter(|s| s.tool == "nccl-tests" && s.config != "two_ranks")
        .collect();
    assert_eq!(nt.len(), 9);
    assert!(nt
        .iter()
        .all(|s| s.status == "NOTRUN" && s.note.contains("no all_reduce_perf")));
    let nb: Vec<&Step> = c
        .steps
        .iter()
        .filter(|s| s.tool == "ncclbench" && !["env", "two_ranks"].contains(&s.config.as_str()))
        .collect();
    // c0 twice, c1, vhost (ncclbench alone), graph, timer, z3, reg1, reg2, correctness.
    assert_eq!(
        nb.len(),
        10,
        "ncclbench runs every configuration\n{}",
        c.summary
    );
    assert!(nb.iter().all(|s| s.status == "PASS"), "{}", c.summary);
    let two = c.named("two_ranks/all");
    assert!(
        two[0].status == "SKIP" && two[0].note.contains("2.29.3 refuses"),
        "{}",
        two[0].note
    );
    assert!(c.summary.contains("NOTRUN"), "{}", c.summary);
}

#[test]
fn the_build_step_compiles_only_the_needed_binaries_against_the_loaded_nccl() {
    // nccl-tests' Makefile compiles two C++ files with the host g++ (not the stand-in).
    let tarball = root().join("../shared/third_party/nccl-tests-2.19.6.tar.gz");
    let gxx = Command::new("sh")
        .args(["-c", "command -v g++"])
        .output()
        .unwrap();
    if !tarball.is_file() || gxx.stdout.is_empty() {
        eprintln!("skipped: needs {} and g++", tarball.display());
        return;
    }
    let c = check(|dir, cmd| {
        // A wheel-like layout: lib/libnccl.so.2 with include/nccl.h beside it.
        let nccl = dir.join("nccl");
        fs::create_dir_all(nccl.join("lib")).unwrap();
        fs::create_dir_all(nccl.join("include")).unwrap();
        fs::write(
            nccl.join("include/nccl.h"),
            "#define NCCL_VERSION_CODE 23203\n",
        )
        .unwrap();
        let fake = crate::support::fake_nccl::fake_lib_dir().join("libnccl.so.2");
        std::os::unix::fs::symlink(fake, nccl.join("lib/libnccl.so.2")).unwrap();
        let bin = dir.join("cuda/bin");
        fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(
            root().join("tests/support/nvcc_standin.py"),
            bin.join("nvcc"),
        )
        .unwrap();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.env("PATH", path)
            .env("NCCLBENCH_NCCL_LIB", nccl.join("lib/libnccl.so.2"))
            .env("NVCC_STANDIN_LOG", dir.join("nvcc.log"))
            .env("GPU_CHECK_COLLS", "sendrecv")
            .env("GPU_CHECK_ROUNDS", "1");
        vec![tarball.clone()]
    });
    assert_eq!(
        c.code,
        Some(0),
        "{}\n{}",
        c.summary,
        c.raw_text("build/nccl-tests.err")
    );
    assert_eq!(c.named("build/nccl-tests")[0].status, "PASS");
    let log = fs::read_to_string(c.dir.path().join("nvcc.log")).unwrap();
    let links: Vec<&str> = log.lines().filter(|l| l.contains("_perf ")).collect();
    assert_eq!(links.len(), 1, "only sendrecv_perf is linked:\n{log}");
    assert!(links[0].contains("sendrecv_perf"), "{log}");
    // Compiled for the GPU's architecture only (FAKE_CUDA_CC: 9.0), not the Makefile's list.
    let compiles: Vec<&str> = log.lines().filter(|l| l.contains(" -c ")).collect();
    assert!(!compiles.is_empty(), "{log}");
    for l in compiles {
        assert_eq!(l.matches("-gencode").count(), 1, "{l}");
        assert!(l.contains("-gencode=arch=compute_90,code=sm_90"), "{l}");
    }
    // The built binaries ran every configuration on the library ncclbench loaded.
    let nt: Vec<&Step> = c
        .steps
        .iter()
        .filter(|s| s.tool == "nccl-tests" && s.status != "SKIP")
        .collect();
    assert_eq!(nt.len(), 8);
    assert!(nt.iter().all(|s| s.status == "PASS"), "{}", c.summary);
}
