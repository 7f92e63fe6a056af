//! `ncclbench locate` under Open MPI's `mpirun` (feature `mpi`), `--backend mpi`, with 4 and 8
//! processes playing 2 and 4 nodes of two GPUs each (`NCCLBENCH_TEST_HOSTNAMES`): a planted
//! slow rank, slow node, slow pair of ranks and stalled rank are each named, and nothing else;
//! a run without a fault names nobody. Sizes and iterations keep a run to seconds on a loaded
//! 2-core machine; the planted slowdown is 5x against a slow threshold of 2x the job's
//! reference, and every slow round is measured again before anyone is named.
#![cfg(feature = "mpi")]

use crate::support::mpi::have_mpirun;
use serde_json::Value;
use std::process::Output;
use std::time::{Duration, Instant};

const FOUR: &str = "n1,n1,n2,n2";
const EIGHT: &str = "n1,n1,n2,n2,n3,n3,n4,n4";

struct Located {
    code: Option<i32>,
    text: String,
    doc: Value,
    took: Duration,
}

/// `mpirun -np N ncclbench locate` on `hosts` with the test switches `env`.
fn locate(np: usize, hosts: &str, env: &[(&str, &str)]) -> Located {
    locate_on("mpi", np, hosts, env)
}

/// [`locate`] on `backend` (`nccl`: fake-nccl, whose communicators span the processes).
fn locate_on(backend: &str, np: usize, hosts: &str, env: &[(&str, &str)]) -> Located {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let fake = crate::support::fake_nccl::mpi_env(dir.path());
    let mut all = vec![("NCCLBENCH_TEST_HOSTNAMES", hosts)];
    if backend == "nccl" {
        all.extend(fake.iter().map(|(k, v)| (*k, v.as_str())));
    }
    all.extend_from_slice(env);
    let mut c = crate::support::mpi::mpirun_alone(np, &all);
    c.args([
        "locate",
        "--backend",
        backend,
        "-b",
        "1M",
        "-w",
        "3",
        "-n",
        "10",
        "-T",
        "3",
    ]);
    c.arg("--out").arg(&out);
    let t = Instant::now();
    let o: Output = c.output().unwrap();
    let took = t.elapsed();
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    let doc = std::fs::read_to_string(out.join("locate.json"))
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null);
    Located {
        code: o.status.code(),
        text,
        doc,
        took,
    }
}

/// `(what, where)` of every suspect, in rank order.
fn named(l: &Located) -> Vec<(String, String)> {
    l.doc["suspects"]
        .as_array()
        .unwrap_or_else(|| panic!("no locate.json: {}", l.text))
        .iter()
        .map(|s| {
            (
                s["what"].as_str().unwrap().to_string(),
                s["where"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pair(what: &str, place: &str) -> Vec<(String, String)> {
    vec![(what.to_string(), place.to_string())]
}

#[test]
fn a_run_without_a_fault_names_nobody() {
    if !have_mpirun() {
        return;
    }
    for (np, hosts) in [(4, FOUR), (8, EIGHT)] {
        let l = locate(np, hosts, &[]);
        assert_eq!(l.code, Some(0), "{}", l.text);
        assert!(named(&l).is_empty(), "{}", l.text);
        assert!(l.text.contains("# locate: no suspect"), "{}", l.text);
        assert_eq!(l.doc["status"], 0);
    }
}

#[test]
fn a_slow_rank_is_named_as_its_gpu_and_its_host_excluded() {
    if !have_mpirun() {
        return;
    }
    let env = [
        ("NCCLBENCH_TEST_LOCATE_SLOW_RANK", "3"),
        ("NCCLBENCH_TEST_LOCATE_SLOW_FACTOR", "5"),
    ];
    let l = locate(4, FOUR, &env);
    assert_eq!(l.code, Some(1), "{}", l.text);
    assert_eq!(named(&l), pair("gpu", "n2 GPU 1 (rank 3)"), "{}", l.text);
    assert!(l.text.contains("# slurm: --exclude=n2"), "{}", l.text);
    assert_eq!(l.doc["exclude"], serde_json::json!(["n2"]));
}

#[test]
fn a_slow_node_is_named_alone() {
    if !have_mpirun() {
        return;
    }
    let env = [
        ("NCCLBENCH_TEST_LOCATE_SLOW_HOST", "n3"),
        ("NCCLBENCH_TEST_LOCATE_SLOW_FACTOR", "5"),
    ];
    let l = locate(8, EIGHT, &env);
    assert_eq!(l.code, Some(1), "{}", l.text);
    assert_eq!(named(&l), pair("node", "n3"), "{}", l.text);
    assert_eq!(l.doc["slurm_exclude"], "--exclude=n3");
}

#[test]
fn a_slow_pair_is_a_link_between_healthy_nodes_and_excludes_nobody() {
    if !have_mpirun() {
        return;
    }
    // GPU 1 of n1 and GPU 1 of n2: they meet once, on rail 1.
    let env = [
        ("NCCLBENCH_TEST_LOCATE_SLOW_PAIR", "1-3"),
        ("NCCLBENCH_TEST_LOCATE_SLOW_FACTOR", "5"),
    ];
    let l = locate(8, EIGHT, &env);
    assert_eq!(l.code, Some(1), "{}", l.text);
    assert_eq!(named(&l), pair("link", "n1 - n2 rail 1"), "{}", l.text);
    assert_eq!(l.doc["exclude"], serde_json::json!([]));
    assert!(l.text.contains("# slurm: no host to exclude"), "{}", l.text);
}

#[test]
fn a_stalled_rank_is_named_and_the_run_finishes() {
    if !have_mpirun() {
        return;
    }
    // Op 20 of rank 5: inside the first rail round (13 calls per group: 3 warm-up, 10 timed).
    let env = [
        ("NCCLBENCH_TEST_STALL_RANK", "5"),
        ("NCCLBENCH_TEST_STALL_OP", "20"),
    ];
    let l = locate(8, EIGHT, &env);
    assert_eq!(l.code, Some(1), "{}", l.text);
    assert_eq!(named(&l), pair("hung", "n3 GPU 1 (rank 5)"), "{}", l.text);
    assert_eq!(l.doc["silent"][0]["rank"], 5);
    assert_eq!(l.doc["exclude"], serde_json::json!(["n3"]));
    // The partner's wait (-T 3), rank 0's report deadline (-T after its own end, plus 2 s),
    // and seconds of rounds and start-up: far from a hang.
    assert!(l.took < Duration::from_secs(40), "took {:?}", l.took);
}

/// On the NCCL backend (fake-nccl communicators spanning the processes): a planted slow rank,
/// slow node and slow link are each named first, with the planted exclusion. The fake's
/// cross-process calls travel over sockets and every wait blocks until its result arrives
/// (no file polling), but a call across 8 processes on 2 cores still carries more noise than
/// `--backend mpi`'s: a second, weaker suspect just over the 2x threshold is tolerated. A
/// larger planted factor does not help: 20x makes the slow group's iterations outlast `-T 3`
/// and read as a hang.
#[test]
fn on_the_nccl_backend_a_slow_rank_node_and_link_are_each_named() {
    if !have_mpirun() {
        return;
    }
    let slow =
        |k: &'static str, v: &'static str| [(k, v), ("NCCLBENCH_TEST_LOCATE_SLOW_FACTOR", "5")];
    let first = |l: &Located, what: &str, place: &str| {
        assert_eq!(l.code, Some(1), "{}", l.text);
        let n = named(l);
        assert_eq!(n.first(), pair(what, place).first(), "{}", l.text);
    };
    let l = locate_on(
        "nccl",
        4,
        FOUR,
        &slow("NCCLBENCH_TEST_LOCATE_SLOW_RANK", "3"),
    );
    first(&l, "gpu", "n2 GPU 1 (rank 3)");
    assert_eq!(l.doc["exclude"], serde_json::json!(["n2"]));
    let l = locate_on(
        "nccl",
        8,
        EIGHT,
        &slow("NCCLBENCH_TEST_LOCATE_SLOW_HOST", "n3"),
    );
    first(&l, "node", "n3");
    assert_eq!(l.doc["exclude"][0], "n3");
    let l = locate_on(
        "nccl",
        8,
        EIGHT,
        &slow("NCCLBENCH_TEST_LOCATE_SLOW_PAIR", "1-3"),
    );
    first(&l, "link", "n1 - n2 rail 1");
}
