//! `--redact` with a distinctive host name, set in a UTS namespace (`unshare -u`, which needs
//! root; the test says so and passes over itself elsewhere): the name must leave no trace in
//! any output stream or file of a run — output file names built from it (the `# Writing`
//! lines, JSON `args`, the Prometheus `file` label), `UCX_NET_DEVICES`, a PMIx server URI
//! naming the launcher's host and PID — nor in `logs --redact` given logs whose file names hold
//! the host name and the writing process's PID.

use crate::support::bin::EXE;
use std::path::Path;
use std::process::Command;

const HOST: &str = "zebra-host-77";
const LAUNCHER_PID: &str = "918273";

/// `sh -c SCRIPT` in a new UTS namespace whose host name is [`HOST`]; `None` when this
/// machine cannot make one (not root, no `unshare`).
fn in_uts(dir: &Path, script: &str) -> Option<std::process::Output> {
    let o = Command::new("unshare")
        .args(["-u", "sh", "-c"])
        .arg(format!("hostname {HOST} && {script}"))
        .current_dir(dir)
        .env("NCCLBENCH", EXE)
        .env("UCX_NET_DEVICES", format!("{HOST}:mlx5_0:1"))
        .env(
            "PMIX_SERVER_URI2",
            format!("prterun-{HOST}-{LAUNCHER_PID}@0.0;tcp4://10.9.8.7:4000"),
        )
        .env("PMIX_NAMESPACE", format!("prterun-{HOST}-{LAUNCHER_PID}@1"))
        .output()
        .ok()?;
    if !o.status.success() && String::from_utf8_lossy(&o.stderr).contains("unshare") {
        return None;
    }
    Some(o)
}

/// Every place under `dir` (file names and contents) and in `o`'s streams holding `needle`.
fn places(dir: &Path, o: &std::process::Output, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (name, bytes) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        if String::from_utf8_lossy(bytes).contains(needle) {
            found.push(name.to_string());
        }
    }
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let text = String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned();
        let name = e.file_name().to_string_lossy().into_owned();
        if text.contains(needle) && !name.ends_with(".log") {
            found.push(name);
        }
    }
    found
}

#[test]
fn a_redacted_run_leaves_no_host_name_or_launcher_pid_in_any_output() {
    let dir = tempfile::tempdir().unwrap();
    let run = |redact: &str| {
        let script = format!(
            "exec \"$NCCLBENCH\" all_reduce --backend host -g 2 -b 8 -e 64 \
             --csv out-{HOST}.csv --json j_{HOST}.json --prom {HOST}.prom {redact}"
        );
        in_uts(dir.path(), &script)
    };
    let Some(plain) = run("") else {
        // CI runs as root with util-linux: there the test must run, not pass unchecked.
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no UTS namespace (needs root and unshare), and CI=true: the host-name test must run"
        );
        eprintln!("no UTS namespace here (needs root and unshare): test skipped");
        return;
    };
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    // Without --redact the name is everywhere, so the check below can fail.
    let shown = places(dir.path(), &plain, HOST);
    for must in [
        "stdout",
        "out-zebra-host-77.csv.env.json",
        "zebra-host-77.prom",
    ] {
        assert!(shown.iter().any(|s| s == must), "{must} not in {shown:?}");
    }
    for e in std::fs::read_dir(dir.path()).unwrap().flatten() {
        std::fs::remove_file(e.path()).unwrap();
    }
    let redacted = run("--redact").unwrap();
    assert!(
        redacted.status.success(),
        "{}",
        String::from_utf8_lossy(&redacted.stderr)
    );
    assert_eq!(places(dir.path(), &redacted, HOST), Vec::<String>::new());
    assert_eq!(
        places(dir.path(), &redacted, LAUNCHER_PID),
        Vec::<String>::new()
    );
}

#[test]
fn logs_redact_masks_host_names_and_pids_in_log_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let pid = 24680;
    let log = dir.path().join(format!("nccl.{HOST}.{pid}.log"));
    let other = dir.path().join(format!("nccl-{HOST}-{}.log", pid + 1));
    for (path, p) in [(&log, pid), (&other, pid + 1)] {
        std::fs::write(
            path,
            format!(
                "{HOST}:{p}:{p} [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n\
                 {HOST}:{p}:{p} [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 18000 commId 0x2 - Init COMPLETE\n\
                 cut off"
            ),
        )
        .unwrap();
    }
    // The last lines lack their newline, so the report names each file in a warning.
    for json in [false, true] {
        let mut cmd = Command::new(EXE);
        cmd.arg("logs").arg(&log).arg(&other).arg("--redact");
        if json {
            cmd.arg("--json");
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout);
        for leak in [HOST.to_string(), pid.to_string(), (pid + 1).to_string()] {
            assert!(!out.contains(&leak), "json {json}: {leak} in\n{out}");
        }
    }
}
