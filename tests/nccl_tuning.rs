//! `--tuning` end to end on fake-nccl: the binary sets NCCL's debug environment, the fake
//! writes its log in the format of the impersonated version (numeric 2.20-2.22, numeric with
//! the function 2.23, named with channels 2.24+, nothing per call in 2.19), and the CSV and
//! JSON fields must equal the fake's documented decision per size (per-rank bytes B < 64 KiB
//! Tree/LL, < 4 MiB Ring/LL128, else Ring/Simple; channels 0..3; model time 10 + B/1000 us)
//! across -g 2, -m 2, -G, -c, all_gather's byte convention, other ranks' lines, conflicting
//! user settings, the host backend, and an absent NVTX library.

use crate::support::bin::{self, ncclbench};
use crate::support::fake_nccl::fake_command;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// The CSV records as column -> value maps.
fn csv(path: &Path) -> Vec<HashMap<String, String>> {
    let text = std::fs::read_to_string(path).expect("CSV written");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split(','))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// The fake's decision for per-rank bytes `b`.
fn expected(b: u64) -> (&'static str, &'static str) {
    match b {
        ..65536 => ("Tree", "LL"),
        65536..4194304 => ("Ring", "LL128"),
        _ => ("Ring", "Simple"),
    }
}

/// Per-rank bytes of a CSV record (the `count` column times the type size).
fn per_rank_bytes(r: &HashMap<String, String>) -> u64 {
    let count: u64 = r["count"].parse().unwrap();
    assert_eq!(r["dtype"], "float");
    count * 4
}

/// Runs `args` with `--tuning` on version `v` and checks every CSV and JSON placement against
/// the fake's rule; returns stdout.
fn check_version(v: &str, args: &str, extra: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let full = format!("{args} --backend nccl --tuning --show-algo --csv out.csv --json out.json");
    let mut envs = vec![("FAKE_NCCL_VERSION", v)];
    envs.extend_from_slice(extra);
    let r = bin::run(fake_command(&full, &envs).current_dir(dir.path()));
    assert_eq!(r.code, Some(0), "{v} `{full}`:\n{}\n{}", r.out, r.err);
    assert!(
        !r.out.contains("NCCL INFO"),
        "NCCL lines on stdout:\n{}",
        r.out
    );
    let logs: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("nccl-debug.") && n.ends_with(".log"))
        .collect();
    assert_eq!(logs.len(), 1, "one debug file per process: {logs:?}");
    let numeric = v < "22400";
    let rows = csv(&dir.path().join("out.csv"));
    assert!(rows.len() >= 6, "{}", r.out);
    let sizes: Vec<u64> = rows.iter().map(per_rank_bytes).collect();
    // Sizes on every side of the fake's 64 KiB and 4 MiB switch points.
    assert!(sizes.iter().any(|&b| b < 65536), "{sizes:?}");
    assert!(
        sizes.iter().any(|&b| (65536..4194304).contains(&b)),
        "{sizes:?}"
    );
    assert!(sizes.iter().any(|&b| b >= 4194304), "{sizes:?}");
    for rec in &rows {
        let b = per_rank_bytes(rec);
        let (algo, proto) = expected(b);
        let ctx = format!("{v} {b} B: {rec:?}");
        assert_eq!(
            (rec["algo"].as_str(), rec["proto"].as_str()),
            (algo, proto),
            "{ctx}"
        );
        assert_eq!(rec["decision"], "single", "{ctx}");
        if numeric {
            assert_eq!(rec["channels"], "", "{ctx}");
            let t: f64 = rec["nccl_model_time_us"].parse().expect(&ctx);
            assert!((t - (10.0 + b as f64 / 1000.0)).abs() < 1e-6, "{ctx}");
        } else {
            assert_eq!(rec["channels"], "0-3", "{ctx}");
            assert_eq!(rec["nccl_model_time_us"], "", "{ctx}");
        }
    }
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out.json")).unwrap())
            .unwrap();
    for res in doc["results"].as_array().unwrap() {
        let b = res["count"].as_u64().unwrap() * 4;
        for p in ["out_of_place", "in_place"] {
            let m = &res[p];
            assert_eq!(m["algo"], expected(b).0, "{v} {b} {p}: {m}");
            assert_eq!(m["proto"], expected(b).1, "{v} {b} {p}: {m}");
            assert_eq!(m["decision"], "single");
            assert_eq!(m["calls_without_decision"], 0, "{m}");
        }
    }
    let t = &doc["ncclbench"]["tuning"];
    assert_eq!(t["decision_lines"], t["joined"], "{t}");
    assert!(
        t["op_count"]
            .as_str()
            .unwrap()
            .starts_with("opCount = seq + 0 for "),
        "{t}"
    );
    r.out
}

const SWEEP: &str = "all_reduce -g 2 -b 16K -e 8M -f 4 -n 2 -w 1 -m 2 -c 1";

#[test]
fn every_decision_format_joins_to_the_fakes_rule_per_size() {
    for v in ["22003", "22304", "22703", "23203"] {
        let out = check_version(v, SWEEP, &[]);
        assert!(out.contains("Ring/LL128"), "--show-algo column:\n{out}");
        assert!(out.contains("# NCCL tuning log "), "{out}");
    }
}

#[test]
fn graphs_and_other_ranks_lines_join_the_same() {
    let args = "all_reduce -g 2 -b 32K -e 8M -f 16 -n 3 -w 2 -G 2 -c 1";
    check_version("22703", args, &[("FAKE_NCCL_TUNING_ALL_RANKS", "1")]);
    check_version("22003", args, &[("FAKE_NCCL_TUNING_ALL_RANKS", "1")]);
}

#[test]
fn all_gather_bytes_are_total_before_2_24_and_per_rank_after() {
    for v in ["22304", "22703"] {
        check_version(v, "all_gather -g 2 -b 64K -e 16M -f 4 -n 2 -w 1 -c 1", &[]);
    }
}

#[test]
fn nccl_2_19_prints_no_per_call_lines_and_the_fields_stay_empty() {
    let dir = tempfile::tempdir().unwrap();
    let args = format!("{SWEEP} --backend nccl --tuning --csv out.csv");
    let r =
        bin::run(fake_command(&args, &[("FAKE_NCCL_VERSION", "21904")]).current_dir(dir.path()));
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert!(
        r.out.contains("prints no per-call decision lines"),
        "{}",
        r.out
    );
    for rec in csv(&dir.path().join("out.csv")) {
        for k in [
            "algo",
            "proto",
            "channels",
            "nccl_model_time_us",
            "decision",
        ] {
            assert_eq!(rec[k], "", "{k}: {rec:?}");
        }
    }
}

#[test]
fn conflicting_user_settings_are_named_and_the_users_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.%p.log");
    let file = file.to_str().unwrap();
    let args = format!("{SWEEP} --backend nccl --tuning --csv out.csv");
    let envs = [
        ("FAKE_NCCL_VERSION", "22703"),
        ("NCCL_DEBUG", "WARN"),
        ("NCCL_DEBUG_SUBSYS", "NET"),
        ("NCCL_DEBUG_FILE", file),
    ];
    let r = bin::run(fake_command(&args, &envs).current_dir(dir.path()));
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert!(
        r.out
            .contains("# --tuning: NCCL_DEBUG=WARN replaced by INFO"),
        "{}",
        r.out
    );
    assert!(r.out.contains("is set; reading that file"), "{}", r.out);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("mine.")), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("nccl-debug.")),
        "{names:?}"
    );
    for rec in csv(&dir.path().join("out.csv")) {
        assert_eq!(rec["algo"], expected(per_rank_bytes(&rec)).0, "{rec:?}");
    }
}

#[test]
fn tuning_needs_nccl_and_an_absent_nvtx_library_is_silent() {
    let dir = tempfile::tempdir().unwrap();
    let r =
        bin::run(fake_command("all_reduce --backend host --tuning", &[]).current_dir(dir.path()));
    assert_eq!(r.code, Some(2), "{}\n{}", r.out, r.err);
    assert!(r.err.contains("--tuning"), "{}", r.err);
    let r = bin::run(
        fake_command(
            "all_reduce -g 2 -b 1K -e 4K --backend nccl --nvtx",
            &[("NCCLBENCH_NVTX_LIB", "/nonexistent/libnvToolsExt.so.1")],
        )
        .current_dir(dir.path()),
    );
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert!(r.err.is_empty(), "stderr: {}", r.err);
    assert!(
        r.out.contains("# --nvtx: libnvToolsExt not found"),
        "{}",
        r.out
    );
    assert!(!r.out.contains("NCCL INFO"));
}

/// The whole path on a format with model times (2.20): `--tuning` writes NCCL's model time per
/// row, and `analyze` compares measured with model time per regime and labels each fitted step
/// with the decision change at it (or says there is none).
#[test]
fn analyze_reads_the_decisions_and_model_times_back() {
    let dir = tempfile::tempdir().unwrap();
    let r = bin::run(
        fake_command(
            "all_reduce -g 2 -b 1K -e 8M -f 4 -n 2 --tuning --csv r.csv",
            &[("FAKE_NCCL_VERSION", "22003")],
        )
        .current_dir(dir.path()),
    );
    assert_eq!(r.code, Some(0), "{}", r.err);
    let rows = csv(&dir.path().join("r.csv"));
    assert!(rows.iter().all(|r| !r["nccl_model_time_us"].is_empty()));
    let out = ncclbench()
        .arg("analyze")
        .arg(dir.path().join("r.csv"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("time/model"), "{text}");
    assert!(text.contains("Tree/LL"), "{text}");
}
