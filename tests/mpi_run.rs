//! Real multi-process runs under Open MPI's `mpirun` (feature `mpi`): every collective with
//! every type and operator verified over `--backend mpi` with 2 and 4 processes, split
//! communicators, a killed rank, and a stalled rank named by the hang diagnosis. Skipped with
//! a printed reason where mpirun is absent, except on CI (CI=true), where that fails.
#![cfg(feature = "mpi")]

use crate::support::mpi::{have_mpirun, job};
use std::time::Duration;

const ALL: [&str; 10] = [
    "all_reduce",
    "reduce",
    "reduce_scatter",
    "broadcast",
    "all_gather",
    "gather",
    "scatter",
    "alltoall",
    "sendrecv",
    "hypercube",
];

#[test]
fn every_collective_type_and_op_verifies_on_2_and_4_processes() {
    if !have_mpirun() {
        return;
    }
    for np in [2, 4] {
        for coll in ALL {
            let j = job(
                np,
                &[],
                &format!("{coll} --backend mpi -c 1 -d all -o all -r 1 -b 8 -e 96 -f 12 -n 2 -w 1"),
            );
            let t = &j.text;
            assert_eq!(j.code, Some(0), "np {np} {coll}: {t}");
            assert!(t.contains("# Out of bounds values : 0 OK"), "{t}");
            assert_eq!(t.matches("Collective test starting").count(), 1, "{t}");
            assert_eq!(t.matches("mpi-process").count(), np, "device lines: {t}");
        }
    }
}

#[test]
fn split_groups_each_run_their_own_communicator() {
    if !have_mpirun() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s.csv");
    let j = job(
        4,
        &[("NCCL_TESTS_SPLIT_MASK", "1")],
        &format!(
            "all_gather --backend mpi -c 1 -b 8 -e 64 -n 2 -w 1 -I 1 -a 3 --csv {}",
            csv.display()
        ),
    );
    let t = &j.text;
    assert_eq!(j.code, Some(0), "{t}");
    for line in ["Rank  0 Group  0", "Rank  0 Group  1", "Rank  1 Group  1"] {
        assert!(t.contains(line), "{line}: {t}");
    }
    // Bandwidth and rows are per group of 2 ranks.
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(rows.lines().skip(1).all(|l| l.contains(",2,")), "{rows}");
}

#[test]
fn a_stalled_rank_is_named_and_every_rank_exits_4_in_time() {
    if !have_mpirun() {
        return;
    }
    let j = job(
        4,
        &[
            ("NCCLBENCH_TEST_STALL_RANK", "2"),
            ("NCCLBENCH_TEST_STALL_OP", "30"),
        ],
        "all_reduce --backend mpi -c 1 -b 8 -e 1K -T 3",
    );
    let t = &j.text;
    assert_eq!(j.code, Some(4), "{t}");
    assert!(
        j.took < Duration::from_secs(3 + 10 + 5),
        "took {:?}",
        j.took
    );
    assert!(t.contains("# Hang diagnosis (-T 3 s)"), "{t}");
    assert!(
        t.contains("# Verdict: rank 2 is behind at op 30 (culprit)"),
        "{t}"
    );
    assert!(t.contains("RAS"), "{t}");
}

#[test]
fn a_killed_rank_stops_the_others_and_completed_rows_stay_on_disk() {
    if !have_mpirun() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("k.csv");
    let j = job(
        2,
        &[
            ("NCCLBENCH_TEST_DIE_RANK", "1"),
            ("NCCLBENCH_TEST_DIE_OP", "200"),
        ],
        &format!(
            "all_reduce --backend mpi -c 1 -b 8 -e 64K -f 2 -T 5 --csv {}",
            csv.display()
        ),
    );
    let t = &j.text;
    assert_ne!(j.code, Some(0), "{t}");
    assert!(
        j.took < Duration::from_secs(5 + 10 + 5),
        "took {:?}",
        j.took
    );
    let rows = std::fs::read_to_string(&csv).unwrap();
    let n = rows.lines().count();
    assert!(n > 2, "some rows completed before op 200: {rows}");
    // Every line is a whole row (flushed per row).
    let cols = rows.lines().next().unwrap().split(',').count();
    assert!(rows.lines().all(|l| l.split(',').count() == cols), "{rows}");
}
