//! The production report's other inputs through the binary: Prometheus snapshots (plain and
//! gzip) held against the benchmark at their bucket's midpoint, a dump without `--baseline`,
//! and the one-line errors for inputs of both kinds, swapped inputs, `--peak-gbs` and a
//! baseline with no results.

use super::{analyze, bench, dump, group, job, ok_json, stderr};
use serde_json::Value;

#[test]
fn prometheus_snapshots_are_bucketed_groups_held_against_the_bucket_midpoint() {
    let b = bench();
    let dir = tempfile::tempdir().unwrap();
    let a = job::prom_snapshot("node-a", [0, 1], [11.5, 12.25], [700.0, 650.0]);
    let bb = job::prom_snapshot("node-b", [2, 3], [3.5, 12.0], [2300.0, 660.0]);
    std::fs::write(dir.path().join("node-a.prom"), a).unwrap();
    std::fs::write(dir.path().join("node-b.prom.gz"), job::gz(&bb)).unwrap();
    let doc = ok_json(&analyze(
        &[dir.path()],
        &["--baseline", b.ar.to_str().unwrap(), "--format", "json"],
    ));
    assert_eq!(doc["inputs"]["files"], 2);
    let g = group(&doc, "DP Group 0", "all_reduce", 4 << 20);
    assert_eq!(
        (&g["bytes_hi"], &g["count"]),
        (&Value::from(5u64 << 20), &Value::from(4))
    );
    assert_eq!(g["busbw_gbs"]["p5"], 3.5);
    assert_eq!(g["busbw_gbs"]["p50"], 11.5);
    assert_eq!(g["busbw_gbs"]["p95"], 12.25);
    assert_eq!(g["total_time_us"], 700.0 + 650.0 + 2300.0 + 660.0);
    assert_eq!(g["algo_proto"][0]["value"], "Ring_ll");
    assert_eq!(g["algo_proto"][0]["count"], 4);
    assert!(g["baseline"]["busbw_gbs"].as_f64().unwrap() > 0.0, "{g}");
    let send = group(&doc, "PP", "send", 256 << 10);
    assert_eq!(send["count"], 4);
    let notes = doc["notes"].to_string();
    assert!(notes.contains("come from Prometheus snapshots"), "{notes}");
}

#[test]
fn without_a_baseline_the_job_is_described_and_bad_combinations_are_one_line() {
    let b = bench();
    let (dir, _, _) = dump();
    let doc = ok_json(&analyze(&[dir.path()], &["--format", "json"]));
    assert!(doc["total_lost_us"].is_null());
    assert!(doc["causes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["kind"] == "slow_rank" && c["rank"] == 3));
    assert!(doc["notes"].to_string().contains("no --baseline"));

    let mixed = analyze(&[dir.path(), b.ar.as_path()], &[]);
    assert_eq!(mixed.status.code(), Some(2));
    let e = stderr(&mixed);
    assert!(
        e.contains("is NCCL Inspector output and") && e.contains("--baseline"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    let swapped = analyze(
        &[b.ar.as_path()],
        &["--baseline", dir.path().to_str().unwrap()],
    );
    assert_eq!(swapped.status.code(), Some(2));
    assert!(
        stderr(&swapped).contains("not NCCL Inspector output"),
        "{}",
        stderr(&swapped)
    );
    let peak = analyze(&[dir.path()], &["--peak-gbs", "100"]);
    assert_eq!(peak.status.code(), Some(2));
    assert!(stderr(&peak).contains("--peak-gbs applies to benchmark curves"));
    let empty = tempfile::tempdir().unwrap();
    let none = analyze(
        &[dir.path()],
        &["--baseline", empty.path().to_str().unwrap()],
    );
    assert_eq!(none.status.code(), Some(2), "{}", stderr(&none));
}
