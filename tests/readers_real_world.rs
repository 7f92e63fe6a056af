//! `analyze` and `compare` through the binary on inputs written here the way published
//! nccl-tests outputs look: a legacy alltoall table with its empty op column, two clusters'
//! outputs in one directory, NCCL decision lines interleaved with the table, and the `-I`
//! header of the host backend.

use crate::support::bin::{ncclbench, run};
use std::path::Path;

/// An nccl-tests 2.19.6-layout all_reduce table without its `Collective test starting` line
/// (cut from a log): `hosts` x `per_host` ranks of `gpu`, NCCL `version`, sizes 1 KiB .. 64
/// MiB by 4, time `alpha + S / bw`; `decision(size)` adds a 2.24+ decision line per call.
fn table(
    gpu: &str,
    hosts: usize,
    per_host: usize,
    version: &str,
    alpha: f64,
    bw: f64,
    decision: Option<fn(u64) -> &'static str>,
) -> String {
    let n = hosts * per_host;
    let mut s = format!("# nThread 1 nGpus {per_host} minBytes 1024 maxBytes 67108864 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n#\n# Using devices\n");
    for r in 0..n {
        let (h, d) = (r / per_host, r % per_host);
        s += &format!(
            "#  Rank {r:2} Group  0 Pid {:6} on {:>10} device {d:2} [0000:{:02x}:00] {gpu}\n",
            1000 + h,
            format!("node{h}"),
            16 + d
        );
    }
    s += &format!("node0:1000:1000 [0] NCCL INFO NCCL version {version}+cuda12.4\n#\n");
    s += "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n";
    let factor = 2.0 * (n as f64 - 1.0) / n as f64;
    for e in (10..=26).step_by(2) {
        let b = 1u64 << e;
        let t = alpha + b as f64 / (bw * 1e3);
        let alg = b as f64 / t / 1e3;
        let fields = format!("  {t:>7.2}  {alg:>6.2}  {:>6.2}  {:>6}", alg * factor, 0);
        let head = format!(
            "{b:>12}  {:>12}  {:>8}  {:>6}  {:>6}",
            b / 4,
            "float",
            "sum",
            -1
        );
        match decision {
            Some(d) => {
                let line = format!("node0:1000:1000 [0] NCCL INFO AllReduce: {b} Bytes -> Algo {} channel{{Lo..Hi}}={{0..7}}\n", d(b));
                s += &format!("{head}{line}{line}{fields}{line}{line}{fields}\n");
            }
            None => s += &format!("{head}{fields}{fields}\n"),
        }
    }
    s += "# Out of bounds values : 0 OK\n";
    s
}

fn analyze_json(args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let r = run(ncclbench()
        .arg("analyze")
        .args(args)
        .args(["--format", "json"]));
    assert_eq!(r.code, Some(0), "{}", r.err);
    serde_json::from_str(&r.out).unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn legacy_alltoall_with_an_empty_op_is_read_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = String::from("# nThread 1 nGpus 4 minBytes 1024 maxBytes 1048576 step: 4(factor) warmup iters: 5 iters: 20 validation: 1 \n#\n# Using devices\n");
    for r in 0..4 {
        s += &format!("#   Rank {r:2} Pid  31337 on      node1 device {r:2} [0x{:02x}] Tesla V100-SXM2-32GB\n", 6 + r);
    }
    s += "#\n#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n";
    for e in (10..=20).step_by(2) {
        let b = 1u64 << e;
        let t = 20.0 + b as f64 / 50e3;
        let alg = b as f64 / t / 1e3;
        // alltoall printed an empty op under the redop header (`%6s` of "").
        s += &format!("{b:>12}  {:>12}  {:>6}  {:>6}  {t:>7.2}  {alg:>6.2}  {:>6.2}  0e+00  {t:>7.2}  {alg:>6.2}  {:>6.2}  0e+00\n", b / 16, "float", "", alg * 0.75, alg * 0.75);
    }
    let f = write(dir.path(), "alltoall.log", &s);
    let v = analyze_json(&[f.as_os_str()]);
    assert_eq!(
        (v["rows_read"].as_u64(), v["rows_skipped"].as_u64()),
        (Some(12), Some(0))
    );
    let c = &v["curves"][0];
    assert_eq!(c["collective"], "alltoall");
    assert_eq!(
        c["collective_basis"],
        "inferred from legacy columns with an empty op; busbw/algbw 0.750 = (n-1)/n at 4 ranks"
    );
}

#[test]
fn two_clusters_in_one_directory_are_kept_apart_by_setup() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "h100.txt",
        &table("NVIDIA H100 80GB HBM3", 2, 8, "2.22.3", 12.0, 300.0, None),
    );
    write(
        dir.path(),
        "a100.txt",
        &table("NVIDIA A100-SXM4-80GB", 4, 4, "2.18.3", 25.0, 90.0, None),
    );
    let v = analyze_json(&[dir.path().as_os_str()]);
    let curves = v["curves"].as_array().unwrap();
    let setups: Vec<&str> = curves
        .iter()
        .map(|c| c["setup"].as_str().unwrap())
        .collect();
    assert_eq!(
        setups,
        [
            "GPU NVIDIA A100-SXM4-80GB; 4 hosts, 4 processes; NCCL 2.18.3",
            "GPU NVIDIA A100-SXM4-80GB; 4 hosts, 4 processes; NCCL 2.18.3",
            "GPU NVIDIA H100 80GB HBM3; 2 hosts, 2 processes; NCCL 2.22.3",
            "GPU NVIDIA H100 80GB HBM3; 2 hosts, 2 processes; NCCL 2.22.3",
        ]
    );
    assert!(curves
        .iter()
        .all(|c| c["collective"] == "all_reduce" && c["nranks"] == 16 && c["rows"] == 9));
    let notes = v["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0]
        .as_str()
        .unwrap()
        .starts_with("all_reduce float sum 16 ranks: files of different setups ("));
    // The text report says it too, and --pool-setups pools them with a note.
    let r = run(ncclbench().arg("analyze").arg(dir.path()));
    assert!(
        r.out
            .contains("kept apart, one curve per setup (--pool-setups pools them)"),
        "{}",
        r.out
    );
    let pooled = analyze_json(&[dir.path().as_os_str(), "--pool-setups".as_ref()]);
    assert_eq!(pooled["curves"].as_array().unwrap().len(), 2);
    assert!(pooled["notes"][0]
        .as_str()
        .unwrap()
        .ends_with("pooled into one curve (--pool-setups)"));
}

#[test]
fn inline_decisions_are_the_rows_decisions_in_analyze_and_compare() {
    fn before(_: u64) -> &'static str {
        "RING proto LL128"
    }
    fn after(b: u64) -> &'static str {
        if b == 1 << 20 {
            "TREE proto LL"
        } else {
            "RING proto LL128"
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let b = write(
        dir.path(),
        "before.txt",
        &table(
            "NVIDIA H100 80GB HBM3",
            1,
            8,
            "2.27.7",
            12.0,
            300.0,
            Some(before),
        ),
    );
    let a = write(
        dir.path(),
        "after.txt",
        &table(
            "NVIDIA H100 80GB HBM3",
            1,
            8,
            "2.28.3",
            12.0,
            300.0,
            Some(after),
        ),
    );
    let v = analyze_json(&[a.as_os_str()]);
    let points = v["curves"][0]["points"].as_array().unwrap();
    let at = |bytes: u64| points.iter().find(|p| p["bytes"] == bytes).unwrap()["tuning"].clone();
    assert_eq!(at(1 << 20)["algo"], "Tree");
    assert_eq!(
        (
            at(1 << 22)["algo"].as_str(),
            at(1 << 22)["proto"].as_str(),
            at(1 << 22)["channels"].as_str()
        ),
        (Some("Ring"), Some("LL128"), Some("0-7"))
    );
    let r = run(ncclbench()
        .arg("compare")
        .arg(&b)
        .arg(&a)
        .args(["--format", "json"]));
    let cmp: serde_json::Value =
        serde_json::from_str(&r.out).unwrap_or_else(|e| panic!("{e}: {}", r.err));
    for c in cmp["curves"].as_array().unwrap() {
        assert_eq!(
            c["tuning_changes_bytes"],
            serde_json::json!([1 << 20]),
            "{}",
            c["placement"]
        );
    }
}

#[test]
fn the_per_iteration_header_of_the_host_backend_names_no_cuda_events() {
    let r = run(ncclbench().args([
        "all_reduce",
        "-b",
        "8",
        "-e",
        "64",
        "-g",
        "2",
        "-n",
        "2",
        "-w",
        "1",
        "-I",
        "1",
        "--backend",
        "host",
    ]));
    assert_eq!(r.code, Some(0), "{}", r.err);
    assert!(r.out.contains("# Per-Iteration Report: host clock timing (no CUDA events on this backend); i_* uses max over process rows \n"), "{}", r.out);
    assert!(!r.out.contains("CUDA event timing"));
}
