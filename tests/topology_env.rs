//! `--tuning` records the topology NCCL's log shows in the run's environment record (JSON
//! `ncclbench.environment.topology` and the CSV's `.env.json` sidecar), redacted with the rest
//! under `--redact`, and absent without `--tuning`.
//!
//! fake-nccl prints the `NCCL version` line and one `Init COMPLETE` line per rank at init, and
//! each rank's ring connection (`via P2P/CUMEM`) and `Connected all rings` at the first
//! collective, as NCCL 2.22 and later do (no network, NIC, GDR or NVLS lines). So these tests
//! prove the record is refreshed at the end of the run (the connections are not in the log
//! when the outputs begin), and that everything else stays unknown rather than guessed.

use crate::support::bin;
use crate::support::fake_nccl::fake_command;
use serde_json::Value;
use std::path::Path;

/// Runs ncclbench on fake-nccl 2.27.3 in `dir` with `args`; returns stdout after checking the
/// exit status.
fn fake_2_27(dir: &Path, args: &str) -> String {
    let r = bin::run(fake_command(args, &[("FAKE_NCCL_VERSION", "22703")]).current_dir(dir));
    assert_eq!(r.code, Some(0), "`{args}`:\n{}\n{}", r.out, r.err);
    r.out
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("output written")).unwrap()
}

const RUN: &str = "all_reduce -g 2 -b 1K -e 4K -f 2 -n 1 -w 1 --backend nccl";

/// Both outputs carry the same topology: NCCL 2.27.3, one communicator of 2 ranks on this
/// host (1 node, 2 per node, both complete), connected over P2P/CUMEM at the first call;
/// nothing else the fake does not print.
#[test]
fn tuning_run_records_the_logs_topology_in_json_and_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    fake_2_27(
        dir.path(),
        &format!("{RUN} --tuning --csv out.csv --json out.json"),
    );
    let doc = read_json(&dir.path().join("out.json"));
    let env = &doc["ncclbench"]["environment"];
    let t = &env["topology"];
    assert_eq!(
        t["nccl_versions"],
        serde_json::json!(["2.27.3+cuda12.4"]),
        "{t}"
    );
    assert_eq!(t["communicators"], 1, "{t}");
    let c = &t["comm"];
    assert_eq!(
        (&c["nranks"], &c["ranks_seen"], &c["ranks_complete"]),
        (&2.into(), &2.into(), &2.into()),
        "{c}"
    );
    assert_eq!(
        (&c["nodes"], &c["ranks_per_node"]),
        (&1.into(), &2.into()),
        "{c}"
    );
    let host = env["hostnames"][0].as_str().unwrap();
    assert_eq!(
        c["hosts"],
        serde_json::json!([{"host": host, "ranks": [0, 1]}])
    );
    assert_eq!(c["channels"], 1, "{c}");
    assert_eq!(
        c["connected"],
        serde_json::json!(["Connected all rings, use ring PXN 0 GDR 1"]),
        "{c}"
    );
    assert_eq!(
        t["transports"],
        serde_json::json!([{"kind": "P2P", "connections": 2, "paths": {"P2P/CUMEM": 2}}]),
        "{t}"
    );
    for k in ["gdr_used", "nvls_available", "nvlink"] {
        assert!(t[k].is_null(), "{k}: {t}");
    }
    for k in ["networks", "nics", "bootstrap"] {
        assert_eq!(t[k], serde_json::json!([]), "{k}: {t}");
    }
    let sidecar = read_json(&dir.path().join("out.csv.env.json"));
    assert_eq!(&sidecar["topology"], t);
}

/// Without `--tuning` there is no captured log and no `topology` key.
#[test]
fn run_without_tuning_records_no_topology() {
    let dir = tempfile::tempdir().unwrap();
    fake_2_27(dir.path(), &format!("{RUN} --json out.json"));
    let doc = read_json(&dir.path().join("out.json"));
    let env = doc["ncclbench"]["environment"].as_object().unwrap();
    assert!(env.contains_key("hostnames") && !env.contains_key("topology"));
}

/// `--redact`: the topology's host is the same token as the record's host names, not the
/// real host name.
#[test]
fn redacted_run_masks_the_topologys_hosts() {
    let dir = tempfile::tempdir().unwrap();
    fake_2_27(
        dir.path(),
        &format!("{RUN} --tuning --redact --json out.json"),
    );
    let doc = read_json(&dir.path().join("out.json"));
    let env = &doc["ncclbench"]["environment"];
    let token = env["hostnames"][0].as_str().unwrap();
    assert!(token.starts_with("host-"), "{env}");
    let t = &env["topology"];
    assert_eq!(t["comm"]["hosts"][0]["host"], token, "{t}");
    let real = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let real = real.trim().split('.').next().unwrap();
    assert_ne!(token, real);
    assert_eq!(t["comm"]["hosts"].as_array().map(Vec::len), Some(1), "{t}");
}
