//! `ncclbench accept` under real `mpirun` (feature `mpi`): every process runs the same stages,
//! only rank 0 writes and prints, every process exits with rank 0's status; a stalled rank
//! stops the suite with exit 4 after the report is written, and the hang diagnosis still
//! names the rank; a failed bandwidth check runs the locate stage across the processes and the
//! report names the planted slow GPU. Skipped with a printed reason where mpirun is absent,
//! except on CI.
#![cfg(feature = "mpi")]

use crate::support::mpi::have_mpirun;
use ncclbench::core::collective::Collective;
use std::path::Path;
use std::process::Output;

fn mpirun(np: usize, env: &[(&str, &str)], args: &[&str]) -> Output {
    let rdv = tempfile::tempdir().unwrap();
    let fake = crate::support::fake_nccl::mpi_env(rdv.path());
    let mut all: Vec<(&str, &str)> = fake.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.extend_from_slice(env);
    let mut c = crate::support::mpi::mpirun_alone(np, &all);
    c.arg("accept").args(args);
    c.output().unwrap()
}

fn profile(dir: &Path) -> String {
    let p = dir.join("two.toml");
    std::fs::write(
        &p,
        r#"[profile]
name = "two-processes"
description = "2 processes, tiny sizes (test)"
ranks = 2

[suite]
correctness_max_bytes = "1K"
correctness_step_factor = 8
perf_max_bytes = "32K"
perf_step_factor = 8
iters = 2
warmup_iters = 1
timeout_s = 20

[[busbw]]
collective = "all_reduce"
min_bytes = "8K"
min_gbs = 1e-9
"#,
    )
    .unwrap();
    p.display().to_string()
}

#[test]
fn two_processes_run_every_stage_and_rank_0_alone_reports() {
    if !have_mpirun() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let prof = profile(dir.path());
    let out = dir.path().join("run");
    let o = mpirun(
        2,
        &[],
        &[
            "--profile",
            &prof,
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "mpi",
        ],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(stdout.matches("# accept: PASS").count(), 1, "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("accept.json")).unwrap()).unwrap();
    assert_eq!(json["nranks"], 2);
    assert_eq!(json["backend"], "mpi");
    // One correctness run and one performance sweep per collective.
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2 * Collective::ALL.len(), "{runs:?}");
    for c in Collective::ALL {
        let of = |stage: &str| {
            runs.iter()
                .filter(|r| r["collective"] == c.name() && r["stage"] == stage)
                .count()
        };
        assert_eq!(
            (of("correctness"), of("performance")),
            (1, 1),
            "{c:?}: {runs:?}"
        );
    }
}

#[test]
fn a_stalled_rank_stops_the_suite_with_exit_4_and_a_written_report() {
    if !have_mpirun() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let prof = profile(dir.path());
    let out = dir.path().join("run");
    let o = mpirun(
        2,
        &[
            ("NCCLBENCH_TEST_STALL_RANK", "1"),
            ("NCCLBENCH_TEST_STALL_OP", "30"),
        ],
        &[
            "--profile",
            &prof,
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "mpi",
            "-T",
            "3",
        ],
    );
    let all = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{all}");
    assert!(
        all.contains("# Verdict: rank 1 is behind at op 30"),
        "{all}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("accept.json")).unwrap()).unwrap();
    assert_eq!(json["verdict"]["exit_status"], 4, "{json}");
}

/// Four processes as two nodes of two GPUs, one GPU slowed: the failed bandwidth check runs
/// the locate stage across the processes, and rank 0's report names that GPU; every process
/// exits 1.
#[test]
fn a_failed_check_runs_locate_across_processes_and_names_the_slow_gpu() {
    slow_suite(
        "mpi",
        "n1,n1,n2,n2",
        ("NCCLBENCH_TEST_LOCATE_SLOW_RANK", "3"),
        "1 suspect(s): gpu n2 GPU 1 (rank 3)",
        "n2",
    );
}

/// On the NCCL backend (fake-nccl communicators spanning the processes), at 4 processes with
/// a slow GPU and 8 with a slow node.
#[test]
fn on_the_nccl_backend_accept_locates_a_slow_gpu_and_a_slow_node() {
    slow_suite(
        "nccl",
        "n1,n1,n2,n2",
        ("NCCLBENCH_TEST_LOCATE_SLOW_RANK", "3"),
        "1 suspect(s): gpu n2 GPU 1 (rank 3)",
        "n2",
    );
    slow_suite(
        "nccl",
        "n1,n1,n2,n2,n3,n3,n4,n4",
        ("NCCLBENCH_TEST_LOCATE_SLOW_HOST", "n3"),
        "1 suspect(s): node n3",
        "n3",
    );
}

/// A suite on `hosts` (one process each) whose bandwidth floor fails, with `slow` planted:
/// its locate stage must measure `want` and exclude `exclude`.
fn slow_suite(backend: &str, hosts: &str, slow: (&str, &str), want: &str, exclude: &str) {
    if !have_mpirun() {
        return;
    }
    let np = hosts.split(',').count();
    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("four.toml");
    std::fs::write(
        &prof,
        format!(
            r#"[profile]
name = "slow-processes"
description = "{np} processes as nodes of 2 (test)"
ranks = {np}

[suite]
collectives = ["all_reduce"]
correctness_max_bytes = "1K"
correctness_step_factor = 32
perf_max_bytes = "32K"
perf_step_factor = 64
iters = 2
warmup_iters = 1
timeout_s = 20

[[busbw]]
collective = "all_reduce"
min_bytes = "32K"
min_gbs = 1e6

[locate]
bytes = "1M"
"#
        ),
    )
    .unwrap();
    let out = dir.path().join("run");
    let o = mpirun(
        np,
        &[
            ("NCCLBENCH_TEST_HOSTNAMES", hosts),
            slow,
            ("NCCLBENCH_TEST_LOCATE_SLOW_FACTOR", "5"),
        ],
        &[
            "--profile",
            prof.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            backend,
        ],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let all = format!("{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{all}");
    assert_eq!(stdout.matches("# accept: FAIL").count(), 1, "{all}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("accept.json")).unwrap()).unwrap();
    let check = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["stage"] == "locate")
        .unwrap_or_else(|| panic!("{all}"))
        .clone();
    assert_eq!(check["measured"], want, "{all}");
    assert!(
        check["detail"]
            .as_str()
            .unwrap()
            .starts_with(&format!("slurm: --exclude={exclude};")),
        "{check}"
    );
}
