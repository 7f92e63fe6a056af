//! One plan per job under real `mpirun` (feature `mpi`) on fake-nccl, whose processes see
//! different machines: each process's fake reports its own device memory and compute
//! capability (`FAKE_CUDA_MEM_GIB`, `FAKE_CUDA_CC`), as an 80 GB A100 node next to a 141 GB
//! H100 node would. The `-e` clamp and the fp8 gate must be the job's (smallest memory, fp8
//! only where every process has it), and processes whose plans still differ must stop with one
//! clear error before any collective instead of hanging.
//!
//! The processes form one two-rank communicator (fake-nccl's communicators span processes
//! through the rendezvous its unique id names), so two plans that differ in length would
//! desynchronise the job's collectives exactly as they would on GPUs.
#![cfg(feature = "mpi")]

use crate::support::fake_nccl::fake_lib_dir;
use crate::support::mpi::have_mpirun;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const GIB: u64 = 1 << 30;

/// Per world rank: the fake's environment and extra arguments.
struct Node {
    mem_gib: &'static str,
    cc: &'static str,
    extra: &'static str,
}

/// A wrapper that gives each world rank its node's environment (Open MPI's
/// `OMPI_COMM_WORLD_RANK`), loads the fake, and runs ncclbench with the common arguments and
/// the rank's extra ones (a later flag overrides an earlier one).
fn wrapper(dir: &Path, nodes: &[Node]) -> std::path::PathBuf {
    let lib = fake_lib_dir();
    let mut s = String::from("#!/bin/sh\ncase \"$OMPI_COMM_WORLD_RANK\" in\n");
    for (r, n) in nodes.iter().enumerate() {
        s += &format!(
            "{r}) export FAKE_CUDA_MEM_GIB={} FAKE_CUDA_CC={}; set -- \"$@\" {} ;;\n",
            n.mem_gib, n.cc, n.extra
        );
    }
    s += &format!(
        "esac\nexport LD_LIBRARY_PATH={lib}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}\n\
         export NCCLBENCH_NCCL_LIB={lib}/libnccl.so.2 FAKE_CUDA_DEVICES=8\nexec {} \"$@\"\n",
        crate::support::bin::EXE,
        lib = lib.display(),
    );
    let path = dir.join("node.sh");
    std::fs::write(&path, s).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The job's output and how long it ran (from its launch, once its turn came).
fn mpirun(nodes: &[Node], args: &str) -> (Output, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let script = wrapper(dir.path(), nodes);
    let _turn = crate::support::mpi::shared_turn();
    let started = Instant::now();
    let o = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np"])
        .arg(nodes.len().to_string())
        .arg(&script)
        .args(args.split_whitespace())
        .output()
        .unwrap();
    (o, started.elapsed())
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr)
}

/// The fake's device memory for `FAKE_CUDA_MEM_GIB=gib` (it truncates the same way).
fn fake_mem(gib: f64) -> u64 {
    (gib * GIB as f64) as u64
}

#[test]
fn nodes_with_different_memory_and_compute_capability_run_one_plan() {
    if !have_mpirun() {
        return;
    }
    // Rank 0: a "Hopper" with more memory; rank 1: an "Ampere" with less and no fp8.
    let nodes = [
        Node {
            mem_gib: "2.1",
            cc: "9.0",
            extra: "",
        },
        Node {
            mem_gib: "2.003",
            cc: "8.0",
            extra: "",
        },
    ];
    let (o, _) = mpirun(
        &nodes,
        "all_reduce -b 256K -e 64M -f 4 -d all -c 1 -n 1 -w 1 -T 30",
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    // The clamp is the job's smallest device (rank 1's), printed by rank 0.
    let max = ncclbench::bench::plan::clamp_max_bytes(64 << 20, fake_mem(2.003), true).unwrap();
    assert!(
        t.contains(&format!(
            "# Reducing maxBytes to {max} due to memory limitation"
        )),
        "{t}"
    );
    // fp8 is skipped because rank 1 lacks it, although rank 0 (which prints) has it.
    for fp8 in ["f8e4m3", "f8e5m2"] {
        assert!(t.contains(&format!("# skipping {fp8}/sum")), "{t}");
        assert!(
            !t.lines().any(|l| !l.starts_with('#') && l.contains(fp8)),
            "{t}"
        );
    }
    let rows: Vec<&str> = t
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains(" float "))
        .collect();
    // 256 KiB and 1 MiB fit under rank 1's 1.07 MB; rank 0 alone would have gone to 16 MiB.
    assert_eq!(rows.len(), 2, "{t}");
    assert!(t.contains("# Out of bounds values : 0 OK"), "{t}");
}

#[test]
fn processes_whose_plans_differ_stop_with_one_error_before_any_collective() {
    if !have_mpirun() {
        return;
    }
    // Same machines; rank 1 was given another -e (an MPMD launch line gone wrong).
    let nodes = [
        Node {
            mem_gib: "16",
            cc: "9.0",
            extra: "",
        },
        Node {
            mem_gib: "16",
            cc: "9.0",
            extra: "-e 4M",
        },
    ];
    let (o, took) = mpirun(&nodes, "all_reduce -b 1M -e 16M -f 2 -c 1 -n 1 -w 1 -T 30");
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        took < Duration::from_secs(25),
        "it must not wait for the -T deadline: {t}"
    );
    assert!(t.contains("built different plans"), "{t}");
    assert!(
        t.contains(
            "sizes: process 0 has 5 sizes 1048576..16777216 B, process 1 has 3 sizes \
             1048576..4194304 B"
        ),
        "{t}"
    );
    // Nothing was measured: no data row.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        !out.lines().any(|l| l.trim_start().starts_with("1048576")),
        "{t}"
    );
}
