//! `ncclbench compare` through the binary, on the committed inputs in `tests/data/compare/`
//! (host-backend sweeps and an edited slower copy, NCCL-annotated CSVs, nccl-tests text from
//! `tests/data/analysis/` and edited copies; see that folder's README): golden text reports,
//! exit statuses 0/1/2, the unlike-setup banner, the JSON keys, `--out` files, and both ways
//! of naming the sides. Nothing asserts timings: the inputs are fixed files.
//!
//! Regenerate the golden text after an intended change with
//! `UPDATE_GOLDEN=1 cargo test --test integration -- compare_cli::` and review the diff.

use crate::support::bin::{data, ncclbench};
use crate::support::golden;
use std::path::PathBuf;
use std::process::Output;

fn dir() -> PathBuf {
    data("compare")
}

/// Runs `ncclbench compare ARGS` in the data folder (so reports show short relative paths).
fn compare(args: &[&str]) -> Output {
    ncclbench()
        .current_dir(dir())
        .arg("compare")
        .args(args)
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json(args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let out = compare(&all);
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    (out.status.code(), doc)
}

fn golden(name: &str, args: &[&str], status: i32) {
    let out = compare(args);
    assert_eq!(
        out.status.code(),
        Some(status),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    let path = dir().join("expected").join(name);
    golden::check(&path, &text, "compare report");
}

#[test]
fn slower_copy_of_a_host_sweep_matches_the_golden_report_and_exits_1() {
    golden(
        "host_slower.txt",
        &["before_all_reduce.csv", "after_slower.csv"],
        1,
    );
}

#[test]
fn nccl_tests_text_on_other_gpus_matches_the_golden_report_with_its_banner() {
    golden(
        "nccltests_a100.txt",
        &[
            "../analysis/nccltests_2.19.6_cycles.txt",
            "nccltests_after_a100.txt",
        ],
        1,
    );
    let out = compare(&[
        "../analysis/nccltests_2.19.6_cycles.txt",
        "nccltests_after_a100.txt",
    ]);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[3].starts_with("!!! UNLIKE SETUPS"), "{text}");
    assert!(text.contains(
        "!!! GPU models differ: before NVIDIA H100 80GB HBM3; after NVIDIA A100-SXM4-80GB"
    ));
    assert!(text.contains("note: NCCL version 2.28.7 -> 2.29.3 (expected for an upgrade)"));
}

#[test]
fn identical_inputs_exit_0_with_nothing_called() {
    let out = compare(&["before_all_reduce.csv", "before_all_reduce.csv"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("no regression: 18 sizes compared: 0 slower, 0 faster, 18 unchanged"));
    assert!(!text.contains("!!!"), "no banner for one setup: {text}");
}

#[test]
fn json_report_has_the_documented_schema() {
    let (status, doc) = json(&["before_all_reduce.csv", "after_slower.csv"]);
    assert_eq!(status, Some(1));
    assert_eq!(doc["schema"], "ncclbench-compare/1");
    assert_eq!(doc["threshold_pct"], 5.0);
    assert_eq!(doc["regression"], true);
    assert_eq!(doc["unlike_setup"], false);
    assert_eq!(doc["before"]["rows_read"], 54);
    assert_eq!(doc["before"]["setup"]["backends"][0], "host");
    assert_eq!(doc["totals"]["compared"], 18);
    let curves = doc["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 2);
    for c in curves {
        for key in [
            "collective",
            "dtype",
            "op",
            "root",
            "nranks",
            "placement",
            "sizes",
            "only_before_bytes",
            "only_after_bytes",
            "latency_floor_us",
            "plateau_busbw_gbs",
            "half_perf_bytes",
            "tuning_changes_bytes",
        ] {
            assert!(c.get(key).is_some(), "curve lacks {key}");
        }
        for s in c["sizes"].as_array().unwrap() {
            for key in [
                "bytes", "before", "after", "ratio", "ci_low", "ci_high", "p_value", "q_value",
                "verdict", "basis",
            ] {
                assert!(s.get(key).is_some(), "size lacks {key}");
            }
            assert_eq!(s["before"]["samples"], 3);
        }
    }
    let slower_32k = curves[0]["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["bytes"] == 32768)
        .unwrap();
    assert_eq!(slower_32k["verdict"], "slower");
    assert!((slower_32k["ratio"].as_f64().unwrap() - 1.3).abs() < 1e-9);
}

#[test]
fn unlike_setups_are_flagged_in_json() {
    let (_, doc) = json(&[
        "../analysis/nccltests_2.19.6_cycles.txt",
        "nccltests_after_a100.txt",
    ]);
    assert_eq!(doc["unlike_setup"], true);
    let diffs = doc["differences"].as_array().unwrap();
    let find = |what: &str| diffs.iter().find(|d| d["what"] == what).unwrap();
    assert_eq!(find("gpus")["warning"], true);
    assert_eq!(find("nccl_versions")["warning"], false);
    assert!(doc["banner"][0].as_str().unwrap().starts_with("!!!"));
}

#[test]
fn different_rank_counts_have_nothing_in_common_exit_2_with_the_banner() {
    let out = compare(&["before_all_reduce.csv", "after_4ranks.csv"]);
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    assert!(
        text.contains("!!! rank counts differ: before 2; after 4"),
        "{text}"
    );
    assert!(text.contains("only after (not compared): all_reduce float sum, 4 ranks, in_place"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("nothing to compare"), "{err}");
}

#[test]
fn one_sample_per_side_uses_the_threshold_only() {
    let out = compare(&["single_before.txt", "single_after.txt"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("4K") && l.contains("slower"));
    let row = row.unwrap_or_else(|| panic!("{text}"));
    assert!(
        row.contains("1/1") && row.contains("1 sample: threshold only"),
        "{row}"
    );
    // 10% is below a 15% threshold.
    assert_eq!(
        compare(&["single_before.txt", "single_after.txt", "--threshold", "15"])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn nccl_decision_changes_are_listed_next_to_speed_changes() {
    let (status, doc) = json(&["tuning_before.csv", "tuning_after.csv"]);
    assert_eq!(status, Some(1));
    let c = &doc["curves"][0];
    assert_eq!(
        c["tuning_changes_bytes"],
        serde_json::json!([262144, 1048576])
    );
    let size = |b: u64| {
        c["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["bytes"] == b)
            .unwrap()
            .clone()
    };
    assert_eq!(size(262144)["verdict"], "slower");
    assert_eq!(size(262144)["tuning_change"], "LL128/Ring -> Simple/Ring");
    assert_eq!(size(1048576)["verdict"], "unchanged");
    let text = stdout(&compare(&["tuning_before.csv", "tuning_after.csv"]));
    assert!(text.contains("NCCL decision changed at 2 size(s): 256K, 1M; 1 of them changed speed"));
}

#[test]
fn sides_can_be_repeated_flags_or_directories() {
    let (_, doc) = json(&[
        "--before",
        "before_all_reduce.csv",
        "--before",
        "before_all_reduce.csv",
        "--after",
        "after_slower.csv",
    ]);
    assert_eq!(doc["before"]["rows_read"], 108);
    assert_eq!(doc["curves"][0]["sizes"][0]["before"]["samples"], 6);
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(dir().join("after_slower.csv"), tmp.path().join("a.csv")).unwrap();
    std::fs::write(tmp.path().join("notes.txt"), "not a result file\n").unwrap();
    let (status, doc) = json(&["before_all_reduce.csv", tmp.path().to_str().unwrap()]);
    assert_eq!(status, Some(1));
    assert_eq!(doc["after"]["rows_read"], 54);
}

#[test]
fn out_dir_gets_the_reports_and_one_chart_per_collective() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("cmp");
    let out = compare(&[
        "before_all_reduce.csv",
        "after_slower.csv",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("wrote 5 files to"));
    for f in ["compare.txt", "compare.md", "compare.json"] {
        assert!(out_dir.join(f).is_file(), "{f}");
    }
    let svg = std::fs::read_to_string(out_dir.join("all_reduce.busbw.svg")).unwrap();
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains(r#"<g class="slower">"#) && svg.contains(r#"<g class="faster">"#));
    let png = std::fs::read(out_dir.join("all_reduce.busbw.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let md = std::fs::read_to_string(out_dir.join("compare.md")).unwrap();
    assert!(md.contains("**REGRESSION: 18 sizes compared: 5 slower, 2 faster, 11 unchanged**"));
}

fn usage_error(args: &[&str], needle: &str) {
    let out = compare(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
}

#[test]
fn bad_command_lines_and_inputs_exit_2_with_one_line() {
    usage_error(&[], "BEFORE AFTER");
    usage_error(&["before_all_reduce.csv"], "BEFORE AFTER");
    usage_error(
        &[
            "before_all_reduce.csv",
            "after_slower.csv",
            "--after",
            "x.csv",
        ],
        "BEFORE AFTER",
    );
    usage_error(&["--before", "before_all_reduce.csv"], "--after");
    usage_error(&["a", "b", "c"], "c");
    usage_error(
        &[
            "before_all_reduce.csv",
            "after_slower.csv",
            "--threshold",
            "-1",
        ],
        "--threshold",
    );
    usage_error(
        &[
            "before_all_reduce.csv",
            "after_slower.csv",
            "--format",
            "yaml",
        ],
        "yaml",
    );
    usage_error(
        &["before_all_reduce.csv", "/nonexistent.csv"],
        "after: /nonexistent.csv",
    );
    usage_error(&["README.md", "after_slower.csv"], "before: README.md");
}

#[test]
fn help_describes_the_command() {
    let out = compare(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for needle in [
        "BEFORE",
        "AFTER",
        "--threshold",
        "--before",
        "--out",
        "--format",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
}
