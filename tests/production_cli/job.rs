//! A training job's NCCL Inspector dump, generated from the documented record format: four
//! ranks (0 and 1 on node-a, 2 and 3 on node-b), one file per rank in a dump tree (plain
//! `.log`, `.jsonl`, and their gzip forms; one file cut mid-record), over four communicators:
//!
//! * `DP Group 0` (AllReduce of 1M and 4M, 20 calls each, rank 3 planted slow at 0.3 x the
//!   benchmark's speed while the others run at 1.25 x; 60 calls of 16K, below the benchmark's
//!   sizes, and 5 of 64M, above them, at the same speed on every rank: rank 3 makes more calls
//!   at normal speed than slow ones, and is still the slow rank, since the slow calls carry
//!   the time);
//! * `TP Group 1` (AllGather of 1M per rank = 4M in nccl-tests' convention, 40 calls, every
//!   fourth call at 0.2 x on every rank, the others at 1.25 x: contention);
//! * an unnamed communicator in the older format (no `comm_name`, no timing source):
//!   AllReduce of 2M at the benchmark's speed;
//! * point-to-point sends of 256K between rank pairs.
//!
//! Times are whole microseconds and bandwidths six-decimal strings, as the plugin prints them;
//! every record is also returned as plain numbers, so the tests compute the exact aggregates.

use std::io::Write;
use std::path::Path;

/// One generated record, as the report should read it.
#[derive(Debug, Clone)]
pub struct Rec {
    pub comm: &'static str,
    pub coll: &'static str,
    /// Size in nccl-tests' convention.
    pub bytes: u64,
    pub rank: u32,
    pub time_us: u64,
    /// The busbw as written (parsed back from its six-decimal text).
    pub busbw: f64,
}

pub const DP: &str = "0x1d00000000d0";
pub const TP: &str = "0x2e00000000e1";
pub const OLD: &str = "0x3f00000000f2";
pub const NRANKS: u32 = 4;

pub fn host(rank: u32) -> &'static str {
    if rank < 2 {
        "node-a"
    } else {
        "node-b"
    }
}

/// A record line and its plain numbers. `written` is the message size as the plugin writes
/// it (one rank's part for AllGather).
#[allow(clippy::too_many_arguments)]
fn coll(
    comm: &'static str,
    name: Option<&str>,
    coll: &'static str,
    written: u64,
    rank: u32,
    seq: u64,
    time_us: u64,
    timing: bool,
) -> (String, Rec) {
    let n = f64::from(NRANKS);
    let (traffic, factor) = match coll {
        "AllGather" => (written * u64::from(NRANKS), (n - 1.0) / n),
        _ => (written, 2.0 * (n - 1.0) / n),
    };
    let algbw = traffic as f64 / (time_us as f64 * 1e3);
    let busbw = format!("{:.6}", algbw * factor);
    let name = name
        .map(|n| format!(r#""comm_name":"{n}","#))
        .unwrap_or_default();
    let timing = if timing {
        r#""coll_timing_source":"kernel_gpu","#
    } else {
        ""
    };
    let line = format!(
        r#"{{"header":{{"id":"{comm}",{name}"rank":{rank},"n_ranks":{NRANKS},"nnodes":2}},"metadata":{{"inspector_output_format_version":"v4.0","git_rev":"","rec_mechanism":"nccl_profiler_interface","dump_timestamp_us":{},"hostname":"{}","pid":{}}},"coll_perf":{{"coll":"{coll}","coll_sn":{seq},"coll_msg_size_bytes":{written},"coll_exec_time_us":{time_us},{timing}"coll_algobw_gbs":{algbw:.6},"coll_busbw_gbs":{busbw}}}}}"#,
        1_750_000_000_000_000u64 + seq,
        host(rank),
        4000 + rank
    );
    let rec = Rec {
        comm,
        coll: if coll == "AllGather" {
            "all_gather"
        } else {
            "all_reduce"
        },
        bytes: traffic,
        rank,
        time_us,
        busbw: busbw.parse().unwrap(),
    };
    (line, rec)
}

/// A P2P send of rank `rank` to its pair partner, on the pair's communicator (`0x90` for
/// ranks 0 and 1, `0x91` for 2 and 3, both named `PP`).
fn send(rank: u32, seq: u64, time_us: u64) -> (String, Rec) {
    let bytes = 256u64 << 10;
    let bw = format!("{:.6}", bytes as f64 / (time_us as f64 * 1e3));
    let line = format!(
        r#"{{"header":{{"id":"0x9{}","comm_name":"PP","rank":{},"n_ranks":2,"nnodes":1}},"metadata":{{"inspector_output_format_version":"v4.0","git_rev":"","rec_mechanism":"nccl_profiler_interface","dump_timestamp_us":1,"hostname":"{}","pid":{}}},"p2p_perf":{{"p2p":"Send","p2p_sn":{seq},"p2p_peer":{},"p2p_msg_size_bytes":{bytes},"p2p_exec_time_us":{time_us},"p2p_timing_source":"kernel_gpu","p2p_algobw_gbs":{bw},"p2p_busbw_gbs":{bw}}}}}"#,
        rank / 2,
        rank % 2,
        host(rank),
        4000 + rank,
        (rank % 2) ^ 1
    );
    let rec = Rec {
        comm: if rank < 2 { "0x90" } else { "0x91" },
        coll: "send",
        bytes,
        rank,
        time_us,
        busbw: bw.parse().unwrap(),
    };
    (line, rec)
}

/// A job time: the benchmark's time divided by `speed`, in whole microseconds (at least 1).
fn at(bench_us: f64, speed: f64) -> u64 {
    ((bench_us / speed).round() as u64).max(1)
}

/// The records of one rank, in call order. `bench(coll, bytes)` is the benchmark's time of
/// one call at that size (nccl-tests' convention).
pub fn rank_records(rank: u32, bench: &dyn Fn(&str, u64) -> f64) -> Vec<(String, Rec)> {
    let mut out = Vec::new();
    let mut seq = 0;
    let mut next = || {
        seq += 1;
        seq
    };
    let dp_speed = if rank == 3 { 0.3 } else { 1.25 };
    for size in [1u64 << 20, 4 << 20] {
        for _ in 0..20 {
            let t = at(bench("all_reduce", size), dp_speed);
            out.push(coll(
                DP,
                Some("DP Group 0"),
                "AllReduce",
                size,
                rank,
                next(),
                t,
                true,
            ));
        }
    }
    // Outside the benchmark's 64K..16M: no number is read for them.
    let fast = |size: u64| ((size as f64 / 5e3).round() as u64).max(1);
    for (size, calls) in [(16u64 << 10, 60), (64 << 20, 5)] {
        for _ in 0..calls {
            let t = fast(size);
            out.push(coll(
                DP,
                Some("DP Group 0"),
                "AllReduce",
                size,
                rank,
                next(),
                t,
                true,
            ));
        }
    }
    for call in 0..40u64 {
        let speed = if call % 4 == 0 { 0.2 } else { 1.25 };
        let t = at(bench("all_gather", 4 << 20), speed);
        out.push(coll(
            TP,
            Some("TP Group 1"),
            "AllGather",
            1 << 20,
            rank,
            call,
            t,
            true,
        ));
    }
    for call in 0..10 {
        let t = at(bench("all_reduce", 2 << 20), 1.0);
        out.push(coll(OLD, None, "AllReduce", 2 << 20, rank, call, t, false));
    }
    for call in 0..10 {
        out.push(send(rank, call, 60));
    }
    out
}

/// One record of each (collective, size) whose benchmark time [`rank_records`] needs, for
/// asking the report what the benchmark's time there is.
pub fn write_probe(path: &Path) {
    let text: String = [
        ("AllReduce", 1u64 << 20),
        ("AllReduce", 2 << 20),
        ("AllReduce", 4 << 20),
        ("AllGather", 1 << 20),
    ]
    .into_iter()
    .map(|(c, written)| coll(DP, None, c, written, 0, 1, 100, true).0 + "\n")
    .collect();
    std::fs::write(path, text).unwrap();
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// Writes the dump tree under `dir` and returns every complete record and the number of
/// bytes of the record cut at the end of rank 3's file.
pub fn write_dump(dir: &Path, bench: &dyn Fn(&str, u64) -> f64) -> (Vec<Rec>, usize) {
    let names = [
        "node-a/rank0.log",
        "node-a/rank1.jsonl.gz",
        "node-b/rank2.log.gz",
        "node-b/rank3.jsonl",
    ];
    let mut all = Vec::new();
    let mut cut = 0;
    for (rank, name) in (0..NRANKS).zip(names) {
        let records = rank_records(rank, bench);
        let mut text: String = records.iter().map(|(l, _)| format!("{l}\n")).collect();
        if rank == 3 {
            // The process died while writing its next record.
            let (line, _) = coll(
                DP,
                Some("DP Group 0"),
                "AllReduce",
                4 << 20,
                3,
                999,
                7,
                true,
            );
            cut = line.len() / 2;
            text.push_str(&line[..cut]);
        }
        let bytes = if name.ends_with(".gz") {
            gzip(text.as_bytes())
        } else {
            text.into_bytes()
        };
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        all.extend(records.into_iter().map(|(_, r)| r));
    }
    std::fs::write(dir.join("node-a/README.txt"), "job 42's dump\n").unwrap();
    (all, cut)
}

/// A Prometheus snapshot of `node` (its two GPUs' ranks): per GPU, AllReduce in the 4-5MB
/// bucket with `algo_proto`, and a P2P send in the 256-257KB bucket.
pub fn prom_snapshot(node: &str, gpus: [u32; 2], busbw: [f64; 2], time_us: [f64; 2]) -> String {
    let mut out = String::from(
        "# HELP nccl_bus_bandwidth_gbs Bus bandwidth\n# TYPE nccl_bus_bandwidth_gbs gauge\n",
    );
    let labels = |gpu: u32| {
        format!(
            r#"version="v5.1",slurm_job_id="42",node="{node}",gpu="{gpu}",comm_name="DP Group 0",n_nodes="2",nranks="4",collective="AllReduce",message_size="4-5MB",algo_proto="Ring_ll""#
        )
    };
    let p2p = |gpu: u32| {
        format!(
            r#"version="v5.1",slurm_job_id="42",node="{node}",gpu="{gpu}",comm_name="PP",n_nodes="1",nranks="2",p2p_operation="Send",message_size="256-257KB""#
        )
    };
    for (i, gpu) in gpus.into_iter().enumerate() {
        out.push_str(&format!(
            "nccl_bus_bandwidth_gbs{{{}}} {}\n",
            labels(gpu),
            busbw[i]
        ));
        out.push_str(&format!(
            "nccl_collective_exec_time_microseconds{{{}}} {}\n",
            labels(gpu),
            time_us[i]
        ));
        out.push_str(&format!("nccl_p2p_bus_bandwidth_gbs{{{}}} 4.5\n", p2p(gpu)));
        out.push_str(&format!(
            "nccl_p2p_exec_time_microseconds{{{}}} 58\n",
            p2p(gpu)
        ));
    }
    out
}

/// [`prom_snapshot`] gzip-compressed.
pub fn gz(text: &str) -> Vec<u8> {
    gzip(text.as_bytes())
}
