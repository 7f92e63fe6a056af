//! The headline run, one NCCL communicator spanning processes, under real `mpirun` (feature
//! `mpi`) on fake-nccl, whose communicators span processes through a rendezvous directory
//! named in the unique id (fake-nccl/src/xproc.rs). Every collective at 2, 4 and 8 processes
//! of one rank and 2 processes of two ranks; the options that change the calls; split groups;
//! a wrong element made in another process's rank; a rank stuck inside NCCL; a killed
//! process and a timeout mid-row; the JSON's per-process times. What a user of nccl-tests
//! reads is in `mpi_view`, the refusals of differing processes in `mpi_guard`. Each job uses
//! its own rendezvous directory, which must be empty afterwards. Sizes are small: the set
//! costs about a minute and a half of a 2-core machine.
#![cfg(feature = "mpi")]

use crate::support::mpi::{have_mpirun, nccl_job, rows};
use std::path::Path;
use std::time::Duration;

const COLLECTIVES: [&str; 11] = [
    "all_reduce",
    "all_gather",
    "broadcast",
    "reduce",
    "reduce_scatter",
    "alltoall",
    "scatter",
    "gather",
    "sendrecv",
    "hypercube",
    "alltoallv",
];

/// Every collective with every type and op, checked, on `np` processes of `g` ranks.
fn every_collective(np: usize, g: usize) {
    if !have_mpirun() {
        return;
    }
    for coll in COLLECTIVES {
        let args =
            format!("{coll} --backend nccl -g {g} -b 1K -e 1K -c 1 -d all -o all -n 1 -w 0 -T 60");
        let j = nccl_job(np, &[], &args);
        let t = &j.text;
        assert_eq!(j.code, Some(0), "np {np}: `{args}`:\n{t}");
        assert!(
            t.contains("# Out of bounds values : 0 OK"),
            "`{args}`:\n{t}"
        );
        let devices = t.lines().filter(|l| l.starts_with("#  Rank ")).count();
        assert_eq!(devices, np * g, "`{args}`:\n{t}");
        assert!(!rows(t).is_empty(), "`{args}`:\n{t}");
    }
}

#[test]
fn every_collective_verifies_on_2_processes() {
    every_collective(2, 1);
}

#[test]
fn every_collective_verifies_on_4_processes() {
    every_collective(4, 1);
}

#[test]
fn every_collective_verifies_on_8_processes() {
    every_collective(8, 1);
}

#[test]
fn every_collective_verifies_on_2_processes_of_2_gpus() {
    every_collective(2, 2);
}

#[test]
fn options_that_change_the_calls_run_across_processes() {
    if !have_mpirun() {
        return;
    }
    for extra in ["-R 1", "-R 2", "-G 4", "-I 1", "--timer device", "-N 2"] {
        for coll in ["all_reduce", "sendrecv"] {
            let args =
                format!("{coll} --backend nccl -b 1K -e 4K -f 4 -c 1 -n 2 -w 1 -T 60 {extra}");
            let j = nccl_job(2, &[], &args);
            assert_eq!(j.code, Some(0), "`{args}`:\n{}", j.text);
            assert!(
                j.text.contains("# Out of bounds values : 0 OK"),
                "`{args}`:\n{}",
                j.text
            );
            assert!(!rows(&j.text).is_empty(), "`{args}`:\n{}", j.text);
        }
    }
}

#[test]
fn split_groups_each_run_their_own_communicator_across_processes() {
    if !have_mpirun() {
        return;
    }
    let args = "all_reduce --backend nccl -b 8 -e 1K -f 8 -c 1 -n 2 -w 1 -T 60 --per-group";
    let j = nccl_job(4, &[("NCCL_TESTS_SPLIT", "MOD 2")], args);
    let t = &j.text;
    assert_eq!(j.code, Some(0), "{t}");
    assert!(t.contains("# Out of bounds values : 0 OK"), "{t}");
    for g in 0..2 {
        assert!(t.contains(&format!("# Group {g} avg bus bandwidth")), "{t}");
    }
    // Ranks 0 and 2 form group 0, 1 and 3 group 1.
    let groups: Vec<String> = t
        .lines()
        .filter(|l| l.starts_with("#  Rank "))
        .map(|l| l.split_whitespace().nth(4).unwrap_or("").to_string())
        .collect();
    assert_eq!(groups, ["0", "1", "0", "1"], "{t}");
}

#[test]
fn a_wrong_element_from_another_process_is_counted_exactly() {
    if !have_mpirun() {
        return;
    }
    // Op 2 of each communicator is all_reduce's out-of-place verification launch; rank 1
    // (process 1) gets the wrong element, rank 0 (which prints) counts it.
    let args = "all_reduce --backend nccl -b 4K -e 4K -w 0 -n 1 -c 1 -T 60";
    let j = nccl_job(2, &[("FAKE_NCCL_CORRUPT_AT", "2:1")], args);
    let t = &j.text;
    assert_eq!(j.code, Some(7), "{t}");
    let r = rows(t);
    assert_eq!(r.len(), 1, "{t}");
    assert_eq!((r[0][8].as_str(), r[0][12].as_str()), ("1", "0"), "{t}");
    assert!(t.contains("# Out of bounds values : 1 FAILED"), "{t}");
}

#[test]
fn a_rank_stuck_inside_nccl_is_named_and_every_process_exits() {
    if !have_mpirun() {
        return;
    }
    let args = "all_reduce --backend nccl -b 8 -e 1K -c 1 -n 2 -w 1 -T 4";
    let j = nccl_job(4, &[("FAKE_NCCL_HANG_AT", "5:3")], args);
    let t = &j.text;
    assert_eq!(j.code, Some(4), "{t}");
    assert!(j.took < Duration::from_secs(4 + 30), "took {:?}", j.took);
    assert!(t.contains("Test timeout (4s)"), "{t}");
    assert!(t.contains("# Hang diagnosis (-T 4 s)"), "{t}");
}

#[test]
#[ignore = "fails on main after the merges of 2026-12-08: under mpirun the run stops after the \
            half row with no footer (passed on its branch); open on issue 34"]
fn a_timeout_mid_row_leaves_whole_lines() {
    if !have_mpirun() {
        return;
    }
    // Ops 0-7 are the warm-up (8 B..1 KiB), 8-11 the first row's out-of-place half; rank 3
    // stops in op 13, inside the in-place timed loop, so the row is half printed.
    let args = "all_reduce --backend nccl -b 8 -e 1K -c 1 -n 2 -w 1 -T 4";
    let j = nccl_job(4, &[("FAKE_NCCL_HANG_AT", "13:3")], args);
    let out = &j.stdout;
    assert_eq!(j.code, Some(4), "{}", j.text);
    let half: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with(' ') && l.contains('#'))
        .collect();
    assert!(
        half.is_empty(),
        "a row glued to the footer: {half:?}\n{out}"
    );
    assert!(
        out.lines().any(|l| l.starts_with("           8 ")),
        "the half row is kept: {out}"
    );
    assert!(
        out.lines().any(|l| l.starts_with("# Out of bounds values")),
        "{out}"
    );
}

#[test]
fn a_killed_process_stops_the_others() {
    if !have_mpirun() {
        return;
    }
    let args = "all_reduce --backend nccl -b 8 -e 64K -f 2 -c 1 -T 10";
    let j = nccl_job(
        4,
        &[
            ("NCCLBENCH_TEST_DIE_RANK", "2"),
            ("NCCLBENCH_TEST_DIE_OP", "100"),
        ],
        args,
    );
    assert_ne!(j.code, Some(0), "{}", j.text);
    assert!(j.took < Duration::from_secs(10 + 30), "took {:?}", j.took);
    assert!(rows(&j.text).len() >= 2, "rows before op 100:\n{}", j.text);
}

#[test]
fn the_json_has_every_process_times() {
    if !have_mpirun() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let args = format!(
        "all_reduce --backend nccl -b 1K -e 8K -f 8 -c 1 -n 3 -w 1 -I 1 -T 60 -J {}",
        json.display()
    );
    let j = nccl_job(4, &[], &args);
    assert_eq!(j.code, Some(0), "{}", j.text);
    per_process_times(&json, 4, 3);
}

/// Every result of `json` has `procs` per-process rows of `iters` times each.
fn per_process_times(json: &Path, procs: usize, iters: usize) {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let text = doc.to_string();
    let mut found = 0;
    let mut stack = vec![&doc];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(p) = m.get("per_process_max_times_us") {
                    let p = p.as_array().unwrap();
                    assert_eq!(p.len(), procs, "{text}");
                    for row in p {
                        let row = row.as_array().unwrap();
                        assert_eq!(row.len(), iters, "{text}");
                        assert!(row.iter().all(|t| t.as_f64().unwrap() > 0.0), "{text}");
                    }
                    found += 1;
                }
                stack.extend(m.values());
            }
            serde_json::Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    assert!(found >= 2, "no per-process times: {text}");
}
