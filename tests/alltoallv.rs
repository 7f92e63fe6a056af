//! `alltoallv` through the binary: generated traffic (every spread) and matrix files verified
//! with every type on the host backend (-g 1/2/3/4/8) and on fake-nccl (-g 1/2/4); nccl-tests'
//! count, size and bandwidth columns; the per-rank summary; and each refusal of matrix mode
//! (bad file, -b != -e, -e too small, too few rows, too large) as one line and exit 2.

use crate::support::bin::{ncclbench, run, Run};
use crate::support::fake_nccl::fake_env;
use std::path::Path;

fn alltoallv(args: &str, envs: &[(&str, &str)], fake: bool) -> Run {
    let mut cmd = ncclbench();
    if fake {
        fake_env(&mut cmd);
    }
    cmd.arg("alltoallv").args(args.split_whitespace());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

/// Data rows of the text table, split into columns.
fn rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// A clean, verified run of every type; returns its stdout.
fn verified(args: &str, envs: &[(&str, &str)], fake: bool) -> String {
    let backend = if fake { "nccl" } else { "host" };
    let full = format!("{args} -d all -c 1 --backend {backend}");
    let r = alltoallv(&full, envs, fake);
    assert_eq!(r.code, Some(0), "{full} {envs:?}:\n{}\n{}", r.out, r.err);
    assert!(r.out.contains("# Out of bounds values : 0 OK"), "{}", r.out);
    let rows = rows(&r.out);
    let types: std::collections::BTreeSet<&str> = rows.iter().map(|r| r[2].as_str()).collect();
    assert_eq!(types.len(), 12, "{full}: {types:?}");
    for row in &rows {
        // size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
        assert_eq!(
            (row[3].as_str(), row[4].as_str()),
            ("none", "-1"),
            "{row:?}"
        );
        assert_eq!(row[8], "0", "out-of-place #wrong: {row:?}");
        assert_eq!(row[12], "N/A", "in place is not checked: {row:?}");
    }
    r.out
}

fn matrix_file(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// Unbalanced, with zeros, a self-send, values that are not multiples of 16 and one silent
/// rank; 8x8 so every -g up to 8 finds its rows.
const MATRIX: &str = "\
0 1000 30 4096 0 17 64 2000
512 0 0 0 100 0 0 16
15 4000 99 0 0 0 0 0
0 0 0 0 0 0 0 0
7000 0 16 16 0 16 16 16
1 2 3 4 5 6 7 8
300 300 300 300 300 300 300 300
0 0 0 0 0 0 0 9000
";

#[test]
fn generated_traffic_verifies_every_type_on_1_2_3_4_and_8_host_ranks() {
    for g in [1, 2, 3, 4, 8] {
        for spread in ["1", "0", "0.37"] {
            let env = [("NCCL_TESTS_ALLTOALLV_SPREAD", spread)];
            verified(&format!("-g {g} -b 1K -e 64K -f 8 -n 2 -w 1"), &env, false);
        }
    }
}

#[test]
fn matrix_traffic_verifies_every_type_on_1_2_3_4_and_8_host_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let m = matrix_file(dir.path(), "m.txt", MATRIX);
    for g in [1, 2, 3, 4, 8] {
        let env = [("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", m.as_str())];
        let out = verified(&format!("-g {g} -b 32K -e 32K -n 2 -w 1"), &env, false);
        // The count column is 0 in matrix mode, as nccl-tests prints it.
        assert!(rows(&out).iter().all(|r| r[1] == "0"), "{out}");
    }
    let env = [
        ("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", m.as_str()),
        ("NCCL_TESTS_ALLTOALLV_MATRIX_SCALE", "3.5"),
    ];
    verified("-g 8 -b 128K -e 128K -n 1 -w 0", &env, false);
}

#[test]
fn size_column_and_bandwidths_are_nccl_tests_largest_rank() {
    let dir = tempfile::tempdir().unwrap();
    // Floored to 16: row totals 96+48 / 0 / 16; column totals 16 / 96 / 48.
    let m = matrix_file(dir.path(), "m.txt", "0 100 50\n0 0 0\n16 0 0\n");
    let env = [("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", m.as_str())];
    let r = alltoallv("-g 3 -b 1K -e 1K -d int8 -c 1", &env, false);
    assert_eq!(r.code, Some(0), "{}{}", r.out, r.err);
    let row = &rows(&r.out)[0];
    assert_eq!((row[0].as_str(), row[1].as_str()), ("144", "0"), "{row:?}");
    let (time, algbw, busbw): (f64, f64, f64) = (
        row[5].parse().unwrap(),
        row[6].parse().unwrap(),
        row[7].parse().unwrap(),
    );
    let want = 144.0 / (time * 1e-6) / 1e9;
    assert!((algbw - want).abs() <= want * 0.02 + 0.01, "{row:?}");
    assert!((busbw - algbw * 2.0 / 3.0).abs() <= 0.011, "{row:?}");
    // Generated: 4 ranks of 4096 floats; the largest total is the floored distance sum.
    let r = alltoallv("-g 4 -b 16K -e 16K -c 1", &[], false);
    let row = &rows(&r.out)[0];
    // count 1024 floats per peer: totals 16384, peers 2720+5456+8192 = 16368 bytes.
    assert_eq!(
        (row[0].as_str(), row[1].as_str()),
        ("16368", "1024"),
        "{row:?}"
    );
}

#[test]
fn the_summary_lists_every_rank_after_each_result() {
    let env = [("NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY", "1")];
    let r = alltoallv("-g 3 -b 3K -e 3K -d uint8 -c 1", &env, false);
    assert_eq!(r.code, Some(0), "{}{}", r.out, r.err);
    let heads: Vec<&str> = r
        .out
        .lines()
        .filter(|l| l.starts_with("# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: "))
        .collect();
    assert_eq!(heads.len(), 2, "out-of-place and in-place:\n{}", r.out);
    assert!(
        heads[0].contains("mode=generated nranks=3 total_bytes=3072 spread=1.000 time_usec="),
        "{}",
        heads[0]
    );
    // spread 1, 3 ranks, 3072 bytes: distances 1 and 2 get 1024 and 2048.
    for rank in 0..3 {
        let line = format!("#   rank={rank} send_bytes=3072 recv_bytes=3072 alg_bw=");
        assert_eq!(r.out.matches(&line).count(), 2, "{}", r.out);
    }
    let quiet = alltoallv("-g 3 -b 3K -e 3K -d uint8 -c 1", &[], false);
    assert!(!quiet.out.contains("PRINT_SUMMARY"), "{}", quiet.out);
}

#[test]
fn alltoallv_verifies_on_fake_nccl_with_1_2_and_4_gpus() {
    let dir = tempfile::tempdir().unwrap();
    let m = matrix_file(dir.path(), "m.txt", MATRIX);
    for g in [1, 2, 4] {
        verified(&format!("-g {g} -b 1K -e 64K -f 8 -n 2 -w 1"), &[], true);
        let spread = [("NCCL_TESTS_ALLTOALLV_SPREAD", "0.5")];
        verified(&format!("-g {g} -b 4K -e 4K -n 1 -w 1"), &spread, true);
        let env = [("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", m.as_str())];
        verified(&format!("-g {g} -b 32K -e 32K -n 2 -w 1"), &env, true);
    }
}

/// Asserts exit 2 with exactly one stderr line containing every needle.
fn refused(args: &str, envs: &[(&str, &str)], needles: &[&str]) {
    let r = alltoallv(&format!("{args} --backend host"), envs, false);
    assert_eq!(r.code, Some(2), "{args} {envs:?}:\n{}\n{}", r.out, r.err);
    assert_eq!(r.err.lines().count(), 1, "one line: {:?}", r.err);
    assert!(!r.err.contains("panicked"), "{}", r.err);
    for n in needles {
        assert!(r.err.contains(n), "{n:?} missing from {:?}", r.err);
    }
}

#[test]
fn malformed_matrix_files_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| matrix_file(dir.path(), name, text);
    for (text, needle) in [
        ("1 2\n3 4\n5 6\n", "must be square"),
        ("1 2 3\n4 5\n6 7 8\n", "row 1 has 2 columns"),
        ("16 -32\n16 16\n", "is negative"),
        ("16 32\n16 abc\n", "\"abc\" is not a number"),
        ("", "is empty"),
        ("16 nan\n1 1\n", "not a finite number"),
    ] {
        let m = file("bad.txt", text);
        let env = [("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", m.as_str())];
        refused("-g 2 -b 1K -e 1K", &env, &[needle, &m]);
    }
    let missing = dir.path().join("absent.txt");
    let missing = missing.to_str().unwrap();
    let env = [("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", missing)];
    refused("-g 2 -b 1K -e 1K", &env, &["cannot read", missing]);
    let bin = file("bin.txt", "");
    std::fs::write(&bin, [0xffu8, 0xfe, 0x31]).unwrap();
    let env = [("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", bin.as_str())];
    refused("-g 2 -b 1K -e 1K", &env, &["is not text"]);
}

#[test]
fn matrix_mode_rules_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let m = matrix_file(dir.path(), "m.txt", "0 4096\n1024 0\n");
    let env = [("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", m.as_str())];
    refused("-g 2 -b 1K -e 8K", &env, &["-b equal to -e"]);
    refused(
        "-g 2 -b 2K -e 2K",
        &env,
        &["at least 4096 bytes", "increase -e"],
    );
    refused("-g 3 -b 8K -e 8K", &env, &["2x2 but this run has 3 ranks"]);
    // A matrix asking for more than the machine has: refused before any allocation.
    let huge = matrix_file(dir.path(), "huge.txt", "0 1e18\n0 0\n");
    let env = [("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", huge.as_str())];
    refused("-g 2 -b 1e18 -e 1e18", &env, &["-e"]);
    let scaled = [
        ("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", m.as_str()),
        ("NCCL_TESTS_ALLTOALLV_MATRIX_SCALE", "lots"),
    ];
    refused(
        "-g 2 -b 8K -e 8K",
        &scaled,
        &["NCCL_TESTS_ALLTOALLV_MATRIX_SCALE"],
    );
    let spread = [("NCCL_TESTS_ALLTOALLV_SPREAD", "wide")];
    refused("-g 2", &spread, &["NCCL_TESTS_ALLTOALLV_SPREAD"]);
}

#[test]
fn spread_outside_0_to_1_is_clamped_as_nccl_tests_does() {
    let at = |s: &str| {
        let r = alltoallv(
            "-g 4 -b 16K -e 16K -c 1",
            &[("NCCL_TESTS_ALLTOALLV_SPREAD", s)],
            false,
        );
        assert_eq!(r.code, Some(0), "{}", r.err);
        rows(&r.out)[0][0].clone()
    };
    assert_eq!(at("7"), at("1"));
    assert_eq!(at("-3"), at("0"));
    assert_eq!(at("0"), "16384");
}

#[test]
fn device_api_flags_keep_scripts_working_and_refuse_kernels() {
    let r = alltoallv("-g 2 -b 1K -e 1K -D 0 -V 32 --backend host", &[], false);
    assert_eq!(r.code, Some(0), "{}", r.err);
    refused(
        "-g 2 -D 2",
        &[],
        &["-D/--device_implementation", "no device-API kernels"],
    );
}

#[test]
fn analyze_compare_and_accept_know_alltoallv() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("a.csv");
    let json = dir.path().join("a.json");
    let args = format!(
        "-g 4 -b 1K -e 256K -f 4 -n 2 -w 1 -c 1 --backend host --csv {} -J {}",
        csv.display(),
        json.display()
    );
    let r = alltoallv(&args, &[], false);
    assert_eq!(r.code, Some(0), "{}", r.err);
    // analyze: alltoallv's own bus factor, (n-1)/n, for both file kinds.
    let out = dir.path().join("report");
    let mut cmd = ncclbench();
    cmd.arg("analyze")
        .arg(&csv)
        .arg(&json)
        .arg("--out")
        .arg(&out);
    let a = run(&mut cmd);
    assert_eq!(a.code, Some(0), "{}{}", a.out, a.err);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("analysis.json")).unwrap()).unwrap();
    let curves = report["curves"].as_array().expect("curves");
    assert!(!curves.is_empty(), "{report}");
    for c in curves {
        assert_eq!(c["collective"], "alltoallv", "{c}");
        assert_eq!(c["busbw_factor"].as_f64(), Some(0.75), "{c}");
    }
    // compare: a run against itself is no regression, by collective.
    let mut cmd = ncclbench();
    cmd.arg("compare").arg(&csv).arg(&csv);
    let c = run(&mut cmd);
    assert_eq!(c.code, Some(0), "{}{}", c.out, c.err);
    assert!(c.out.contains("alltoallv"), "{}", c.out);
    // accept: a profile of alltoallv alone, with a bandwidth floor it meets.
    let prof = dir.path().join("p.toml");
    std::fs::write(
        &prof,
        r#"[profile]
name = "a2av"
description = "alltoallv only (test)"
typical = false
ranks = 2

[suite]
collectives = ["alltoallv"]
correctness_max_bytes = "1K"
correctness_step_factor = 8
perf_max_bytes = "64K"
perf_step_factor = 8
iters = 2
warmup_iters = 1
timeout_s = 20

[[busbw]]
collective = "alltoallv"
min_bytes = "8K"
min_gbs = 1e-9
"#,
    )
    .unwrap();
    let mut cmd = ncclbench();
    cmd.arg("accept")
        .arg("--profile")
        .arg(&prof)
        .arg("--out")
        .arg(dir.path().join("acc"));
    cmd.args(["--backend", "host", "-g", "2"]);
    let a = run(&mut cmd);
    assert_eq!(a.code, Some(0), "{}{}", a.out, a.err);
    assert!(
        a.out.contains("# accept: PASS") && a.out.contains("alltoallv"),
        "{}",
        a.out
    );
}

#[test]
fn nccl_gets_one_grouped_send_and_recv_per_nonempty_segment() {
    // 4 KiB of int8 on 4 GPUs, spread 1: rank r sends rank (r + d) mod 4 the floored
    // d x 4096/6 bytes (d = 1, 2, 3: 672, 1360, 2048) and nothing to itself.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace");
    let env = [("FAKE_NCCL_TRACE", path.to_str().unwrap())];
    verified_one("-g 4 -b 4K -e 4K -n 1 -w 0 -d int8", &env);
    let trace = std::fs::read_to_string(&path).unwrap();
    let field = |l: &str, k: &str| -> String {
        l.split('\t')
            .find_map(|f| f.strip_prefix(k).and_then(|r| r.strip_prefix('=')))
            .unwrap_or_else(|| panic!("no {k} in {l}"))
            .to_string()
    };
    let want = |d: usize| [0, 672, 1360, 2048][d].to_string();
    let mut seen = 0;
    for l in trace.lines() {
        let name = l.split('\t').next().unwrap();
        if name != "ncclSend" && name != "ncclRecv" {
            continue;
        }
        seen += 1;
        let rank: usize = field(l, "rank").parse().unwrap();
        let peer: usize = field(l, "peer").parse().unwrap();
        assert_ne!(rank, peer, "no empty self segment is posted: {l}");
        let d = if name == "ncclSend" {
            (peer + 4 - rank) % 4
        } else {
            (rank + 4 - peer) % 4
        };
        assert_eq!(field(l, "count"), want(d), "{l}");
        assert_eq!(field(l, "group"), "1", "inside one group: {l}");
    }
    // Per launch, 4 ranks x 3 peers x (send + recv); at least the check and one timed launch.
    assert!(seen >= 2 * 24 && seen % 24 == 0, "{seen} calls");
}

/// A verified run of one type on fake-nccl.
fn verified_one(args: &str, envs: &[(&str, &str)]) {
    let r = alltoallv(&format!("{args} -c 1 --backend nccl"), envs, true);
    assert_eq!(r.code, Some(0), "{args}:\n{}\n{}", r.out, r.err);
    assert!(r.out.contains("# Out of bounds values : 0 OK"), "{}", r.out);
}
