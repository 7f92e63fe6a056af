//! `ncclbench locate` in one process: the host backend (ranks as threads) playing four nodes,
//! with a planted slow node named in the table, `locate.json`, the Slurm exclude line and the
//! hostfile; fake-nccl with `-g 4` taking the sub-communicator path (`ncclCommSplit`, and
//! new communicators from unique ids where the library predates it), traced call by call;
//! and the command's usage errors.

use crate::support::bin::{ncclbench, run};
use crate::support::fake_nccl::fake_env;
use serde_json::Value;
use std::path::Path;

fn doc(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("locate.json")).unwrap()).unwrap()
}

fn whats(d: &Value) -> Vec<(String, String)> {
    d["suspects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["what"].as_str().unwrap().into(),
                s["where"].as_str().unwrap().into(),
            )
        })
        .collect()
}

#[test]
fn a_slow_node_of_four_on_the_host_backend_is_named_excluded_and_left_out_of_the_hostfile() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("loc");
    let r = run(ncclbench()
        .args([
            "locate",
            "--backend",
            "host",
            "-g",
            "8",
            "-b",
            "256K",
            "-w",
            "3",
            "-n",
            "5",
        ])
        .arg("--out")
        .arg(&out)
        .env(
            "NCCLBENCH_TEST_HOSTNAMES",
            "node01,node01,node02,node02,node03,node03,node04,node04",
        )
        .env("NCCLBENCH_TEST_LOCATE_SLOW_HOST", "node03")
        .env("NCCLBENCH_TEST_LOCATE_SLOW_FACTOR", "8"));
    assert_eq!(r.code, Some(1), "{}{}", r.out, r.err);
    let d = doc(&out);
    assert_eq!(
        whats(&d),
        vec![("node".into(), "node03".into())],
        "{}",
        r.out
    );
    assert_eq!(d["schema"], "ncclbench-locate/1");
    assert_eq!(d["nranks"], 8);
    assert_eq!(d["status"], 1);
    assert_eq!(d["slurm_exclude"], "--exclude=node03");
    assert!(r.out.contains("# slurm: --exclude=node03"), "{}", r.out);
    assert!(r.out.contains("  node  node03 "), "{}", r.out);
    let hostfile = std::fs::read_to_string(out.join("hostfile")).unwrap();
    assert_eq!(hostfile, "node01\nnode02\nnode04\n");
    let text = std::fs::read_to_string(out.join("locate.txt")).unwrap();
    assert!(text.contains("# locate: 1 suspect"), "{text}");
    // Three rail rounds: every node met every other once.
    let rails = d["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["kind"] == "inter-node rail")
        .count();
    assert!(rails >= 12, "{rails} rail groups");
}

/// `ncclbench locate` on fake-nccl with `-g 4` as two nodes, and its call trace.
fn fake_locate(version: Option<&str>) -> (crate::support::bin::Run, Vec<String>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let (out, trace) = (dir.path().join("loc"), dir.path().join("trace"));
    let mut cmd = ncclbench();
    fake_env(&mut cmd)
        .args([
            "locate", "-g", "4", "-b", "64K", "-w", "2", "-n", "3", "-T", "30",
        ])
        .arg("--out")
        .arg(&out)
        .env("FAKE_NCCL_TRACE", &trace)
        .env("NCCLBENCH_TEST_HOSTNAMES", "a,a,b,b")
        .env("NCCLBENCH_TEST_LOCATE_SLOW_RANK", "3")
        .env("NCCLBENCH_TEST_LOCATE_SLOW_FACTOR", "8");
    if let Some(v) = version {
        cmd.env("FAKE_NCCL_VERSION", v);
    }
    let r = run(&mut cmd);
    let t = std::fs::read_to_string(&trace)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let d = std::fs::read_to_string(out.join("locate.json"))
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null);
    (r, t, d)
}

fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split('\t')
        .find_map(|f| f.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
}

#[test]
fn on_fake_nccl_four_gpus_split_by_colour_and_the_slow_gpu_is_named() {
    let (r, t, d) = fake_locate(None);
    assert_eq!(r.code, Some(1), "{}{}", r.out, r.err);
    assert!(r.out.contains("backend nccl"), "{}", r.out);
    assert_eq!(
        whats(&d),
        vec![("gpu".into(), "b GPU 1 (rank 3)".into())],
        "{}",
        r.out
    );
    let splits: Vec<&String> = t
        .iter()
        .filter(|l| l.starts_with("ncclCommSplit\t"))
        .collect();
    // Intra-node (a: 0,1 / b: 2,3), then one rail round (rail 0: 0,2 / rail 1: 1,3), every
    // rank keyed by its global rank and every split inside a group.
    let colours: Vec<(&str, &str, &str)> = splits
        .iter()
        .map(|l| (field(l, "rank"), field(l, "color"), field(l, "key")))
        .collect();
    assert_eq!(
        colours,
        [
            ("0", "0", "0"),
            ("1", "0", "1"),
            ("2", "1", "2"),
            ("3", "1", "3"),
            ("0", "0", "0"),
            ("1", "1", "1"),
            ("2", "0", "2"),
            ("3", "1", "3"),
        ],
        "{t:?}"
    );
    assert!(
        splits.iter().all(|l| field(l, "group") == "1"),
        "{splits:?}"
    );
    // The groups' collectives ran on two-rank communicators.
    let ar: Vec<&String> = t
        .iter()
        .filter(|l| l.starts_with("ncclAllReduce\t"))
        .collect();
    assert!(
        !ar.is_empty() && ar.iter().all(|l| field(l, "nranks") == "2"),
        "{ar:?}"
    );
    let destroyed = t
        .iter()
        .filter(|l| l.starts_with("ncclCommDestroy\t"))
        .count();
    assert_eq!(
        destroyed,
        4 + 4 + 4,
        "the world's four and both rounds' four"
    );
}

#[test]
fn before_nccl_2_18_the_groups_get_communicators_from_new_ids() {
    let (r, t, d) = fake_locate(Some("21700"));
    assert_eq!(r.code, Some(1), "{}{}", r.out, r.err);
    assert_eq!(
        whats(&d),
        vec![("gpu".into(), "b GPU 1 (rank 3)".into())],
        "{}",
        r.out
    );
    assert!(!t.iter().any(|l| l.starts_with("ncclCommSplit\t")), "{t:?}");
    let two: Vec<&String> = t
        .iter()
        .filter(|l| l.starts_with("ncclCommInitRank") && field(l, "nranks") == "2")
        .collect();
    assert_eq!(two.len(), 8, "two rounds of two pairs: {t:?}");
}

#[test]
fn usage_errors_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x"), "").unwrap();
    for (args, env, says) in [
        ("locate --collective alltoall", None, "--collective"),
        ("locate -T 0", None, "-T"),
        ("locate --rounds 0", None, "--rounds"),
        ("locate -b 0", None, "-b"),
        (
            "locate --backend host",
            Some(("NCCL_TESTS_SPLIT", "MOD 2")),
            "NCCL_TESTS_SPLIT",
        ),
    ] {
        let mut cmd = ncclbench();
        cmd.args(args.split_whitespace()).current_dir(dir.path());
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        let r = run(&mut cmd);
        assert_eq!(r.code, Some(2), "{args}: {}", r.err);
        assert_eq!(r.err.lines().count(), 1, "{args}: {}", r.err);
        assert!(r.err.contains(says), "{args}: {}", r.err);
    }
    let r = run(ncclbench()
        .args(["locate", "--backend", "host", "-g", "2", "--out"])
        .arg(dir.path()));
    assert_eq!(r.code, Some(2), "{}", r.err);
    assert!(r.err.contains("is not empty"), "{}", r.err);
}
