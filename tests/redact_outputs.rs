//! `--redact` on a benchmark run: no host name, PID, IP address, user name, pointer or secret
//! value from the environment survives in any output (stdout, CSV, its `.env.json` sidecar,
//! JSON) — and without `--redact` the same run does show them, so the check can fail. The
//! environment record itself is checked for the facts it must hold.

use crate::support::bin;
use std::process::Stdio;

const SECRET: &str = "hunter2-sesame";
const IP: &str = "10.123.45.67";
const USER: &str = "alice_q";
const POINTER: &str = "0x7ffdeadbeef0";

struct Outputs {
    pid: u32,
    files: Vec<(String, String)>,
}

fn outputs(redact: bool) -> Outputs {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let json = dir.path().join("r.json");
    let mut cmd = bin::command("all_reduce --backend host -g 2 -b 8 -e 64 -f 2");
    cmd.arg("--csv")
        .arg(&csv)
        .arg("--json")
        .arg(&json)
        .env("NCCL_COMM_ID", format!("{IP}:5000"))
        .env("NCCL_DEBUG_FILE", format!("/home/{USER}/nccl.%h.log"))
        .env("UCX_API_TOKEN", SECRET)
        .env("OMPI_MCA_test_ptr", POINTER)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if redact {
        cmd.arg("--redact");
    }
    let child = cmd.spawn().expect("run ncclbench");
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap();
    let sidecar = ncclbench::bench::output::csv::sidecar_path(&csv);
    Outputs {
        pid,
        files: vec![
            (
                "stdout".into(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            ),
            ("csv".into(), read(&csv)),
            ("sidecar".into(), read(&sidecar)),
            ("json".into(), read(&json)),
        ],
    }
}

fn hostnames() -> Vec<String> {
    let full = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let full = full.trim().to_string();
    let short = full.split('.').next().unwrap_or_default().to_string();
    [full, short]
        .into_iter()
        .filter(|h| !h.is_empty())
        .collect()
}

/// Whole tokens (host names and PIDs must not match inside longer words or numbers).
fn has_token(text: &str, token: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'))
        .flat_map(|t| std::iter::once(t).chain(t.split('.')))
        .any(|t| t == token)
}

fn leaks(o: &Outputs) -> Vec<String> {
    let mut found = Vec::new();
    for (name, text) in &o.files {
        for needle in [SECRET, IP, USER, POINTER] {
            if text.contains(needle) {
                found.push(format!("{name}: {needle}"));
            }
        }
        for h in hostnames() {
            if has_token(text, &h) {
                found.push(format!("{name}: host {h}"));
            }
        }
        if has_token(text, &o.pid.to_string()) {
            found.push(format!("{name}: pid {}", o.pid));
        }
    }
    found
}

#[test]
fn nothing_identifying_survives_redaction_in_any_output() {
    let plain = outputs(false);
    let shown = leaks(&plain);
    for must in [
        "sidecar: hunter2",
        "json: 10.123",
        "sidecar: alice_q",
        "stdout: pid",
    ] {
        let prefix = must.split(' ').next().unwrap();
        assert!(
            shown.iter().any(|l| l.starts_with(prefix)),
            "without --redact the run records identifying text ({must}); found {shown:?}"
        );
    }
    let redacted = outputs(true);
    assert_eq!(leaks(&redacted), Vec::<String>::new());
}

#[test]
fn the_environment_record_names_the_run_and_its_system() {
    let o = outputs(false);
    let sidecar: serde_json::Value = serde_json::from_str(&o.files[2].1).unwrap();
    assert_eq!(sidecar["schema"], "ncclbench-run-env/1");
    assert_eq!(sidecar["backend"], "host");
    assert_eq!(sidecar["layout"]["nranks"], 2);
    assert!(
        sidecar["end_time"].is_string(),
        "rewritten at the end: {sidecar}"
    );
    assert!(sidecar["command_line"][1] == "all_reduce");
    assert_eq!(sidecar["system"]["schema"], "ncclbench-env/1");
    let vars = sidecar["system"]["variables"].as_array().unwrap();
    assert!(vars.iter().any(|v| v == &format!("NCCL_COMM_ID={IP}:5000")));
    let json: serde_json::Value = serde_json::from_str(&o.files[3].1).unwrap();
    assert_eq!(json["ncclbench"]["environment"], sidecar);
}
