//! Inputs of `locate` checked before anything is measured (issue 35): a missing or unreadable
//! `--nccl-log` or `--profile`, and a job too small to judge, are one line with exit 2 and no
//! output directory, instead of an exit 1 after every round.

use crate::support::bin::{ncclbench, run, Run};
use std::path::Path;

fn locate(out: &Path, extra: &[&str]) -> Run {
    run(ncclbench()
        .arg("locate")
        .arg("--out")
        .arg(out)
        .args(["--backend", "host"])
        .args(extra))
}

fn refused_before_measuring(r: &Run, out: &Path, names: &str) {
    assert_eq!(r.code, Some(2), "{}\n{}", r.out, r.err);
    assert_eq!(r.err.trim_end().lines().count(), 1, "{}", r.err);
    assert!(r.err.contains(names), "{}", r.err);
    assert!(!r.out.contains("# round"), "nothing measured: {}", r.out);
    assert!(!out.exists(), "no output directory made");
}

#[test]
fn locate_refuses_a_missing_or_unreadable_input_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("loc");
    let sub = dir.path().to_str().unwrap();
    for (extra, names) in [
        (vec!["--nccl-log", "/nonexistent"], "/nonexistent"),
        (vec!["--nccl-log", sub], "is a directory"),
        (vec!["--profile", "/nonexistent.toml"], "nonexistent"),
    ] {
        let mut args = vec!["-g", "2"];
        args.extend(extra);
        let r = locate(&out, &args);
        refused_before_measuring(&r, &out, names);
    }
}

#[test]
fn locate_on_one_rank_says_it_cannot_judge() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("loc");
    let r = locate(&out, &["-g", "1"]);
    refused_before_measuring(&r, &out, "cannot be judged");
}

#[test]
fn an_output_that_cannot_be_created_is_refused_before_the_run_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("afile"), "mine\n").unwrap();
    let long = format!("{}.csv", "a".repeat(300));
    for (flag, path, names) in [
        ("--csv", "nodir/x.csv", "nodir"),
        ("-J", "nodir/x.json", "nodir"),
        ("--prom", "nodir/x.prom", "nodir"),
        ("--csv", long.as_str(), "longer than"),
        ("--csv", "afile/x.csv", "not a directory"),
    ] {
        let r = run(ncclbench().current_dir(dir.path()).args([
            "all_reduce",
            "--backend",
            "host",
            "-g",
            "2",
            "-b",
            "8",
            "-e",
            "64",
            flag,
            path,
        ]));
        assert_eq!(r.code, Some(2), "{flag} {path}: {}\n{}", r.out, r.err);
        assert_eq!(r.err.trim_end().lines().count(), 1, "{}", r.err);
        assert!(r.err.contains(names), "{}", r.err);
        assert!(r.out.is_empty(), "nothing run: {}", r.out);
    }
}
