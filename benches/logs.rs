//! Speed of the NCCL log parser: a synthetic NCCL 2.27-style log of 64 ranks on 8 hosts
//! (each call one COLL line per rank and rank 0's TUNING line, with nccl-tests table rows in
//! between) written to a temporary file, parsed into a summary from disk, beside `grep -c`
//! on the same file for scale. Then the same volume as 1,024 per-process files (what
//! `NCCL_DEBUG_FILE=%h.%p` writes for 1,024 ranks), parsed on all cores and on one thread,
//! beside `grep -c` over the same files. Criterion prints MB/s: per CPU-second for the one
//! file (the one-core figure, which a loaded machine does not distort; `grep`'s CPU time is
//! counted the same way), per wall-second for the many files (what all cores buy).
//!
//! Size: `NCCLBENCH_LOG_BENCH_MIB` (default 256; the 1 GiB is
//! `NCCLBENCH_LOG_BENCH_MIB=1024`).

#[path = "logs_support/cpu_time.rs"]
mod cpu_time;

use cpu_time::CpuTime;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ncclbench::logs::{parse_files, ParseOptions};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Command;

const RANKS: u64 = 64;
/// Per-process files of the many-files case.
const FILES: u64 = 1024;

/// Writes about `mib` MiB of log to `path`.
fn write_log(path: &Path, mib: u64) -> u64 {
    write_bytes(path, mib << 20)
}

/// Writes about `target` bytes of log to `path`.
fn write_bytes(path: &Path, target: u64) -> u64 {
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let mut written = 0u64;
    let line = |w: &mut BufWriter<std::fs::File>, s: &str| {
        w.write_all(s.as_bytes()).unwrap();
        w.write_all(b"\n").unwrap();
        s.len() as u64 + 1
    };
    written += line(
        &mut w,
        "node0:1000:1000 [0] NCCL INFO NCCL version 2.27.7+cuda12.9",
    );
    for r in 0..RANKS {
        written += line(&mut w, &format!(
            "node{}:{}:{} [{}] NCCL INFO ncclCommInitRankConfig comm 0x55{:010x} rank {r} nranks {RANKS} cudaDev {} nvmlDev {} busId {:x}000 commId 0x54fe282d32a87d85 - Init COMPLETE",
            r / 8, 1000 + r, 2000 + r, r % 8, 0x1000 + r, r % 8, r % 8, 0x17 + r % 8
        ));
    }
    let (mut op, mut size) = (0u64, 8u64);
    while written < target {
        for r in 0..RANKS {
            written += line(&mut w, &format!(
                "node{}:{}:{} [{}] NCCL INFO AllReduce: opCount {op:x} sendbuff 0x7f00{:08x} recvbuff 0x7f80{:08x} count {} datatype 7 op 0 root 0 comm 0x55{:010x} [nranks={RANKS}] stream 0x56{:010x}",
                r / 8, 1000 + r, 1000 + r, r % 8, op, op, size / 4, 0x1000 + r, r
            ));
        }
        let (algo, proto) = if size < 65536 {
            ("RING", "LL")
        } else {
            ("RING", "SIMPLE")
        };
        written += line(&mut w, &format!(
            "node0:1000:1000 [0] NCCL INFO AllReduce: {size} Bytes -> Algo {algo} proto {proto} channel{{Lo..Hi}}={{0..{}}}",
            (size.ilog2() / 2).min(31)
        ));
        if op % 32 == 31 {
            written += line(&mut w, &format!(
                "    {size:>12}  {:>12}     float     sum      -1    12.34    0.01    0.01      0    12.10    0.01    0.01      0",
                size / 4
            ));
            size = if size >= 1 << 30 { 8 } else { size * 2 };
        }
        op += 1;
    }
    w.flush().unwrap();
    written
}

fn mib() -> u64 {
    std::env::var("NCCLBENCH_LOG_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&m| m > 0)
        .unwrap_or(256)
}

fn bench_logs(c: &mut Criterion<CpuTime>) {
    let mib = mib();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nccl.log");
    let bytes = write_log(&path, mib);
    let summary = parse_files(&[&path], &ParseOptions::default()).unwrap();
    assert!(summary.decision_count() > 0);
    let mut group = c.benchmark_group("logs");
    group.throughput(Throughput::Bytes(bytes));
    group.sample_size(10);
    group.bench_function(format!("parse_{mib}MiB"), |b| {
        b.iter(|| parse_files(&[&path], &ParseOptions::default()).unwrap())
    });
    // The same file through `grep -c` (one process per iteration), for scale.
    if Command::new("grep").arg("--version").output().is_ok() {
        group.bench_function(format!("grep_c_{mib}MiB"), |b| {
            b.iter(|| {
                Command::new("grep")
                    .args(["-c", "NCCL INFO"])
                    .arg(&path)
                    .output()
                    .unwrap()
            })
        });
    }
    group.finish();
}

/// Per-process files: `mib` MiB over [`FILES`] files.
fn bench_many_files(c: &mut Criterion) {
    let mib = mib();
    let dir = tempfile::tempdir().unwrap();
    let per_file = (mib << 20) / FILES;
    let paths: Vec<_> = (0..FILES)
        .map(|i| dir.path().join(format!("node{}.{}", i / 8, 1000 + i)))
        .collect();
    let bytes: u64 = paths.iter().map(|p| write_bytes(p, per_file)).sum();
    let mut group = c.benchmark_group("logs_files");
    group.throughput(Throughput::Bytes(bytes));
    group.sample_size(10);
    group.bench_function(format!("parse_{FILES}_files_all_cores"), |b| {
        b.iter(|| parse_files(&paths, &ParseOptions::default()).unwrap())
    });
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    group.bench_function(format!("parse_{FILES}_files_one_thread"), |b| {
        b.iter(|| one.install(|| parse_files(&paths, &ParseOptions::default()).unwrap()))
    });
    if Command::new("grep").arg("--version").output().is_ok() {
        group.bench_function(format!("grep_c_{FILES}_files"), |b| {
            b.iter(|| {
                Command::new("grep")
                    .args(["-c", "NCCL INFO"])
                    .args(&paths)
                    .output()
                    .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = one_file;
    config = Criterion::default().with_measurement(CpuTime);
    targets = bench_logs
}
criterion_group!(many_files, bench_many_files);
criterion_main!(one_file, many_files);
