//! One redaction policy for secrets across every subcommand that takes `--redact` (a
//! benchmark run, `env`, `logs`, `accept`, `locate`): a variable whose name holds any of
//! [`SECRET_WORDS`] never shows its value in any stream or file they write, whether the value
//! comes from the environment or from an NCCL log's `NAME set by environment to VALUE` line.
//! Without `--redact` the same values do show, so the check can fail.

use crate::support::bin::ncclbench;
use ncclbench::core::redact::SECRET_WORDS;
use std::path::Path;
use std::process::Command;

/// `(name, value)` of one secret-looking variable per secret word.
fn secrets() -> Vec<(String, String)> {
    SECRET_WORDS
        .iter()
        .map(|w| {
            (
                format!("NCCL_TEST_{w}"),
                format!("s3cret-{}", w.to_lowercase()),
            )
        })
        .collect()
}

/// An NCCL log whose lines set every secret by environment, as NCCL prints them.
fn log_with_secrets(dir: &Path) -> std::path::PathBuf {
    let mut text = String::from("node1:11:11 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n");
    for (name, value) in secrets() {
        text.push_str(&format!(
            "node1:11:11 [0] NCCL INFO {name} set by environment to {value}\n"
        ));
    }
    text.push_str("node1:11:12 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 18000 commId 0x2 - Init COMPLETE\n");
    let p = dir.join("nccl.log");
    std::fs::write(&p, text).unwrap();
    p
}

const PROFILE: &str = r#"[profile]
name = "tiny"
description = "two ranks, tiny sizes (test)"
typical = false
ranks = 2

[suite]
collectives = ["all_reduce"]
correctness_max_bytes = "1K"
correctness_step_factor = 8
perf_max_bytes = "8K"
perf_step_factor = 8
iters = 2
warmup_iters = 1
timeout_s = 20
"#;

/// Every subcommand with `--redact` (or without), each writing under its own directory.
fn every_subcommand(dir: &Path, redact: bool) -> Vec<(String, Command, std::path::PathBuf)> {
    let log = log_with_secrets(dir);
    let prof = dir.join("p.toml");
    std::fs::write(&prof, PROFILE).unwrap();
    let mut all = Vec::new();
    let mut add = |name: &str, args: &str, extra: &[&std::ffi::OsStr]| {
        let out = dir.join(name.replace(' ', "_"));
        let mut cmd = ncclbench();
        cmd.args(args.split_whitespace()).args(extra);
        if redact {
            cmd.arg("--redact");
        }
        for (k, v) in secrets() {
            cmd.env(k, v);
        }
        all.push((name.to_string(), cmd, out));
    };
    let o = |p: &Path| p.as_os_str().to_owned();
    let bench = dir.join("bench");
    std::fs::create_dir(&bench).unwrap();
    let (csv, json, prom) = (
        o(&bench.join("r.csv")),
        o(&bench.join("r.json")),
        o(&bench.join("r.prom")),
    );
    add(
        "bench",
        "all_reduce --backend host -g 2 -b 8 -e 64 --csv",
        &[&csv, "--json".as_ref(), &json, "--prom".as_ref(), &prom],
    );
    add("env", "env", &[]);
    add("env json", "env --json", &[]);
    add("logs", "logs", &[log.as_os_str()]);
    add("logs json", "logs --json", &[log.as_os_str()]);
    let acc = o(&dir.join("accept"));
    add(
        "accept",
        "accept --backend host -g 2 --profile",
        &[prof.as_os_str(), "--out".as_ref(), &acc],
    );
    let loc = o(&dir.join("locate"));
    add(
        "locate",
        "locate --backend host -g 2 -b 1K -w 1 -n 1 --out",
        &[&loc],
    );
    all
}

/// Every file under `dir`, as (path, lossy text).
fn files_under(dir: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            found.extend(files_under(&p));
        } else if let Ok(bytes) = std::fs::read(&p) {
            found.push((
                p.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
    found
}

/// `(subcommand, where)` of every secret value found in any output.
fn leaks(redact: bool) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut found = Vec::new();
    for (name, mut cmd, _) in every_subcommand(dir.path(), redact) {
        let o = cmd.output().expect("run ncclbench");
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!err.contains("panicked"), "{name}: {err}");
        let streams = [
            (
                "stdout".to_string(),
                String::from_utf8_lossy(&o.stdout).into_owned(),
            ),
            ("stderr".to_string(), err),
        ];
        for (place, text) in streams {
            for (var, value) in secrets() {
                if text.contains(&value) {
                    found.push(format!("{name} {place}: {var}"));
                }
            }
        }
    }
    for (path, text) in files_under(dir.path()) {
        if path.ends_with("nccl.log") || path.ends_with("p.toml") {
            continue; // the inputs
        }
        for (var, value) in secrets() {
            if text.contains(&value) {
                found.push(format!("{path}: {var}"));
            }
        }
    }
    found
}

#[test]
fn no_secret_value_survives_redaction_in_any_output_of_any_subcommand() {
    let shown = leaks(false);
    for must in [
        "bench/r.json",
        "env stdout",
        "logs stdout",
        "logs json stdout",
        "environment.json",
    ] {
        assert!(
            shown.iter().any(|l| l.contains(must)),
            "without --redact, {must} shows the values; found {shown:?}"
        );
    }
    assert_eq!(leaks(true), Vec::<String>::new());
}
