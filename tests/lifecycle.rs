//! How a run ends, through the binary: a closed stdout stops it out loud (non-zero, the JSON
//! marked incomplete); an interrupted `accept` still writes its report with the stages not
//! run and the signal named, and `--force` reuses its directory; `accept` checks its inputs
//! before the first stage and says first what the host backend's bounded suite runs; rank
//! counts the machine cannot start are one line; a usage error under mpirun is printed once.

use crate::support::bin::{ncclbench, run};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Reads `child`'s stdout up to and including the first line holding `marker`.
fn read_until(child: &mut Child, marker: &str) -> (String, BufReader<std::process::ChildStdout>) {
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "ended before {marker:?}: {seen}"
        );
        seen.push_str(&line);
        if line.contains(marker) {
            return (seen, out);
        }
    }
}

/// Waits for `child` (at most `limit`), returning its status code and stderr.
fn finish(mut child: Child, limit: Duration) -> (Option<i32>, String) {
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn sigint(child: &Child) {
    // SAFETY: signalling the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
}

#[test]
fn a_closed_stdout_stops_the_run_with_a_status_and_an_incomplete_json() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut child = ncclbench()
        .args([
            "all_reduce",
            "--backend",
            "host",
            "-g",
            "2",
            "-b",
            "8",
            "-e",
            "1M",
        ])
        .args(["-f", "2", "-w", "0", "-n", "1", "-N", "0", "-J"])
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `| head -18`: the reader takes some lines and goes away.
    let (seen, out) = read_until(&mut child, "         8  ");
    drop(out);
    let (code, err) = finish(child, Duration::from_secs(60));
    assert_eq!(code, Some(1), "{seen}{err}");
    assert!(err.contains("broken pipe"), "{err}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["ncclbench"]["complete"], Value::Bool(false));
}

/// A two-collective suite whose performance stage takes seconds (`-e 128M` on the host).
fn slow_profile(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("slow.toml");
    std::fs::write(
        &p,
        r#"[profile]
name = "slow"
description = "a performance stage long enough to interrupt (test)"
typical = false

[suite]
collectives = ["all_reduce", "all_gather"]
correctness_max_bytes = "1K"
correctness_step_factor = 8
perf_step_factor = 2
iters = 20
warmup_iters = 1
timeout_s = 60
"#,
    )
    .unwrap();
    p
}

#[test]
fn an_interrupted_accept_writes_its_report_and_force_reuses_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let prof = slow_profile(dir.path());
    let out = dir.path().join("acc");
    let args = |extra: &[&str]| {
        let mut cmd = ncclbench();
        cmd.arg("accept")
            .arg("--profile")
            .arg(&prof)
            .arg("--out")
            .arg(&out)
            .args(["--backend", "host", "-g", "2"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    };
    let mut child = args(&["-e", "128M"]).spawn().unwrap();
    let (_, rest) = read_until(&mut child, "# correctness all_gather");
    std::thread::sleep(Duration::from_millis(500));
    sigint(&child);
    drop(rest);
    let (code, err) = finish(child, Duration::from_secs(90));
    assert_eq!(code, Some(130), "{err}");
    for f in ["accept.txt", "accept.json", "junit.xml"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let report = std::fs::read_to_string(out.join("accept.json")).unwrap();
    assert!(report.contains("interrupted by SIGINT"), "{report}");
    assert!(
        report.contains("not_run") || report.contains("not run"),
        "{report}"
    );
    // The directory is not empty: refused without --force, reused with it.
    let r = run(&mut args(&["-e", "1K"]));
    assert_eq!(r.code, Some(2), "{}", r.err);
    assert!(r.err.contains("--force"), "{}", r.err);
    let r = run(&mut args(&["-e", "1K", "--force"]));
    assert_eq!(r.code, Some(0), "{}{}", r.out, r.err);
    let report = std::fs::read_to_string(out.join("accept.json")).unwrap();
    assert!(!report.contains("interrupted"), "{report}");
}

#[test]
fn accept_checks_baselines_and_make_profile_flags_before_any_stage() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("acc");
    let r = run(ncclbench()
        .args(["accept", "--backend", "host", "--baseline"])
        .arg(dir.path().join("missing.csv"))
        .arg("--out")
        .arg(&out));
    assert_eq!(r.code, Some(2), "{}", r.err);
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
    assert!(
        r.err.contains("--baseline") && r.err.contains("missing.csv"),
        "{}",
        r.err
    );
    assert!(!r.out.contains("# correctness"), "a stage ran: {}", r.out);
    assert!(!out.join("correctness").exists());
    for flags in [["--name", "x"], ["--margin", "5"]] {
        let r = run(ncclbench().arg("accept").args(flags));
        assert_eq!(r.code, Some(2), "{}", r.err);
        assert!(r.err.contains("only with --make-profile"), "{}", r.err);
    }
}

#[test]
fn the_host_default_suite_is_bounded_and_says_so_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = ncclbench()
        .args(["accept", "--backend", "host", "--out"])
        .arg(dir.path().join("acc"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (seen, rest) = read_until(&mut child, "# suite:");
    sigint(&child);
    drop(rest);
    let _ = finish(child, Duration::from_secs(60));
    let line = seen.lines().last().unwrap();
    assert!(line.contains("correctness stage (8 B..1 MiB"), "{line}");
    assert!(line.contains("performance stage (8 B..64 MiB"), "{line}");
    assert!(line.contains("about a minute"), "{line}");
    assert!(
        seen.lines().count() <= 3,
        "not among the first lines: {seen}"
    );
}

#[test]
fn rank_counts_beyond_the_machine_are_one_line_not_a_panic() {
    for ranks in [["-g", "20000"], ["-t", "1000"]] {
        let r = run(ncclbench()
            .args(["all_reduce", "--backend", "host", "-b", "8", "-e", "8"])
            .args(ranks)
            .args(if ranks[0] == "-t" {
                ["-g", "1000"]
            } else {
                ["-n", "1"]
            }));
        assert_eq!(r.code, Some(2), "{}", r.err);
        assert_eq!(r.err.lines().count(), 1, "{}", r.err);
        assert!(r.err.contains("cannot start; use fewer"), "{}", r.err);
    }
}

#[test]
fn a_usage_error_under_mpirun_is_printed_once() {
    if !crate::support::mpi::have_mpirun() {
        return;
    }
    let o = crate::support::mpi::mpirun(3, &[])
        .args(["all_reduce", "-b", "0", "-f", "2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("ncclbench: ").count(), 1, "{err}");
    assert_ne!(o.status.code(), Some(0), "{err}");
}
