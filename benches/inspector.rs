//! Speed of the NCCL Inspector reader: a synthetic dump of JSON records (the plugin's
//! one-record-a-line layout; AllReduce, AllGather and ReduceScatter records over two
//! communicators and P2P sends, about 480 bytes each) written to a temporary file and its
//! gzip form, read into records from disk, beside `wc -l` on the plain file and
//! `zcat | wc -l` on the gzip file, in the same run. Criterion reports CPU time (this
//! process's threads plus the children it waited for, so `wc` and `zcat` count the same way)
//! and bytes per CPU-second; before it, one side-by-side table of the best of three runs
//! prints each reader's CPU and wall time and its ratio to the line count of the same file.
//!
//! Size: `NCCLBENCH_INSPECTOR_BENCH_MIB` (default 256; the issue's 1 GiB is
//! `NCCLBENCH_INSPECTOR_BENCH_MIB=1024`). The files live in a temporary directory that is
//! deleted at the end.

#[path = "logs_support/cpu_time.rs"]
mod cpu_time;

use cpu_time::CpuTime;
use criterion::measurement::Measurement;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ncclbench::analysis::inspector::read_paths;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Writes about `target` bytes of records to `path` (and `gz` its gzip form); returns the
/// byte count and the record count.
fn write_dump(path: &Path, gz: &Path, target: u64) -> (u64, u64) {
    let mut plain = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let mut zipped = flate2::write::GzEncoder::new(
        BufWriter::with_capacity(1 << 20, std::fs::File::create(gz).unwrap()),
        flate2::Compression::fast(),
    );
    let (mut written, mut n) = (0u64, 0u64);
    let colls = ["AllReduce", "AllGather", "ReduceScatter"];
    while written < target {
        let size = 8192u64 << (n % 18);
        let time = 10 + size / 20_000;
        let line = if n % 5 == 4 {
            format!(
                r#"{{"header":{{"id":"0x9e3779b97f4a7c","comm_name":"PP","rank":{},"n_ranks":2,"nnodes":2}},"metadata":{{"inspector_output_format_version":"v4.0","git_rev":"9019a1912","rec_mechanism":"nccl_profiler_interface","dump_timestamp_us":{},"hostname":"node-017","pid":438776}},"p2p_perf":{{"p2p":"Send","p2p_sn":{n},"p2p_peer":1,"p2p_msg_size_bytes":{size},"p2p_exec_time_us":{time},"p2p_timing_source":"kernel_gpu","p2p_algobw_gbs":{:.6},"p2p_busbw_gbs":{:.6}}}}}"#,
                n % 2,
                1752867229276385 + n * 7,
                size as f64 / 1e3 / time as f64,
                size as f64 / 1e3 / time as f64,
            )
        } else {
            let coll = colls[(n % 3) as usize];
            let traffic = if coll == "AllReduce" { size } else { size * 8 };
            let algbw = traffic as f64 / 1e3 / time as f64;
            let factor = if coll == "AllReduce" { 1.75 } else { 0.875 };
            format!(
                r#"{{"header":{{"id":"0xe62dedaa97644a","comm_name":"DP Group 0","rank":4,"n_ranks":8,"nnodes":1}},"metadata":{{"inspector_output_format_version":"v4.0","git_rev":"9019a1912","rec_mechanism":"nccl_profiler_interface","dump_timestamp_us":{},"hostname":"node-017","pid":438776}},"coll_perf":{{"coll":"{coll}","coll_sn":{n},"coll_msg_size_bytes":{size},"coll_exec_time_us":{time},"coll_timing_source":"kernel_gpu","coll_algobw_gbs":{algbw:.6},"coll_busbw_gbs":{:.6}}}}}"#,
                1752867229276385 + n * 7,
                algbw * factor,
            )
        };
        for w in [&mut plain as &mut dyn Write, &mut zipped] {
            w.write_all(line.as_bytes()).unwrap();
            w.write_all(b"\n").unwrap();
        }
        written += line.len() as u64 + 1;
        n += 1;
    }
    plain.flush().unwrap();
    zipped.finish().unwrap().flush().unwrap();
    (written, n)
}

fn mib() -> u64 {
    std::env::var("NCCLBENCH_INSPECTOR_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&m| m > 0)
        .unwrap_or(256)
}

fn read(path: &Path) -> usize {
    read_paths(&[path.to_path_buf()]).unwrap().records.len()
}

fn wc_l(path: &Path) {
    let out = Command::new("wc").arg("-l").arg(path).output().unwrap();
    assert!(out.status.success());
}

fn zcat_wc_l(path: &Path) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"zcat "$1" | wc -l"#)
        .arg("sh")
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success());
}

/// Best of three (CPU seconds, wall seconds) of `f`.
fn best(f: &dyn Fn()) -> (f64, f64) {
    let (mut cpu, mut wall) = (f64::MAX, f64::MAX);
    for _ in 0..3 {
        let (c0, w0) = (CpuTime.start(), Instant::now());
        f();
        cpu = cpu.min(CpuTime.end(c0) / 1e9);
        wall = wall.min(w0.elapsed().as_secs_f64());
    }
    (cpu, wall)
}

fn bench_inspector(c: &mut Criterion<CpuTime>) {
    let mib = mib();
    let dir = tempfile::tempdir().unwrap();
    let plain: PathBuf = dir.path().join("rank4.log");
    let gz: PathBuf = dir.path().join("rank4.log.gz");
    let (bytes, records) = write_dump(&plain, &gz, mib << 20);
    assert_eq!(read(&plain) as u64, records);
    assert_eq!(read(&gz) as u64, records);
    let tools = Command::new("wc").arg("--version").output().is_ok()
        && Command::new("zcat").arg("--version").output().is_ok();

    println!("inspector: {bytes} bytes, {records} records ({mib} MiB; best of 3)");
    let ours = best(&|| {
        read(&plain);
    });
    let ours_gz = best(&|| {
        read(&gz);
    });
    if tools {
        let wc = best(&|| wc_l(&plain));
        let zcat = best(&|| zcat_wc_l(&gz));
        for (what, (oc, ow), base, (bc, bw)) in [
            ("plain", ours, "wc -l", wc),
            ("gzip", ours_gz, "zcat | wc -l", zcat),
        ] {
            println!(
                "inspector: read {what}: {oc:.2} s cpu, {ow:.2} s wall; {base}: {bc:.2} s cpu, \
                 {bw:.2} s wall; ratio {:.2}x cpu, {:.2}x wall",
                oc / bc,
                ow / bw
            );
        }
    }

    let mut group = c.benchmark_group("inspector");
    group.throughput(Throughput::Bytes(bytes));
    group.sample_size(10);
    group.bench_function(format!("read_{mib}MiB"), |b| b.iter(|| read(&plain)));
    group.bench_function(format!("read_gz_{mib}MiB"), |b| b.iter(|| read(&gz)));
    if tools {
        group.bench_function(format!("wc_l_{mib}MiB"), |b| b.iter(|| wc_l(&plain)));
        group.bench_function(format!("zcat_wc_l_{mib}MiB"), |b| b.iter(|| zcat_wc_l(&gz)));
    }
    group.finish();
}

criterion_group! {
    name = inspector;
    config = Criterion::default().with_measurement(CpuTime);
    targets = bench_inspector
}
criterion_main!(inspector);
