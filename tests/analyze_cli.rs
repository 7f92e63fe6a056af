//! `ncclbench analyze` through the binary: a golden report on committed host-backend sweeps
//! (one CSV, one JSON), the JSON interface's required keys, the files `--out` writes, and the
//! one-line errors for bad input.
//!
//! Regenerate the golden text after an intended change with
//! `UPDATE_GOLDEN=1 cargo test --test integration -- analyze_cli::` and review the diff.

use crate::support::bin::{self, ncclbench};
use crate::support::golden;
use std::path::PathBuf;
use std::process::Output;

fn data(name: &str) -> PathBuf {
    bin::data("analysis").join(name)
}

fn analyze(args: &[&str]) -> Output {
    ncclbench().arg("analyze").args(args).output().unwrap()
}

fn sweeps() -> [String; 2] {
    ["host_sweep_all_reduce.csv", "host_sweep_all_gather.json"]
        .map(|f| data(f).display().to_string())
}

#[test]
fn the_report_on_committed_host_sweeps_matches_the_golden_text() {
    let [a, b] = sweeps();
    let out = analyze(&[&a, &b]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let golden = data("expected/host_sweeps.txt");
    golden::check(&golden, &text, "analysis report");
}

#[test]
fn the_json_report_has_the_documented_keys_for_every_curve() {
    let [a, b] = sweeps();
    let out = analyze(&[&a, &b, "--format", "json", "--peak-gbs", "10"]);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "ncclbench-analysis/1");
    // 20 sizes x 2 placements x 2 cycles + 13 sizes x 2 placements.
    assert_eq!(doc["rows_read"], 20 * 2 * 2 + 13 * 2);
    assert_eq!(doc["rows_skipped"], 0);
    let curves = doc["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 4);
    for c in curves {
        for key in [
            "collective",
            "dtype",
            "op",
            "nranks",
            "placement",
            "rows",
            "latency_floor_us",
            "plateau_busbw_gbs",
            "half_perf_bytes",
            "sat90_bytes",
            "regimes",
            "switch_points_bytes",
        ] {
            assert!(c.get(key).is_some(), "curve lacks {key}: {c}");
        }
        assert!(c["latency_floor_us"].as_f64().unwrap() > 0.0);
        assert!(
            c["efficiency_pct"].as_f64().is_some(),
            "--peak-gbs gives an efficiency"
        );
        for r in c["regimes"].as_array().unwrap() {
            for key in ["from_bytes", "to_bytes", "alpha_us", "busbw_gbs"] {
                assert!(r.get(key).is_some(), "regime lacks {key}");
            }
        }
    }
    assert_eq!(curves[0]["collective"], "all_gather");
    assert_eq!(curves[2]["nranks"], 4);
}

#[test]
fn out_dir_gets_reports_and_both_charts_of_every_curve_as_svg_and_png() {
    let [a, _] = sweeps();
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("report");
    let out = analyze(&[
        &a,
        "--out",
        out_dir.to_str().unwrap(),
        "--format",
        "markdown",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in ["report.md", "report.html", "analysis.json", "index.md"] {
        assert!(out_dir.join(f).is_file(), "{f} missing");
    }
    for placement in ["out_of_place", "in_place"] {
        for chart in ["busbw", "time"] {
            let stem = format!("all_reduce-float-sum-n4-{placement}.{chart}");
            let svg = std::fs::read_to_string(out_dir.join(format!("{stem}.svg"))).unwrap();
            assert!(
                svg.starts_with("<svg") || svg.starts_with("<?xml"),
                "{stem}.svg"
            );
            let png = std::fs::read(out_dir.join(format!("{stem}.png"))).unwrap();
            assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{stem}.png");
        }
    }
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert_eq!(
        html.matches("<svg").count(),
        4,
        "two charts per curve inline"
    );
}

fn usage_error(args: &[&str], needle: &str) {
    let out = analyze(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
}

#[test]
fn bad_inputs_are_one_line_errors_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad_json = dir.path().join("broken.json");
    std::fs::write(&bad_json, "{\"version\": 3, \"results\": [\n{\"size\": }\n").unwrap();
    usage_error(&[bad_json.to_str().unwrap()], "broken.json:");
    let junk = dir.path().join("notes.txt");
    std::fs::write(&junk, "hello\nworld\n").unwrap();
    usage_error(&[junk.to_str().unwrap()], "notes.txt");
    usage_error(&["/nonexistent/results.csv"], "/nonexistent/results.csv");
    usage_error(&[], "FILE");
    let [a, _] = sweeps();
    usage_error(&[&a, "--peak-gbs", "-3"], "--peak-gbs");
    usage_error(&[&a, "--format", "yaml"], "yaml");
}

/// `--nccl-log`: the findings of the run's NCCL log are reported after the curves, with the
/// rule id and the evidence line, in text and as a `nccl_log_findings` list in JSON (the
/// report's own keys unchanged before it).
#[test]
fn nccl_log_findings_are_reported_next_to_the_curves() {
    let log = bin::data("logs/v2.27_named_symmetric.log");
    let log = log.to_str().unwrap();
    let [a, _] = sweeps();
    let text = analyze(&[&a, "--nccl-log", log]);
    assert_eq!(text.status.code(), Some(0));
    let out = String::from_utf8_lossy(&text.stdout);
    let at = out.find("NCCL log findings (").expect("findings section");
    assert!(out[..at].contains("rows read"), "after the curve report");
    let json = analyze(&[&a, "--format", "json", "--nccl-log", log]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("valid JSON");
    let list = v["nccl_log_findings"].as_array().expect("list");
    assert!(!list.is_empty(), "{out}");
    for f in list {
        assert!(f["rule"].is_string() && f["evidence"].is_array(), "{f}");
        assert!(
            out.contains(f["rule"].as_str().unwrap()),
            "text names rule {}",
            f["rule"]
        );
    }
    assert_eq!(v["schema"], "ncclbench-analysis/1");
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    let r = analyze(&[&a, "--nccl-log", log, "--out", out_dir]);
    assert_eq!(r.status.code(), Some(0));
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(
        md.contains("## NCCL log findings ("),
        "report.md carries the findings"
    );
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("analysis.json")).unwrap())
            .unwrap();
    assert_eq!(j["nccl_log_findings"], v["nccl_log_findings"]);
    usage_error(&[&a, "--nccl-log", "/nonexistent/nccl.log"], "nccl.log");
}
