//! `ncclbench logs` through the binary: golden text (and JSON) reports of the committed sample
//! logs in tests/data/logs/ (one per NCCL log format variant, see docs/nccl-log-formats.md), the
//! JSON interface's keys and spellings, redaction that leaves no hostname, IP, PID or pointer
//! of the input in any output, the real published logs in ../shared/fixtures/real (skipped when
//! absent), and one-line errors.
//!
//! Regenerate the golden files after an intended change with
//! `UPDATE_GOLDEN=1 cargo test --test integration -- logs_cli::` and review the diff.

use crate::support::bin::{self, ncclbench};
use ncclbench::core::real_fixtures;
use std::path::PathBuf;
use std::process::{Output, Stdio};

const SAMPLES: [&str; 8] = [
    "v2.18_table_only",
    "v2.18.1_legacy",
    "v2.21_numeric",
    "v2.23_numeric_func",
    "v2.27_named_symmetric",
    "v2.30_ce_symmetric",
    "multihost_interleaved",
    "crlf_truncated",
];

fn data(name: &str) -> PathBuf {
    bin::data("logs").join(name)
}

/// Runs `ncclbench logs` from the data directory, so file labels are relative and stable.
fn logs(args: &[&str]) -> Output {
    ncclbench()
        .current_dir(data(""))
        .arg("logs")
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn golden(name: &str, got: &str) {
    crate::support::golden::check(&data("expected").join(name), got, name);
}

#[test]
fn every_sample_log_matches_its_golden_report() {
    for s in SAMPLES {
        let text = ok(&logs(&[&format!("{s}.log")]));
        golden(&format!("{s}.txt"), &text);
    }
}

#[test]
fn json_reports_match_their_golden_documents() {
    for s in [
        "multihost_interleaved",
        "v2.27_named_symmetric",
        "v2.23_numeric_func",
    ] {
        let text = ok(&logs(&[&format!("{s}.log"), "--json"]));
        golden(&format!("{s}.json"), &text);
    }
}

#[test]
fn the_json_document_has_the_documented_keys_and_nccl_spellings() {
    let files: Vec<String> = SAMPLES.iter().map(|s| format!("{s}.log")).collect();
    let mut args: Vec<&str> = files.iter().map(String::as_str).collect();
    args.push("--json");
    let doc: serde_json::Value = serde_json::from_str(&ok(&logs(&args))).unwrap();
    assert_eq!(doc["schema"], "ncclbench-logs/1");
    for key in [
        "nccl_version",
        "nccl_versions",
        "files",
        "hosts",
        "communicators",
        "env",
        "decisions",
        "model_table",
        "findings",
        "warnings",
        "nccl_warns",
    ] {
        assert!(doc.get(key).is_some(), "missing {key}");
    }
    // Several versions in these files: no single one.
    assert!(doc["nccl_version"].is_null());
    let decisions = doc["decisions"].as_array().unwrap();
    assert!(decisions.len() > 10);
    for d in decisions {
        for key in [
            "collective",
            "bytes",
            "algo",
            "proto",
            "channels_lo",
            "channels_hi",
            "count",
        ] {
            assert!(d.get(key).is_some(), "decision lacks {key}: {d}");
        }
        if let Some(a) = d["algo"].as_str() {
            assert!(
                [
                    "Tree",
                    "Ring",
                    "CollNetDirect",
                    "CollNetChain",
                    "NVLS",
                    "NVLSTree",
                    "PAT"
                ]
                .contains(&a),
                "{a}"
            );
        }
        if let Some(p) = d["proto"].as_str() {
            assert!(["LL", "LL128", "Simple"].contains(&p), "{p}");
        }
    }
    let algos: Vec<&str> = decisions
        .iter()
        .filter_map(|d| d["algo"].as_str())
        .collect();
    for a in ["Ring", "Tree", "PAT", "NVLS"] {
        assert!(algos.contains(&a), "no {a} decision");
    }
    let rules: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    for r in [
        "rdma-not-used",
        "gdr-disabled",
        "shm-not-p2p",
        "mixed-nic-links",
        "bootstrap-iface",
        "algo-proto-forced",
        "version-mismatch",
        "warn-lines",
        "decisions-differ",
    ] {
        assert!(rules.contains(&r), "rule {r} did not fire");
    }
    let kinds: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    for k in [
        "truncated_last_line",
        "unknown_algorithm",
        "old_table_layout",
    ] {
        assert!(kinds.contains(&k), "no {k} warning in {kinds:?}");
    }
}

/// Hostnames, IPs, PIDs and pointers of the multi-host sample.
const SECRETS: [&str; 13] = [
    "gpu-node-a17",
    "gpu-node-b42",
    "10.44.1.1",
    "10.44.1.2",
    "172.17.0.1",
    "48213",
    "51877",
    "48230",
    "0x5566000001",
    "0x7788000002",
    "0x7fa000000000",
    "4444555566667777",
    "1b000",
];

#[test]
fn redaction_leaves_no_identifier_in_text_or_json() {
    for args in [
        vec!["multihost_interleaved.log", "--redact"],
        vec!["multihost_interleaved.log", "--redact", "--json"],
    ] {
        let out = ok(&logs(&args));
        for s in SECRETS {
            assert!(!out.contains(s), "{s} survived {args:?}:\n{out}");
        }
        assert!(out.contains("host-"), "hosts not replaced by hashes");
    }
    // The same host gets the same token in both forms.
    let text = ok(&logs(&["multihost_interleaved.log", "--redact"]));
    let json = ok(&logs(&["multihost_interleaved.log", "--redact", "--json"]));
    let token = text
        .split_whitespace()
        .find(|w| w.starts_with("host-"))
        .unwrap()
        .trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    assert!(json.contains(token), "{token}");
}

#[test]
fn real_published_logs_parse_with_sensible_counts() {
    let Some(real) = real_fixtures::path("") else {
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&real)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    for f in &files {
        for flags in [&[][..], &["--json"], &["--redact", "--json"]] {
            let out = ncclbench().arg("logs").arg(f).args(flags).output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", f.display());
        }
    }
    let json = |name: &str| -> serde_json::Value {
        let out = ncclbench()
            .arg("logs")
            .arg(real.join(name))
            .arg("--json")
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    // 2.27.7, -g 2: 11 sizes x 45 calls, all Ring/Simple on channels 0..23, one comm.
    let d = json("006_tuning_2.27.7_a100pcie_x2_allreduce.txt");
    assert_eq!(d["nccl_version"], "2.27.7+cuda13.0");
    let decisions = d["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 11);
    for x in decisions {
        assert_eq!(
            (x["algo"].as_str(), x["proto"].as_str()),
            (Some("Ring"), Some("Simple"))
        );
        assert_eq!(
            (x["channels_lo"].as_u64(), x["channels_hi"].as_u64()),
            (Some(0), Some(23))
        );
        assert_eq!(x["comm"], "0x54fe282d32a87d85");
    }
    assert_eq!(
        decisions
            .iter()
            .map(|x| x["count"].as_u64().unwrap())
            .sum::<u64>(),
        495
    );
    assert_eq!(d["communicators"].as_array().unwrap().len(), 1);
    assert_eq!(d["model_table"].as_array().unwrap().len(), 1);
    // 2.29.7 rank-0 TUNING-only log: Broadcast decisions, the 3-block table incl. PAT.
    let d = json("008_tuning_2.29.7_rtx5090_2rank_broadcast_rank0.txt");
    let decisions = d["decisions"].as_array().unwrap();
    assert!(decisions.iter().all(|x| x["collective"] == "Broadcast"));
    assert_eq!(
        decisions
            .iter()
            .map(|x| x["count"].as_u64().unwrap())
            .sum::<u64>(),
        72
    );
    let cells = d["model_table"][0]["cells"].as_array().unwrap();
    assert!(cells
        .iter()
        .any(|c| c["algo"] == "PAT" && c["bandwidth_gbs"].as_f64() > Some(0.0)));
    // 2.22.3 over EFA, 16 ranks on 2 hosts, behind --tag-output prefixes.
    let d = json("010_init_2.22.3_p5_h100x16_efa_allreduce_tagged.txt");
    assert_eq!(d["hosts"].as_array().unwrap().len(), 2);
    let comm = &d["communicators"][0];
    assert_eq!(
        (comm["nranks"].as_u64(), comm["init_complete"].as_u64()),
        (Some(16), Some(16))
    );
    // 2.23.4 with P2P disabled: SHM paths and the finding that says so.
    let d = json("013_init_2.23.4_a100pcie_x2_p2pdisabled_allreduce.txt");
    assert!(d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["rule"] == "shm-not-p2p"));
}

#[test]
fn stdin_is_read_with_a_dash() {
    let mut child = ncclbench()
        .args(["logs", "-", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let log = std::fs::read(data("v2.27_named_symmetric.log")).unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &log).unwrap();
    let out = child.wait_with_output().unwrap();
    let doc: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(doc["files"][0]["name"], "<stdin>");
    assert_eq!(doc["nccl_version"], "2.27.7+cuda12.9");
}

#[test]
fn unreadable_input_is_one_line_and_exit_2() {
    for args in [vec!["no-such-file.log"], vec!["."]] {
        let out = logs(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("ncclbench: cannot read "), "{err}");
    }
    let out = logs(&[]);
    assert_eq!(out.status.code(), Some(2));
}
