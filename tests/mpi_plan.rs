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

use crate::support::mpi::{have_mpirun, nccl_job_per_rank, Job, Rank};
use std::time::Duration;

const GIB: u64 = 1 << 30;

/// Per world rank: the fake's device memory and compute capability, and extra arguments.
struct Node {
    mem_gib: &'static str,
    cc: &'static str,
    extra: &'static str,
}

/// The job on `nodes` (each rank's fake given its node's memory and capability).
fn mpirun(nodes: &[Node], args: &str) -> Job {
    let envs: Vec<[(&str, &str); 2]> = nodes
        .iter()
        .map(|n| [("FAKE_CUDA_MEM_GIB", n.mem_gib), ("FAKE_CUDA_CC", n.cc)])
        .collect();
    let ranks: Vec<Rank> = nodes
        .iter()
        .zip(&envs)
        .map(|(n, env)| Rank { env, args: n.extra })
        .collect();
    nccl_job_per_rank(&ranks, args)
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
    let j = mpirun(
        &nodes,
        "all_reduce -b 256K -e 64M -f 4 -d all -c 1 -n 1 -w 1 -T 30",
    );
    let t = &j.text;
    assert_eq!(j.code, Some(0), "{t}");
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
    let j = mpirun(&nodes, "all_reduce -b 1M -e 16M -f 2 -c 1 -n 1 -w 1 -T 30");
    let t = &j.text;
    assert_eq!(j.code, Some(2), "{t}");
    assert!(
        j.took < Duration::from_secs(25),
        "it must not wait for the -T deadline: {t}"
    );
    assert!(t.contains("built different plans"), "{t}");
    let host = ncclbench::core::host::gethostname_short();
    assert!(
        t.contains(&format!(
            "sizes: process 0 ({host}) has 5 sizes 1048576..16777216 B, process 1 ({host}) \
             has 3 sizes 1048576..4194304 B"
        )),
        "{t}"
    );
    // Said once, by rank 0; nothing was measured: no data row.
    assert_eq!(t.matches("ncclbench: ").count(), 1, "{t}");
    let out = &j.stdout;
    assert!(
        !out.lines().any(|l| l.trim_start().starts_with("1048576")),
        "{t}"
    );
}
