//! `-R 1` (ncclCommRegister) and `-R 2` (ncclCommWindowRegister, collective, in one group)
//! on the NCCL backend under real `mpirun` (feature `mpi`), fake-nccl's communicators
//! spanning the processes: every collective verifies, and every registration and window made
//! in any process is undone before its communicator goes, as the fake's call trace shows
//! (each deregistration names a live handle). From NCCL 2.28 a window's handle is written at
//! `ncclGroupEnd`, not at the call; the fake does the same, so a handle read too early is
//! NULL and its deregistration is refused.
#![cfg(feature = "mpi")]

use crate::support::fake_nccl::mpi_env;
use crate::support::mpi::{have_mpirun, mpirun};

/// Exit status, stdout + stderr, and the fake's trace lines of every process.
struct Job {
    code: Option<i32>,
    text: String,
    trace: Vec<String>,
}

/// `mpirun -np np ncclbench <args>` on the fake with `env`, tracing NCCL calls.
fn job(np: usize, env: &[(&str, &str)], args: &str) -> Job {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let rdv = dir.path().join("rdv");
    std::fs::create_dir(&rdv).unwrap();
    let fake = mpi_env(&rdv);
    let trace_s = trace.display().to_string();
    let mut all: Vec<(&str, &str)> = fake.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.push(("FAKE_NCCL_TRACE", &trace_s));
    all.extend_from_slice(env);
    let mut c = mpirun(np, &all);
    c.args(args.split_whitespace());
    let o = c.output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    let trace = std::fs::read_to_string(&trace)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    Job {
        code: o.status.code(),
        text,
        trace,
    }
}

/// The trace lines of `call`.
fn calls<'a>(j: &'a Job, call: &str) -> Vec<&'a str> {
    j.trace
        .iter()
        .filter(|l| l.split('\t').next() == Some(call))
        .map(String::as_str)
        .collect()
}

fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split('\t')
        .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
}

/// Runs `coll` with `-R mode` on `np` processes of `g` ranks; checks the data and that every
/// `reg` call made is undone by a `dereg` of a live handle, on every rank.
fn registered(np: usize, g: usize, mode: u32, env: &[(&str, &str)], coll: &str) {
    let (reg, dereg) = match mode {
        1 => ("ncclCommRegister", "ncclCommDeregister"),
        _ => ("ncclCommWindowRegister", "ncclCommWindowDeregister"),
    };
    let args =
        format!("{coll} --backend nccl -g {g} -b 1K -e 4K -f 4 -c 1 -n 2 -w 1 -T 60 -R {mode}");
    let j = job(np, env, &args);
    let t = &j.text;
    assert_eq!(j.code, Some(0), "`{args}` {env:?}:\n{t}");
    assert!(
        t.contains("# Out of bounds values : 0 OK"),
        "`{args}`:\n{t}"
    );
    let made = calls(&j, reg);
    let undone = calls(&j, dereg);
    // Send and receive buffer of every rank.
    assert_eq!(made.len(), 2 * np * g, "`{args}`: {:?}", j.trace);
    if mode == 2 {
        assert!(made.iter().all(|l| field(l, "group") == "1"), "{made:?}");
    }
    let refused: Vec<_> = undone.iter().filter(|l| field(l, "live") != "1").collect();
    assert!(
        refused.is_empty(),
        "`{args}` {env:?}: refused {refused:?}\n{t}"
    );
    assert_eq!(undone.len(), made.len(), "`{args}` {env:?}: {:?}", j.trace);
    for rank in 0..np * g {
        let of = |ls: &[&str]| {
            ls.iter()
                .filter(|l| field(l, "rank") == rank.to_string())
                .count()
        };
        assert_eq!(
            (of(&made), of(&undone)),
            (2, 2),
            "rank {rank}: {:?}",
            j.trace
        );
    }
}

#[test]
fn buffers_registered_in_every_process_are_deregistered() {
    if !have_mpirun() {
        return;
    }
    for coll in ["all_reduce", "sendrecv", "alltoall"] {
        registered(2, 1, 1, &[], coll);
    }
    registered(2, 2, 1, &[], "all_gather");
}

#[test]
fn every_window_of_every_process_is_deregistered_from_nccl_2_28() {
    if !have_mpirun() {
        return;
    }
    for coll in ["all_reduce", "sendrecv", "alltoall"] {
        registered(2, 1, 2, &[], coll);
    }
    registered(2, 2, 2, &[], "all_gather");
}

#[test]
fn windows_are_deregistered_on_nccl_2_27_too() {
    if !have_mpirun() {
        return;
    }
    // 2.27 writes the handle at the call.
    registered(2, 1, 2, &[("FAKE_NCCL_VERSION", "22703")], "all_reduce");
}
