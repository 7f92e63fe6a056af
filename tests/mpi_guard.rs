//! Processes of one job that would make different collective calls, under real `mpirun`
//! (feature `mpi`) on fake-nccl: one process given another flag or `NCCL_TESTS_*` variable
//! (an MPMD launch line gone wrong, a node's own profile), or another alltoallv matrix, is
//! refused before any collective with one line naming the setting and the processes, printed
//! once by rank 0, every process exiting 2; malformed split variables likewise.
#![cfg(feature = "mpi")]

use crate::support::mpi::{have_mpirun, nccl_job, nccl_job_per_rank, rows, Job, Rank};
use std::time::Duration;

const ARGS: &str = "all_reduce --backend nccl -b 8 -e 1K -f 4 -c 1 -n 1 -w 1 -T 20";

/// The job stopped with exit 2 before any row, saying `needle` exactly once.
fn refused_once(j: &Job, needle: &str) {
    let t = &j.text;
    assert_eq!(j.code, Some(2), "{needle}: {t}");
    assert!(
        j.took < Duration::from_secs(18),
        "it must not wait for -T: {t}"
    );
    assert_eq!(t.matches(needle).count(), 1, "{needle}: {t}");
    assert_eq!(t.matches("ncclbench: ").count(), 1, "one line: {t}");
    assert!(rows(t).is_empty(), "nothing was measured: {t}");
}

#[test]
fn a_setting_that_changes_the_calls_on_one_process_is_refused_once() {
    if !have_mpirun() {
        return;
    }
    let host = ncclbench::core::host::gethostname_short();
    let on = |r: usize| format!("process {r} ({host}) has");
    let mask = [("NCCL_TESTS_SPLIT_MASK", "1")];
    let split = [("NCCL_TESTS_SPLIT", "MOD 2")];
    let min_bw = [("NCCL_TESTS_MIN_BW", "5")];
    let cases: [(Rank, String); 8] = [
        (
            Rank {
                env: &[],
                args: "--timer device",
            },
            format!("blocking, timing and checking: {} -z 0 --timer host", on(0)),
        ),
        (
            Rank {
                env: &[],
                args: "--verify host",
            },
            format!(
                "--verify auto -T 20, {} -z 0 --timer host --verify host",
                on(1)
            ),
        ),
        (
            Rank {
                env: &[],
                args: "-z 1",
            },
            format!("{} -z 1 --timer", on(1)),
        ),
        (
            Rank {
                env: &[],
                args: "-T 25",
            },
            format!("{} -z 0 --timer host --verify auto -T 25", on(1)),
        ),
        (
            Rank {
                env: &[],
                args: "-u 3",
            },
            format!(
                "buffers and communicator: {} -u 0 -x default, {} -u 3",
                on(0),
                on(1)
            ),
        ),
        (
            Rank {
                env: &mask,
                args: "",
            },
            format!("NCCL_TESTS_SPLIT_MASK: {} unset, {} \"1\"", on(0), on(1)),
        ),
        (
            Rank {
                env: &split,
                args: "",
            },
            format!("NCCL_TESTS_SPLIT: {} unset, {} \"MOD 2\"", on(0), on(1)),
        ),
        (
            Rank {
                env: &min_bw,
                args: "",
            },
            format!("NCCL_TESTS_MIN_BW: {} unset, {} \"5\"", on(0), on(1)),
        ),
    ];
    for (rank1, needle) in cases {
        let j = nccl_job_per_rank(&[Rank::default(), rank1], ARGS);
        refused_once(&j, &needle);
        assert!(j.text.contains("built different plans"), "{}", j.text);
    }
}

#[test]
fn malformed_split_variables_are_refused_once() {
    if !have_mpirun() {
        return;
    }
    for (k, v, why) in [
        ("NCCL_TESTS_SPLIT", "zz", "is not a split"),
        ("NCCL_TESTS_SPLIT", "FOO 2", "is not a split"),
        ("NCCL_TESTS_SPLIT", "MOD 2x", ": the value is not a number"),
        ("NCCL_TESTS_SPLIT", "MOD 0", "divides by zero"),
        ("NCCL_TESTS_SPLIT_MASK", "zz", "is not a hexadecimal mask"),
    ] {
        let j = nccl_job(2, &[(k, v)], ARGS);
        let sep = if why.starts_with(':') { "" } else { " " };
        refused_once(&j, &format!("ncclbench: {k}={v:?}{sep}{why}"));
    }
    // On one process only: rank 0 names it.
    let bad = [("NCCL_TESTS_SPLIT", "zz")];
    let j = nccl_job_per_rank(
        &[
            Rank::default(),
            Rank {
                env: &bad,
                args: "",
            },
        ],
        ARGS,
    );
    refused_once(&j, "process 1 (");
    assert!(j
        .text
        .contains("could not build one (NCCL_TESTS_SPLIT=\"zz\" is not a split"));
}

#[test]
fn alltoallv_matrices_are_compared_by_their_contents() {
    if !have_mpirun() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let a = write("a/m.txt", "0 1024\n2048 0\n");
    let same = write("b/m.txt", "0 1024\n2048 0\n");
    let other = write("c/m.txt", "0 4096\n2048 0\n");
    let var = "NCCL_TESTS_ALLTOALLV_MATRIX_FILE";
    let args = "alltoallv --backend nccl -b 8K -e 8K -c 1 -n 1 -w 1 -T 20";
    let (ea, es, eo) = (
        [(var, a.as_str())],
        [(var, same.as_str())],
        [(var, other.as_str())],
    );
    let at = |env| Rank { env, args: "" };
    // One matrix at two paths: one plan.
    let j = nccl_job_per_rank(&[at(&ea), at(&es)], args);
    assert_eq!(j.code, Some(0), "{}", j.text);
    assert!(
        j.text.contains("# Out of bounds values : 0 OK"),
        "{}",
        j.text
    );
    // Another matrix: refused, whatever its file is called.
    let j = nccl_job_per_rank(&[at(&ea), at(&eo)], args);
    refused_once(&j, "alltoallv traffic: process 0 (");
}
