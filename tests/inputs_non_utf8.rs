//! Every subcommand with a non-UTF-8 environment (a recorded variable's value, a recorded
//! variable's name, an unrelated variable) and from a non-UTF-8 working directory: none may
//! panic (exit 101, "panicked" on stderr), each ends as it would otherwise, and the
//! environment record keeps such a variable lossily, marked.

use crate::support::bin::{data, ncclbench};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

/// A small acceptance profile for two host ranks (one collective, tiny sizes).
const PROFILE: &str = r#"[profile]
name = "tiny"
description = "two ranks, tiny sizes (test)"
typical = false
ranks = 2

[suite]
collectives = ["all_reduce"]
correctness_max_bytes = "1K"
correctness_step_factor = 8
perf_max_bytes = "8K"
perf_step_factor = 8
iters = 2
warmup_iters = 1
timeout_s = 20
"#;

/// The subcommands, each as (name, arguments) run in `dir` (outputs written under it).
fn every_subcommand(dir: &Path) -> Vec<(&'static str, Vec<std::ffi::OsString>)> {
    let prof = dir.join("p.toml");
    std::fs::write(&prof, PROFILE).unwrap();
    let os = |s: &str| std::ffi::OsString::from(s);
    let p = |p: &Path| p.as_os_str().to_owned();
    let csv = data("analysis/ncclbench_host_all_reduce.csv");
    vec![
        (
            "bench",
            [
                "all_reduce",
                "--backend",
                "host",
                "-g",
                "2",
                "-b",
                "8",
                "-e",
                "64",
            ]
            .map(os)
            .into_iter()
            .chain([
                os("--csv"),
                p(&dir.join("r.csv")),
                os("--json"),
                p(&dir.join("r.json")),
            ])
            .collect(),
        ),
        ("env", vec![os("env"), os("--json")]),
        (
            "accept",
            vec![
                os("accept"),
                os("--profile"),
                p(&prof),
                os("--out"),
                p(&dir.join("acc")),
                os("--backend"),
                os("host"),
                os("-g"),
                os("2"),
            ],
        ),
        (
            "locate",
            [
                "locate",
                "--backend",
                "host",
                "-g",
                "2",
                "-b",
                "1K",
                "-w",
                "1",
                "-n",
                "1",
            ]
            .map(os)
            .into_iter()
            .chain([os("--out"), p(&dir.join("loc"))])
            .collect(),
        ),
        ("analyze", vec![os("analyze"), p(&csv)]),
        (
            "compare",
            vec![
                os("compare"),
                p(&data("compare/before_all_reduce.csv")),
                p(&data("compare/after_slower.csv")),
            ],
        ),
        ("logs", vec![os("logs"), p(&data("logs/v2.21_numeric.log"))]),
    ]
}

/// Runs every subcommand with `setup` applied; returns a failure line per subcommand that
/// panicked, with its output.
fn panics(dir: &Path, setup: impl Fn(&mut Command)) -> Vec<String> {
    let mut bad = Vec::new();
    for (name, args) in every_subcommand(dir) {
        let mut cmd = ncclbench();
        cmd.args(&args);
        setup(&mut cmd);
        let o = cmd.output().expect("run ncclbench");
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.code() == Some(101) || err.contains("panicked") {
            bad.push(format!("{name}: exit {:?}: {err}", o.status.code()));
        }
    }
    bad
}

fn not_utf8(tail: &[u8]) -> std::ffi::OsString {
    OsStr::from_bytes(tail).to_owned()
}

#[test]
fn no_subcommand_panics_on_a_non_utf8_variable() {
    let dir = tempfile::tempdir().unwrap();
    let bad = panics(dir.path(), |cmd| {
        cmd.env("NCCL_NOT_UTF8", not_utf8(b"eth\xff0"))
            .env(not_utf8(b"UCX_\xfeNAME"), "1")
            .env("LANG_NOT_RECORDED", not_utf8(b"\xc3\x28"));
    });
    assert_eq!(bad, Vec::<String>::new());
}

#[test]
fn no_subcommand_panics_in_a_non_utf8_working_directory() {
    let top = tempfile::tempdir().unwrap();
    let cwd = top.path().join(not_utf8(b"cwd-\xff\xfe"));
    std::fs::create_dir(&cwd).unwrap();
    // A shell started there says so in PWD, which the record would read.
    let bad = panics(&cwd, |cmd| {
        cmd.current_dir(&cwd).env("PWD", &cwd);
    });
    assert_eq!(bad, Vec::<String>::new());
}

/// The record keeps the variable, its invalid bytes escaped and the entry marked, so a reader
/// sees the run had it and that it is not shown exactly.
#[test]
fn the_environment_record_keeps_a_non_utf8_variable_marked() {
    let o = ncclbench()
        .args(["env", "--json"])
        .env("NCCL_NOT_UTF8", not_utf8(b"eth\xff0"))
        .env(not_utf8(b"NCCL_\xfeNAME"), "1")
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let vars: Vec<&str> = v["variables"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(
        vars.contains(&"NCCL_NOT_UTF8=eth\\xff0 [not UTF-8]"),
        "{vars:?}"
    );
    assert!(vars.contains(&"NCCL_\\xfeNAME=1 [not UTF-8]"), "{vars:?}");
}
