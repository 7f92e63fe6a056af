//! `--prom FILE` through the binary on the host backend: the textfile holds the last cycle's
//! results exactly as the CSV has them, says whether the run completed (also when it is
//! killed), is replaced by the next run, never replaces anyone else's file, and is refused
//! with the other outputs' rules.

use crate::support::bin::{self, ncclbench, Run};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Runs `ncclbench <args>` with `--prom` and then `--csv` naming the `extra` paths given.
fn with_files(args: &str, extra: &[&Path]) -> Run {
    let mut cmd = bin::command(args);
    for (flag, p) in ["--prom", "--csv"].iter().zip(extra) {
        cmd.arg(flag).arg(p);
    }
    bin::run(&mut cmd)
}

/// The value of the one sample whose line starts with `prefix`.
fn sample(text: &str, prefix: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(lines.len(), 1, "{prefix}:\n{text}");
    lines[0].rsplit(' ').next().unwrap().to_string()
}

const ARGS: &str = "all_reduce -g 4 -b 1K -e 16K -f 4 -n 2 -w 1 -N 2 --backend host";

#[test]
fn the_textfile_holds_the_last_cycle_as_the_csv_has_it_and_says_the_run_completed() {
    let dir = tempfile::tempdir().unwrap();
    let (prom, csv) = (dir.path().join("soak.prom"), dir.path().join("r.csv"));
    let out = with_files(ARGS, &[prom.as_path(), csv.as_path()]);
    assert_eq!(out.code, Some(0), "{}", out.err);
    let stdout = out.out;
    assert!(
        stdout.contains(&format!(
            "# Writing Prometheus textfile output to {}\n",
            prom.display()
        )),
        "{stdout}"
    );
    let text = std::fs::read_to_string(&prom).unwrap();
    assert_eq!(sample(&text, "ncclbench_run_complete{"), "1");
    assert_eq!(sample(&text, "ncclbench_run_ended{"), "1");
    assert_eq!(
        sample(&text, "ncclbench_rows_measured{"),
        "6",
        "3 sizes x 2 cycles"
    );
    assert_eq!(sample(&text, "ncclbench_cycle{"), "1");
    // One series per size and placement, each the last cycle's value from the CSV, digit for digit.
    let mut r = csv::Reader::from_path(&csv).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let mut checked = 0;
    for rec in r
        .records()
        .map(Result::unwrap)
        .filter(|rec| &rec[col("cycle")] == "1")
    {
        let labels = format!(
            "{{collective=\"all_reduce\",dtype=\"float\",op=\"sum\",root=\"-1\",bytes=\"{}\",nranks=\"4\",placement=\"{}\",backend=\"host\",",
            &rec[col("bytes")],
            &rec[col("placement")]
        );
        for (metric, column) in [
            ("ncclbench_bus_bandwidth_gbs", "busbw_gbs"),
            ("ncclbench_algorithm_bandwidth_gbs", "algbw_gbs"),
            ("ncclbench_collective_exec_time_microseconds", "time_us"),
            ("ncclbench_wrong_elements", "wrong"),
        ] {
            assert_eq!(
                sample(&text, &format!("{metric}{labels}")),
                rec[col(column)],
                "{metric}"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 6);
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("ncclbench_bus_bandwidth_gbs{"))
            .count(),
        6
    );
    assert!(text.contains("file=\"soak.prom\""));

    // The next run replaces the snapshot; nothing else is left in the directory.
    let again = with_files(ARGS, &[prom.as_path()]);
    assert_eq!(again.code, Some(0));
    let announced = format!(
        "# Writing Prometheus textfile output to {}\n",
        prom.display()
    );
    assert!(again.out.contains(&announced));
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["r.csv", "r.csv.env.json", "soak.prom"]);
}

#[test]
fn another_files_textfile_is_kept_and_bad_paths_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("node.prom");
    std::fs::write(&theirs, "node_load1 0.5\n").unwrap();
    let out = with_files(
        "all_reduce -g 2 -b 1K -e 1K -n 1 -w 0 --backend host",
        &[theirs.as_path()],
    );
    assert_eq!(out.code, Some(0));
    assert_eq!(
        std::fs::read_to_string(&theirs).unwrap(),
        "node_load1 0.5\n"
    );
    assert!(dir.path().join("node.prom.0").is_file());
    assert!(out.out.contains("node.prom.0\n"));

    let is_dir = with_files("all_reduce -g 2 -b 1K -e 1K --backend host", &[dir.path()]);
    assert_eq!(is_dir.code, Some(2));
    assert!(is_dir.err.contains("--prom"));
    let same = dir.path().join("x");
    let twice = with_files(
        "all_reduce -g 2 -b 1K -e 1K --backend host",
        &[same.as_path(), same.as_path()],
    );
    assert_eq!(twice.code, Some(2));
    assert!(twice.err.contains("name the same file"));
    assert!(!same.exists());
}

#[test]
fn a_killed_soak_leaves_a_whole_textfile_that_says_it_did_not_complete() {
    let dir = tempfile::tempdir().unwrap();
    let prom = dir.path().join("soak.prom");
    let mut child = ncclbench()
        .args(
            "all_reduce -g 2 -b 1K -e 4K -f 2 -n 1 -w 0 -N 0 --backend host --prom"
                .split_whitespace(),
        )
        .arg(&prom)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let rows = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("ncclbench_rows_measured{"))
            .and_then(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
    };
    loop {
        let text = std::fs::read_to_string(&prom).unwrap_or_default();
        if rows(&text).is_some_and(|n| n >= 4) {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no rows: {text}");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&prom).unwrap();
    assert!(
        text.starts_with("# ncclbench Prometheus textfile"),
        "{text}"
    );
    assert_eq!(sample(&text, "ncclbench_run_complete{"), "0");
    assert_eq!(sample(&text, "ncclbench_run_ended{"), "0");
    assert!(rows(&text).unwrap() >= 4);
    assert!(text.ends_with('\n'));
}
