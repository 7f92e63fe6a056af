//! nccl-tests' own `tools/analyze_perf_json.py` on ncclbench's JSON of real 2- and 4-process
//! `mpirun` runs (feature `mpi`): every per-process section (`--all`, `--straggler`,
//! `--spikes`, `--iter0`, `--nodes`, `--in-place`) has data, the consistency check passes, and
//! a process slowed for one iteration (`NCCLBENCH_TEST_SLOW_RANK`) is named the straggler.
//! The script is extracted from the nccl-tests tarball in `../shared` at test time; without
//! it (or without mpirun or python3) the test says it is skipped.
#![cfg(feature = "mpi")]

use crate::support::bin::root;
use crate::support::mpi::{have_mpirun, mpirun};
use std::path::{Path, PathBuf};
use std::process::Command;

const TARBALL: &str = "../shared/third_party/nccl-tests-2.19.6.tar.gz";

/// The script, extracted into `dir`, or `None` (with the reason printed).
fn script(dir: &Path) -> Option<PathBuf> {
    let tarball = root().join(TARBALL);
    if !tarball.exists() {
        eprintln!("skipped: {} is absent", tarball.display());
        return None;
    }
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: python3 is not installed");
        return None;
    }
    let member = "nccl-tests-2.19.6/tools/analyze_perf_json.py";
    let ok = Command::new("tar")
        .arg("xzf")
        .arg(&tarball)
        .arg("-C")
        .arg(dir)
        .arg(member)
        .status()
        .unwrap()
        .success();
    assert!(ok, "cannot extract {member} from {}", tarball.display());
    Some(dir.join(member))
}

/// A `-I 1` run of `np` processes writing `json`, with `env` exported.
fn mpirun_json(np: usize, env: &[(&str, &str)], json: &Path) {
    let mut c = mpirun(np, env);
    c.args([
        "all_reduce",
        "--backend",
        "mpi",
        "-I",
        "1",
        "-n",
        "40",
        "-w",
        "1",
    ]);
    c.args(["-b", "1K", "-e", "8K", "-f", "8", "-c", "1", "-J"])
        .arg(json);
    let o = c.output().unwrap();
    let t = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{t}");
}

fn analyze(script: &Path, json: &Path, flags: &[&str]) -> String {
    let o = Command::new("python3")
        .arg(script)
        .arg(json)
        .args(flags)
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{flags:?}: {t}");
    assert!(!t.contains("Traceback"), "{flags:?}: {t}");
    t
}

#[test]
fn nccl_tests_analysis_finds_every_process_and_the_slowed_one() {
    if !have_mpirun() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(script) = script(dir.path()) else {
        return;
    };
    for np in [2usize, 4] {
        let slowed = np - 1;
        let json = dir.path().join(format!("r{np}.json"));
        let rank = slowed.to_string();
        let env = [
            ("NCCLBENCH_TEST_SLOW_RANK", rank.as_str()),
            ("NCCLBENCH_TEST_SLOW_OP", "30"),
            ("NCCLBENCH_TEST_SLOW_MS", "400"),
        ];
        mpirun_json(np, &env, &json);
        let all = analyze(&script, &json, &["--all"]);
        assert!(all.contains(&format!("Process rows: {np}")), "{all}");
        assert!(
            all.contains("Timing key:   per_process_max_times_us"),
            "{all}"
        );
        assert!(
            all.contains("Consistency (times_us == max over process rows, OOP): PASS"),
            "{all}"
        );
        assert!(!all.contains("No per-process data available."), "{all}");
        let straggler = analyze(&script, &json, &["--straggler"]);
        assert!(
            straggler.contains("PER-PROCESS STRAGGLER ANALYSIS"),
            "{straggler}"
        );
        assert!(straggler.contains("fastest=process"), "{straggler}");
        let spikes = analyze(&script, &json, &["--spikes"]);
        assert!(
            spikes.contains(&format!("[STRAGGLER: process {slowed}]")),
            "process {slowed} was slowed:\n{spikes}"
        );
        let iter0 = analyze(&script, &json, &["--iter0"]);
        assert!(iter0.contains("ITERATION 0 WARMUP IMPACT"), "{iter0}");
        assert!(
            iter0.lines().any(|l| l.trim_start().starts_with("1024 ")),
            "{iter0}"
        );
        // One host: every process on one node, named by its host name from `devices`.
        let nodes = analyze(&script, &json, &["--nodes"]);
        let range = format!("processes  0-{:2}", np - 1);
        assert!(nodes.contains("PER-NODE ANALYSIS (1 nodes"), "{nodes}");
        assert!(nodes.contains(&range), "{range:?} in {nodes}");
        let in_place = analyze(&script, &json, &["--in-place", "--straggler"]);
        assert!(in_place.contains("STRAGGLER ANALYSIS (IP)"), "{in_place}");
        assert!(
            in_place.contains("Consistency (times_us == max over process rows, IP): PASS"),
            "{in_place}"
        );
    }
}
