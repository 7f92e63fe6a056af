//! The binary end to end on the host backend: the README's benchmark command shape, the
//! nccl-tests text layout, `<collective>_perf` dispatch, CSV and JSON files, the bandwidth
//! threshold, and an interrupted run keeping every completed row.

use crate::support::bin::{ncclbench, run_args, EXE};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

/// Data lines of the text table (non-comment, non-empty).
fn data_lines(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[test]
fn all_reduce_over_four_host_ranks_prints_a_verified_nccl_tests_table() {
    let out = run_args("all_reduce -b 8 -e 64K -f 2 -g 4");
    assert_eq!(out.code, Some(0), "{}", out.err);
    let text = out.out;
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("# ncclbench version "), "{}", lines[0]);
    assert_eq!(lines[1], "# Collective test starting: all_reduce_perf");
    assert!(lines[2].starts_with("# nThread 1 nGpus 4 minBytes 8 maxBytes 65536 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0"), "{}", lines[2]);
    assert!(
        text.contains("\n# backend: host "),
        "the host backend must say so"
    );
    assert!(text.contains("#  Rank  3 Group  0 Pid "), "{text}");
    assert!(text.contains("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"));
    let rows = data_lines(&text);
    assert_eq!(rows.len(), 14, "8 B .. 64 KiB doubling is 14 sizes");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.len(), 13, "{r:?}");
        assert_eq!(r[0], (8u64 << i).to_string());
        assert_eq!(r[1], (2u64 << i).to_string());
        assert_eq!(
            (r[2].as_str(), r[3].as_str(), r[4].as_str()),
            ("float", "sum", "-1")
        );
        assert_eq!(
            (r[8].as_str(), r[12].as_str()),
            ("0", "0"),
            "#wrong must be 0: {r:?}"
        );
    }
    assert!(text.contains("# Out of bounds values : 0 OK\n"));
    assert!(text.contains("# Avg bus bandwidth    : "));
    assert!(
        text.ends_with("#\n# Collective test concluded: all_reduce_perf\n#\n\n"),
        "{text}"
    );
}

#[test]
fn a_binary_named_like_an_nccl_tests_program_runs_that_collective() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("all_gather_perf");
    std::os::unix::fs::symlink(EXE, &link).unwrap();
    let out = Command::new(&link)
        .args(["-b", "1K", "-e", "4K", "-f", "2", "-g", "2"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(text.contains("# Collective test starting: all_gather_perf\n"));
    let rows = data_lines(&text);
    assert_eq!(rows.len(), 3);
    assert_eq!(
        (
            rows[0][0].as_str(),
            rows[0][1].as_str(),
            rows[0][3].as_str()
        ),
        ("1024", "128", "none")
    );
}

#[test]
fn csv_and_json_hold_one_record_per_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let json = dir.path().join("r.json");
    let args = format!(
        "reduce_scatter -b 1K -e 16K -f 4 -g 2 -N 2 --csv {} -J {}",
        csv.display(),
        json.display()
    );
    let out = run_args(&args);
    assert_eq!(out.code, Some(0), "{}", out.err);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for col in [
        "cycle",
        "collective",
        "dtype",
        "op",
        "root",
        "nranks",
        "placement",
        "bytes",
        "count",
        "time_us",
        "algbw_gbs",
        "busbw_gbs",
        "wrong",
        "backend",
    ] {
        assert!(header.contains(&col), "CSV lacks column {col}: {header:?}");
    }
    let recs: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(recs.len(), 2 * 3 * 2, "2 cycles x 3 sizes x 2 placements");
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for r in &recs {
        assert_eq!(r.len(), header.len());
        assert_eq!(r[col("collective")], "reduce_scatter");
        assert_eq!(r[col("wrong")], "0");
        assert_eq!(r[col("backend")], "host");
        assert_eq!(r[col("nranks")], "2");
    }
    assert_eq!(recs[0][col("placement")], "out_of_place");
    assert_eq!(recs[1][col("placement")], "in_place");
    assert_eq!(recs[11][col("cycle")], "1");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["version"], 3);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 6);
    assert_eq!(results[0]["type"], "float");
    assert_eq!(results[0]["out_of_place"]["nwrong"], 0.0);
    assert_eq!(doc["out_of_bounds"]["okay"], "true");
    assert_eq!(doc["ncclbench"]["complete"], true);
}

#[test]
fn average_bandwidth_below_the_threshold_fails_with_status_7() {
    let out = ncclbench()
        .args(["all_reduce", "-b", "8", "-e", "1K", "-f", "2", "-g", "2"])
        .env("NCCL_TESTS_MIN_BW", "1000000")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7));
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.starts_with("# Avg bus bandwidth    : ") && l.ends_with(" FAILED")),
        "{text}"
    );
}

fn wait_for_lines(path: &Path, n: usize, limit: Duration) -> usize {
    let start = Instant::now();
    loop {
        let count = std::fs::read_to_string(path)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if count >= n || start.elapsed() > limit {
            return count;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_killed_run_keeps_every_completed_row_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let json = dir.path().join("r.json");
    // -N 0 runs forever; it is killed once rows have appeared.
    let mut child = ncclbench()
        .args([
            "all_reduce",
            "-b",
            "1K",
            "-e",
            "64K",
            "-f",
            "2",
            "-g",
            "2",
            "-n",
            "2",
            "-N",
            "0",
        ])
        .arg("--csv")
        .arg(&csv)
        .arg("-J")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let seen = wait_for_lines(&csv, 25, Duration::from_secs(60));
    child.kill().unwrap();
    child.wait().unwrap();
    let mut text = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert!(seen >= 25, "only {seen} CSV lines appeared");
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        csv_text.ends_with('\n'),
        "the CSV ends with a complete line"
    );
    let widths: Vec<usize> = csv_text.lines().map(|l| l.split(',').count()).collect();
    assert!(
        widths.iter().all(|w| *w == widths[0]),
        "every CSV line is complete"
    );
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap())
        .expect("the JSON file stays valid");
    let rows_in_json = doc["results"].as_array().unwrap().len();
    let placements_in_csv = widths.len() - 1;
    // The JSON holds every completed row; the CSV may hold one more placement of a row in flight.
    assert!(
        rows_in_json * 2 <= placements_in_csv && placements_in_csv <= rows_in_json * 2 + 1,
        "json {rows_in_json} rows, csv {placements_in_csv}"
    );
    assert_eq!(doc["ncclbench"]["complete"], false);
    // stdout rows were flushed as measured too.
    assert!(data_lines(&text).len() >= rows_in_json);
}

#[test]
fn an_output_file_that_cannot_be_created_stops_the_run_before_any_output() {
    for flag in ["--csv", "-J"] {
        let out = run_args(&format!(
            "all_reduce -b 1K -e 1K {flag} /nonexistent-dir/out.file"
        ));
        // Refused before the run: bad arguments, exit 2 (the exit table), not an I/O failure.
        assert_eq!(out.code, Some(2));
        let err = &out.err;
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("/nonexistent-dir/out.file"), "{err}");
        assert!(out.out.is_empty());
    }
}

#[test]
fn flags_the_host_backend_cannot_honour_are_named_in_the_header() {
    let out = run_args("all_reduce -b 1K -e 1K -R 1 -y 1");
    assert_eq!(out.code, Some(0));
    let text = out.out;
    assert!(
        text.contains("\n# -R 1 ignored: the host backend has no buffer registration\n"),
        "{text}"
    );
    assert!(
        text.contains("\n# -y 1 ignored: the host backend has no CUDA streams\n"),
        "{text}"
    );
}
