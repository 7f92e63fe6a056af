//! `ncclbench accept` end to end through the binary. On the host backend: a profile that
//! passes (every collective, correctness and sweep, every file, JUnit XML), one that fails on
//! performance (exit 1), a baseline regression (exit 1), wrong data (exit 7) and a hang
//! (exit 4, later stages not run) made by the host backend's test switches, setup errors
//! (exit 2), and redaction of every file. On fake-nccl, the NCCL path: wrong data, a hang, an
//! asynchronous NCCL failure (exit 3) and too few GPUs (exit 2). JUnit XML is validated by
//! parsing it.

use crate::support::bin::{ncclbench, run, Run};
use crate::support::fake_nccl::fake_env;
use std::path::{Path, PathBuf};

fn accept(args: &[&str], envs: &[(&str, &str)], fake: bool) -> Run {
    let mut cmd = ncclbench();
    if fake {
        fake_env(&mut cmd);
    }
    cmd.arg("accept").args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

/// `ncclbench accept --profile PROF --out OUT --backend host -g 2 EXTRA` (two ranks).
fn on_host(prof: &Path, out: &Path, extra: &[&str]) -> Run {
    on_host_with(prof, out, extra, &[])
}

/// [`on_host`] with environment variables (the host backend's test switches).
fn on_host_with(prof: &Path, out: &Path, extra: &[&str], envs: &[(&str, &str)]) -> Run {
    let mut args = vec![
        "--profile",
        prof.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "host",
        "-g",
        "2",
    ];
    args.extend_from_slice(extra);
    accept(&args, envs, false)
}

const ALL: &str = r#"["all_reduce", "all_gather", "broadcast", "reduce_scatter", "reduce",
  "alltoall", "scatter", "sendrecv", "hypercube", "gather"]"#;

/// A small profile for 2 ranks: `min_gbs` and `max_us` decide whether performance passes.
fn profile(dir: &Path, collectives: &str, min_gbs: f64, max_us: f64) -> PathBuf {
    let text = format!(
        r#"[profile]
name = "tiny"
description = "two ranks, tiny sizes (test)"
typical = false
ranks = 2

[suite]
collectives = {collectives}
correctness_max_bytes = "1K"
correctness_step_factor = 8
perf_max_bytes = "64K"
perf_step_factor = 8
iters = 2
warmup_iters = 1
timeout_s = 20

[[busbw]]
collective = "all_reduce"
min_bytes = "8K"
min_gbs = {min_gbs:e}

[[latency]]
collective = "all_reduce"
max_bytes = "64"
max_us = {max_us:e}
"#
    );
    let p = dir.join(format!("tiny-{min_gbs}-{max_us}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

fn junit(path: &Path) -> (usize, Vec<(String, String, String)>) {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("junit.xml is XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let cases: Vec<_> = root
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let tests: usize = root.attribute("tests").unwrap().parse().unwrap();
    assert_eq!(tests, cases.len(), "testsuites/@tests counts the testcases");
    let outcomes = cases
        .iter()
        .map(|c| {
            let kind = c
                .children()
                .find(|n| n.is_element())
                .map_or("pass".to_string(), |n| {
                    format!(
                        "{}:{}",
                        n.tag_name().name(),
                        n.attribute("type").unwrap_or("")
                    )
                });
            (
                c.attribute("classname").unwrap().to_string(),
                c.attribute("name").unwrap().to_string(),
                kind,
            )
        })
        .collect();
    (tests, outcomes)
}

#[test]
fn a_passing_profile_runs_every_collective_and_writes_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let prof = profile(dir.path(), ALL, 1e-9, 1e9);
    let out = dir.path().join("run");
    let r = on_host(&prof, &out, &[]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert!(r.out.contains("# accept: PASS"), "{}", r.out);
    for coll in [
        "all_reduce",
        "all_gather",
        "broadcast",
        "reduce_scatter",
        "reduce",
        "alltoall",
        "scatter",
        "sendrecv",
        "hypercube",
        "gather",
    ] {
        for stage in ["correctness", "performance"] {
            for ext in ["txt", "csv", "csv.env.json"] {
                let f = out.join(stage).join(format!("{coll}.{ext}"));
                assert!(f.is_file(), "{} missing", f.display());
            }
        }
        let corr =
            std::fs::read_to_string(out.join("correctness").join(format!("{coll}.txt"))).unwrap();
        assert!(corr.contains("Out of bounds values : 0 OK"), "{corr}");
    }
    // -d all -o all really ran: bfloat16 prod is in the correctness table.
    let ar = std::fs::read_to_string(out.join("correctness/all_reduce.csv")).unwrap();
    assert!(ar.contains(",bfloat16,prod,"), "{ar}");
    for f in [
        "accept.txt",
        "accept.json",
        "junit.xml",
        "profile.toml",
        "environment.json",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("accept.json")).unwrap()).unwrap();
    assert_eq!(json["schema"], "ncclbench-accept/1");
    assert_eq!(json["verdict"]["passed"], true);
    assert_eq!(json["nranks"], 2);
    assert_eq!(json["runs"].as_array().unwrap().len(), 20);
    let (tests, cases) = junit(&out.join("junit.xml"));
    // 20 completion checks, 10 correctness checks, busbw and latency of all_reduce.
    assert_eq!(tests, 32, "{cases:?}");
    assert!(cases.iter().all(|c| c.2 == "pass"), "{cases:?}");
    assert!(cases
        .iter()
        .any(|c| c.0 == "ncclbench.accept.performance.all_reduce" && c.1 == "busbw >= 8 KiB"));
    // A new or empty directory only: results are never overwritten.
    let again = on_host(&prof, &out, &[]);
    assert_eq!(again.code, Some(2), "{}", again.err);
    assert!(again.err.contains("is not empty"), "{}", again.err);

    // A profile made from this healthy run names every collective and the run as baseline.
    let made = ncclbench()
        .args(["accept", "--make-profile"])
        .arg(out.join("performance"))
        .args(["--name", "healthy"])
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let made = String::from_utf8(made.stdout).unwrap();
    let value: toml::Value = toml::from_str(&made).expect("made profile is TOML");
    assert_eq!(value["profile"]["name"].as_str(), Some("healthy"));
    assert_eq!(value["busbw"].as_array().unwrap().len(), 10, "{made}");
    assert!(made.contains("[baseline]"), "{made}");

    // Against itself as baseline (generous threshold): no size slower, so it passes, with a
    // baseline check per curve.
    let out2 = dir.path().join("run2");
    let prof_loose = profile(dir.path(), r#"["all_reduce", "sendrecv"]"#, 1e-9, 1e9);
    let r = on_host(
        &prof_loose,
        &out2,
        &["--baseline", out.to_str().unwrap(), "--threshold", "100000"],
    );
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert!(r.out.contains("no slower size than baseline"), "{}", r.out);

    // A baseline 100x faster than this machine: every size is slower, exit 1.
    let fast = dir.path().join("fast");
    std::fs::create_dir(&fast).unwrap();
    let perf = std::fs::read_to_string(out.join("performance/all_reduce.csv")).unwrap();
    let mut lines = perf.lines();
    let mut faster = vec![lines.next().unwrap().to_string()];
    for l in lines {
        let mut f: Vec<String> = l.split(',').map(str::to_string).collect();
        let t: f64 = f[9].parse().unwrap();
        f[9] = format!("{}", t / 100.0);
        faster.push(f.join(","));
    }
    std::fs::write(fast.join("all_reduce.csv"), faster.join("\n") + "\n").unwrap();
    let out3 = dir.path().join("run3");
    let r = on_host(&prof_loose, &out3, &["--baseline", fast.to_str().unwrap()]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.out, r.err);
    let (_, cases) = junit(&out3.join("junit.xml"));
    assert!(
        cases
            .iter()
            .any(|c| c.0 == "ncclbench.accept.baseline.all_reduce" && c.2 == "failure:performance"),
        "{cases:?}"
    );
    assert!(
        out3.join("baseline").is_dir(),
        "the comparison report is kept"
    );
}

#[test]
fn a_profile_the_run_does_not_meet_fails_on_performance_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let prof = profile(dir.path(), r#"["all_reduce", "all_gather"]"#, 1e6, 1e-3);
    let out = dir.path().join("run");
    let r = on_host(&prof, &out, &[]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.out, r.err);
    let fail_lines: Vec<&str> = r.out.lines().filter(|l| l.contains("FAIL")).collect();
    assert!(
        fail_lines
            .iter()
            .any(|l| l.contains("busbw >= 8 KiB") && l.contains(">= 1000000 GB/s")),
        "{}",
        r.out
    );
    assert!(
        fail_lines
            .iter()
            .any(|l| l.contains("time <= 64 B") && l.contains("<= 0.001 us")),
        "{}",
        r.out
    );
    let (_, cases) = junit(&out.join("junit.xml"));
    let failed: Vec<_> = cases.iter().filter(|c| c.2 != "pass").collect();
    assert_eq!(failed.len(), 2, "{cases:?}");
    assert!(
        failed.iter().all(|c| c.2 == "failure:performance"),
        "{failed:?}"
    );
}

/// A profile for the fake NCCL backend: all_reduce and all_gather on 2 GPUs.
fn fake_profile(dir: &Path) -> PathBuf {
    profile(dir, r#"["all_reduce", "all_gather"]"#, 1e-9, 1e9)
}

fn fake_accept(dir: &Path, extra: &[&str], envs: &[(&str, &str)]) -> (Run, PathBuf) {
    let prof = fake_profile(dir);
    let out = dir.join(format!("run{}", envs.len() + extra.len()));
    let mut args = vec![
        "--profile",
        prof.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "nccl",
        "-g",
        "2",
    ];
    args.extend_from_slice(extra);
    let mut all_envs = vec![("FAKE_CUDA_DEVICES", "2")];
    all_envs.extend_from_slice(envs);
    (accept(&args.to_vec(), &all_envs, true), out)
}

#[test]
fn wrong_data_fails_correctness_with_exit_7_and_the_case_named() {
    let dir = tempfile::tempdir().unwrap();
    let (clean, _) = fake_accept(dir.path(), &[], &[]);
    assert_eq!(clean.code, Some(0), "{}\n{}", clean.out, clean.err);
    // Ops count per communicator, so every correctness stage's op 10 is corrupted: with -w 1
    // the warm-up takes the first ops, and op 10 is a verification launch of the first size.
    let (r, out) = fake_accept(dir.path(), &["-T", "30"], &[("FAKE_NCCL_CORRUPT_AT", "10")]);
    assert_eq!(r.code, Some(7), "{}\n{}", r.out, r.err);
    assert!(
        r.out
            .lines()
            .any(|l| l.contains("no wrong elements") && l.contains("FAIL")),
        "{}",
        r.out
    );
    let (_, cases) = junit(&out.join("junit.xml"));
    assert!(
        cases
            .iter()
            .any(|c| c.0 == "ncclbench.accept.correctness.all_reduce"
                && c.2 == "failure:correctness"),
        "{cases:?}"
    );
}

#[test]
fn a_hang_stops_the_suite_with_exit_4_and_reports_later_stages_as_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let (r, out) = fake_accept(dir.path(), &["-T", "2"], &[("FAKE_NCCL_HANG_AT", "3")]);
    assert_eq!(r.code, Some(4), "{}\n{}", r.out, r.err);
    assert!(r.out.contains("NOT RUN"), "{}", r.out);
    let (_, cases) = junit(&out.join("junit.xml"));
    assert!(
        cases
            .iter()
            .any(|c| c.1 == "completes within -T 2 s" && c.2 == "error:timeout"),
        "{cases:?}"
    );
    assert!(
        cases.iter().any(|c| c.2.starts_with("skipped")),
        "{cases:?}"
    );
}

#[test]
fn on_the_host_backend_wrong_data_exits_7_and_a_hang_exits_4() {
    let dir = tempfile::tempdir().unwrap();
    let prof = profile(dir.path(), r#"["all_reduce", "gather"]"#, 1e-9, 1e9);
    let out = dir.path().join("wrong");
    let r = on_host_with(&prof, &out, &[], &[("NCCLBENCH_TEST_HOST_CORRUPT_OP", "2")]);
    assert_eq!(r.code, Some(7), "{}\n{}", r.out, r.err);
    let (_, cases) = junit(&out.join("junit.xml"));
    let failed: Vec<_> = cases.iter().filter(|c| c.2 != "pass").collect();
    // Every correctness stage (its own backend, so its own launch 2) and nothing else.
    assert_eq!(failed.len(), 2, "{cases:?}");
    assert!(
        failed
            .iter()
            .all(|c| c.1 == "no wrong elements" && c.2 == "failure:correctness"),
        "{failed:?}"
    );
    let out = dir.path().join("hang");
    let r = on_host_with(
        &prof,
        &out,
        &["-T", "2"],
        &[("NCCLBENCH_TEST_HOST_STALL_OP", "3")],
    );
    assert_eq!(r.code, Some(4), "{}\n{}", r.out, r.err);
    let (_, cases) = junit(&out.join("junit.xml"));
    assert!(
        cases[0].1 == "completes within -T 2 s" && cases[0].2 == "error:timeout",
        "{cases:?}"
    );
    // The three later stages did not run.
    assert_eq!(
        cases.iter().filter(|c| c.2.starts_with("skipped")).count(),
        3 + 1 + 2,
        "gather's correctness (2 checks), all_reduce's performance (3), gather's (1): {cases:?}"
    );
}

#[test]
fn an_nccl_failure_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let (r, out) = fake_accept(
        dir.path(),
        &["-T", "10"],
        &[("FAKE_NCCL_ASYNC_ERROR_AT", "1")],
    );
    assert_eq!(r.code, Some(3), "{}\n{}", r.out, r.err);
    let (_, cases) = junit(&out.join("junit.xml"));
    assert!(cases.iter().any(|c| c.2 == "error:backend"), "{cases:?}");
}

#[test]
fn setup_errors_exit_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    // Too few GPUs for the ranks asked.
    let (r, _) = fake_accept(dir.path(), &[], &[("FAKE_CUDA_DEVICES", "1")]);
    assert_eq!(r.code, Some(2), "{}\n{}", r.out, r.err);
    // A profile for another rank count.
    let prof = fake_profile(dir.path());
    let r = accept(
        &[
            "--profile",
            prof.to_str().unwrap(),
            "--backend",
            "host",
            "-g",
            "4",
        ],
        &[],
        false,
    );
    assert_eq!(r.code, Some(2), "{}", r.err);
    assert!(
        r.err.contains("expects 2 ranks, this job has 4"),
        "{}",
        r.err
    );
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
    // An unknown profile, a broken one, a bad stage flag.
    let r = accept(&["--profile", "no-such-profile"], &[], false);
    assert_eq!(r.code, Some(2), "{}", r.err);
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[profile]\nname = \"x\"\nbogus = 1\n").unwrap();
    let r = accept(&["--profile", bad.to_str().unwrap()], &[], false);
    assert_eq!(r.code, Some(2), "{}", r.err);
    let r = accept(&["--backend", "carrier-pigeon"], &[], false);
    assert_eq!(r.code, Some(2), "{}", r.err);
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
    // Flags of accept itself: each one line naming the flag, exit 2, before anything runs.
    for (args, says) in [
        (
            &["--make-profile", "x", "--margin", "-1"][..],
            "invalid value '-1' for --margin",
        ),
        (
            &["--threshold", "-5"][..],
            "invalid value '-5' for --threshold",
        ),
        (
            &["-T", "0"][..],
            "an acceptance run always bounds its waits",
        ),
        (&["-e", "0"][..], "invalid value '0' for -e"),
        (&["--make-profile", "/no/such/run"][..], "/no/such/run"),
    ] {
        let r = accept(args, &[], false);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.err);
        assert!(r.err.contains(says), "{args:?}: {}", r.err);
        assert_eq!(r.err.lines().count(), 1, "{args:?}: {}", r.err);
    }
}

#[test]
fn shipped_profiles_are_listed() {
    let r = accept(&["--list-profiles"], &[], false);
    assert_eq!(r.code, Some(0), "{}", r.err);
    for name in ["default", "h100-nvswitch", "a100-nvswitch", "pcie4-8gpu"] {
        assert!(r.out.contains(name), "{}", r.out);
    }
}

#[test]
fn redact_leaves_no_host_name_in_any_output_file() {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let prof = profile(dir.path(), r#"["all_reduce", "gather"]"#, 1e-9, 1e9);
    let out = dir.path().join("run");
    let r = on_host(&prof, &out, &["--redact"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    let env = std::fs::read_to_string(out.join("environment.json")).unwrap();
    assert!(env.contains("\"hostname\": \"host-"), "{env}");
    let mut files = vec![];
    for sub in ["", "correctness", "performance"] {
        for e in std::fs::read_dir(out.join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 10, "{files:?}");
    let is_word = |text: &str| {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .any(|w| w == host)
    };
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            host.is_empty() || !is_word(&text),
            "{} names {host}",
            f.display()
        );
    }
    assert!(host.is_empty() || !is_word(&r.out), "{}", r.out);
}
