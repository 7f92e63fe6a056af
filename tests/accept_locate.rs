//! `accept`'s locate stage on the host backend, eight ranks as threads playing four nodes of
//! two GPUs (`NCCLBENCH_TEST_HOSTNAMES`): a failed bandwidth check runs `locate` and the report
//! names the planted slow node with its Slurm exclude line; `[locate]` floors make it the
//! per-NIC stage, run even when every other check passed (and `--redact` masks its hosts in
//! every file); `--locate` with every check passed runs nothing and says so.

use crate::support::bin::{ncclbench, run, Run};
use serde_json::Value;
use std::path::{Path, PathBuf};

const HOSTS: &str = "node01,node01,node02,node02,node03,node03,node04,node04";

/// An all_reduce-only profile for 8 ranks with a busbw floor of `min_gbs` and `locate` as the
/// `[locate]` table's body (none when empty).
fn profile(dir: &Path, min_gbs: f64, locate: &str) -> PathBuf {
    let mut text = format!(
        r#"[profile]
name = "four-nodes"
description = "eight ranks on four test nodes"
typical = false
ranks = 8

[suite]
collectives = ["all_reduce"]
correctness_max_bytes = "1K"
correctness_step_factor = 32
perf_max_bytes = "64K"
perf_step_factor = 64
iters = 2
warmup_iters = 1
timeout_s = 30

[[busbw]]
collective = "all_reduce"
min_bytes = "32K"
min_gbs = {min_gbs:e}
"#
    );
    if !locate.is_empty() {
        text.push_str("\n[locate]\n");
        text.push_str(locate);
    }
    let p = dir.join("four-nodes.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn accept(prof: &Path, out: &Path, extra: &[&str], envs: &[(&str, &str)]) -> Run {
    let mut cmd = ncclbench();
    cmd.arg("accept")
        .arg("--profile")
        .arg(prof)
        .arg("--out")
        .arg(out)
        .args(["--backend", "host", "-g", "8"])
        .args(extra)
        .env("NCCLBENCH_TEST_HOSTNAMES", HOSTS);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The report's locate check.
fn locate_check(report: &Value) -> Value {
    let checks = report["checks"].as_array().unwrap();
    let found: Vec<&Value> = checks.iter().filter(|c| c["stage"] == "locate").collect();
    assert_eq!(found.len(), 1, "{checks:?}");
    found[0].clone()
}

#[test]
fn a_failed_bandwidth_check_runs_locate_and_the_report_names_the_slow_node() {
    let dir = tempfile::tempdir().unwrap();
    let prof = profile(dir.path(), 1e6, "bytes = \"256K\"\nrounds = 3\n");
    let out = dir.path().join("run");
    let r = accept(
        &prof,
        &out,
        &[],
        &[
            ("NCCLBENCH_TEST_LOCATE_SLOW_HOST", "node03"),
            ("NCCLBENCH_TEST_LOCATE_SLOW_FACTOR", "8"),
        ],
    );
    assert_eq!(r.code, Some(1), "{}{}", r.out, r.err);
    let report = json(&out.join("accept.json"));
    let c = locate_check(&report);
    assert_eq!(c["status"], "fail", "{c}");
    assert_eq!(c["measured"], "1 suspect(s): node node03", "{c}");
    assert_eq!(c["measured_value"], 1.0);
    assert!(
        c["detail"]
            .as_str()
            .unwrap()
            .starts_with("slurm: --exclude=node03;"),
        "{c}"
    );
    let run = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["stage"] == "locate")
        .unwrap()
        .clone();
    assert_eq!(run["exit_status"], 1);
    assert_eq!(
        run["files"],
        serde_json::json!(["locate/locate.txt", "locate/locate.json", "locate/hostfile"])
    );
    assert_eq!(run["argv"][1], "locate");
    let located = json(&out.join("locate/locate.json"));
    let suspects = located["suspects"].as_array().unwrap();
    assert_eq!(suspects.len(), 1, "{located}");
    assert_eq!(suspects[0]["where"], "node03");
    assert_eq!(
        std::fs::read_to_string(out.join("locate/hostfile")).unwrap(),
        "node01\nnode02\nnode04\n"
    );
    // Printed: locate's own table, then the accept table naming the suspect.
    assert!(r.out.contains("# slurm: --exclude=node03"), "{}", r.out);
    let row = r
        .out
        .lines()
        .find(|l| l.contains("no suspect node, GPU or link"))
        .unwrap_or_else(|| panic!("{}", r.out));
    assert!(
        row.contains("node node03") && row.ends_with("FAIL"),
        "{row}"
    );
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(junit.contains("node node03"), "{junit}");
}

#[test]
fn rail_floors_make_it_the_per_nic_stage_which_runs_when_every_other_check_passed() {
    let dir = tempfile::tempdir().unwrap();
    let prof = profile(
        dir.path(),
        1e-9,
        "bytes = \"64K\"\nrounds = 1\ninter_node_min_gbs = 1e6\n",
    );
    let out = dir.path().join("run");
    let r = accept(&prof, &out, &["--redact"], &[]);
    assert_eq!(r.code, Some(1), "{}{}", r.out, r.err);
    assert!(!r.out.contains("node0"), "{}", r.out);
    for f in walk(&out) {
        let body = std::fs::read_to_string(&f).unwrap_or_default();
        assert!(!body.contains("node0"), "{} names a host", f.display());
    }
    let report = json(&out.join("accept.json"));
    let perf_failed = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["stage"] != "locate" && c["status"] != "pass")
        .count();
    assert_eq!(perf_failed, 0, "{report}");
    let c = locate_check(&report);
    assert_eq!(c["status"], "fail", "{c}");
    assert_eq!(c["expected"], "none (rail pairs >= 1000000 GB/s)", "{c}");
    // Every rail group of the one round is below the floor.
    let located = json(&out.join("locate/locate.json"));
    let rails: Vec<&Value> = located["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["kind"] == "inter-node rail")
        .collect();
    assert_eq!(rails.len(), 4, "two node pairs x two rails: {located}");
    assert!(r.out.contains("the profile's [locate] floors"), "{}", r.out);
}

#[test]
fn the_locate_flag_with_every_check_passed_runs_nothing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let prof = profile(dir.path(), 1e-9, "");
    let out = dir.path().join("run");
    let r = accept(&prof, &out, &["--locate"], &[]);
    assert_eq!(r.code, Some(0), "{}{}", r.out, r.err);
    assert!(!out.join("locate").exists());
    let report = json(&out.join("accept.json"));
    assert!(
        report["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("locate stage not run")),
        "{report}"
    );
}
