//! NCCL decision lines interleaved with an nccl-tests table (`NCCL_DEBUG=INFO` on the same
//! stdout), written here in every per-call TUNING format (2.20-2.22 numeric, 2.23 with the
//! function name, 2.24+ named with channels) and the way nccl-tests and NCCL share stdout: a
//! row's first fields, then the calls' COLL and TUNING lines (the first glued to the row's
//! text), then the out-of-place fields, the in-place calls, the in-place fields.

use super::*;
use crate::analysis::read::read_str;

/// How one decision line reads after the `host:pid:tid [0] NCCL INFO ` prefix.
type Format = fn(func: &str, bytes: u64, algo: usize, proto: usize) -> String;

const NAMED_ALGOS: [&str; 3] = ["TREE", "RING", "NVLS"];
const NAMED_PROTOS: [&str; 3] = ["LL", "LL128", "SIMPLE"];

/// 2.24+: `AllReduce: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..3}`.
fn named(func: &str, bytes: u64, algo: usize, proto: usize) -> String {
    format!(
        "{func}: {bytes} Bytes -> Algo {} proto {} channel{{Lo..Hi}}={{0..{}}}",
        NAMED_ALGOS[algo],
        NAMED_PROTOS[proto],
        3 + 4 * proto
    )
}

/// 2.23: `AllReduce: 1048576 Bytes -> Algo 1 proto 1 time 12.500000` (2.23's enum: 0 Tree,
/// 1 Ring; protocols 0 LL, 1 LL128, 2 Simple).
fn numeric_named(func: &str, bytes: u64, algo: usize, proto: usize) -> String {
    format!("{func}: {bytes} Bytes -> Algo {algo} proto {proto} time 12.500000")
}

/// 2.20-2.22: `1048576 Bytes -> Algo 1 proto 1 time 12.500000`.
fn numeric(_: &str, bytes: u64, algo: usize, proto: usize) -> String {
    format!("{bytes} Bytes -> Algo {algo} proto {proto} time 12.500000")
}

/// A run of `program` on 2 GPUs of one process, NCCL `version`, with `decide(bytes, in_place)`
/// giving each call's (algo, proto), `calls` calls per placement, and NCCL's `bytes` per call
/// from the row size. Each line gets `tag` in front (an Open MPI `--tag-output` prefix).
struct Run {
    program: &'static str,
    func: &'static str,
    version: &'static str,
    format: Format,
    tag: &'static str,
    nccl_bytes: fn(u64) -> u64,
    decide: fn(u64, bool, usize) -> (usize, usize),
}

fn text(r: &Run) -> String {
    let p = "node1:4242:4242 [0] NCCL INFO ";
    let mut s = String::new();
    let mut put = |line: &str| {
        s.push_str(r.tag);
        s.push_str(line);
        s.push('\n');
    };
    put("# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807");
    put(&format!("# Collective test starting: {}_perf", r.program));
    put("# nThread 1 nGpus 2 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 1 iters: 2 agg iters: 1 validation: 1 graph: 0 unalign: 0");
    put("#\n# Using devices");
    put(
        "#  Rank  0 Group  0 Pid   4242 on      node1 device  0 [0000:18:00] NVIDIA H100 80GB HBM3",
    );
    put(
        "#  Rank  1 Group  0 Pid   4242 on      node1 device  1 [0000:2a:00] NVIDIA H100 80GB HBM3",
    );
    put(&format!(
        "node1:4242:4242 [0] NCCL INFO NCCL version {}+cuda12.4",
        r.version
    ));
    put("#");
    put("#                                                              out-of-place                       in-place          ");
    put("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ");
    put("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ");
    let sizes = [1u64 << 20, 2 << 20, 4 << 20];
    // Warm-ups of every size before the table's rows, decided unlike any timed call.
    for b in sizes {
        put(&format!(
            "{p}{}",
            (r.format)(r.func, (r.nccl_bytes)(b), 2, 0)
        ));
    }
    for b in sizes {
        let op = if r.program == "all_gather" {
            "none"
        } else {
            "sum"
        };
        let mut line = format!("{b:>12}  {:>12}  {:>8}  {op:>6}  {:>6}", b / 4, "float", -1);
        for in_place in [false, true] {
            for call in 0..3 {
                let coll = format!(
                    "{p}{}: opCount {:x} sendbuff 0x7f0000000 recvbuff 0x7f8000000 count {} datatype 7 op 0 root 0 comm 0x55aa00 [nranks=2] stream 0x55bb00",
                    r.func, call, (r.nccl_bytes)(b) / 4
                );
                // The first NCCL line of a placement is glued to the table text before it.
                put(&format!("{}{coll}", std::mem::take(&mut line)));
                let (algo, proto) = (r.decide)(b, in_place, call);
                put(&format!(
                    "{p}{}",
                    (r.format)(r.func, (r.nccl_bytes)(b), algo, proto)
                ));
            }
            let t = 10.0 + b as f64 / 50e3;
            line = format!(
                "  {t:>7.2}  {:>6.2}  {:>6.2}  {:>6}",
                b as f64 / t / 1e3,
                b as f64 / t / 1e3,
                0
            );
        }
        put(&line);
    }
    put("# Out of bounds values : 0 OK");
    s
}

fn ring_ll128(_: u64, _: bool, _: usize) -> (usize, usize) {
    (1, 1)
}

fn same(b: u64) -> u64 {
    b
}

/// (algo, proto, channels) of every row, by placement.
fn decisions(set: &ReadSet) -> Vec<(u64, &'static str, String)> {
    set.rows
        .iter()
        .map(|r| {
            let t = r.tuning.as_ref().map_or("-".to_string(), |t| {
                format!("{}/{}/{}", t.algo, t.proto, t.channels)
            });
            (r.bytes, r.placement.name(), t)
        })
        .collect()
}

#[test]
fn named_decisions_of_2_24_annotate_both_placements_and_not_the_warm_ups() {
    let run = Run {
        program: "all_reduce",
        func: "AllReduce",
        version: "2.27.7",
        format: named,
        tag: "",
        nccl_bytes: same,
        decide: ring_ll128,
    };
    let set = read_str("inline", &text(&run)).unwrap();
    assert_eq!(
        (set.rows.len(), set.skipped.len()),
        (6, 0),
        "{:?}",
        skips(&set)
    );
    for (bytes, placement, t) in decisions(&set) {
        assert_eq!(t, "Ring/LL128/0-7", "{bytes} {placement}");
    }
}

#[test]
fn numeric_decisions_of_2_20_to_2_23_decode_with_the_printed_version() {
    for (version, format) in [
        ("2.21.5", numeric as Format),
        ("2.23.4", numeric_named as Format),
    ] {
        let run = Run {
            program: "all_reduce",
            func: "AllReduce",
            version,
            format,
            tag: "",
            nccl_bytes: same,
            decide: ring_ll128,
        };
        let set = read_str("inline", &text(&run)).unwrap();
        assert_eq!(set.rows.len(), 6, "{version}");
        for r in &set.rows {
            let t = r
                .tuning
                .as_ref()
                .unwrap_or_else(|| panic!("{version}: {} undecided", r.bytes));
            assert_eq!(
                (t.algo.as_str(), t.proto.as_str(), t.channels.as_str()),
                ("Ring", "LL128", ""),
                "{version}"
            );
            assert_eq!(t.model_time_us, Some(12.5), "{version}");
        }
    }
}

#[test]
fn each_placement_gets_its_own_calls_and_a_mixed_one_lists_them() {
    // Out of place Tree/LL at 2 MiB, in place Ring/LL128 then Ring/Simple on the last call.
    fn decide(b: u64, in_place: bool, call: usize) -> (usize, usize) {
        match (b == 2 << 20, in_place, call) {
            (true, false, _) => (0, 0),
            (true, true, 2) => (1, 2),
            _ => (1, 1),
        }
    }
    let run = Run {
        program: "all_reduce",
        func: "AllReduce",
        version: "2.27.7",
        format: named,
        tag: "[1,0]<stdout>:",
        nccl_bytes: same,
        decide,
    };
    let set = read_str("inline", &text(&run)).unwrap();
    assert_eq!(
        decisions(&set)[2..4],
        [
            (2 << 20, "out_of_place", "Tree/LL/0-3".to_string()),
            (
                2 << 20,
                "in_place",
                "Ring|Ring/LL128|Simple/0-7|0-11".to_string()
            ),
        ]
    );
}

#[test]
fn all_gather_bytes_are_the_total_before_2_24_and_per_rank_after() {
    let total = Run {
        program: "all_gather",
        func: "AllGather",
        version: "2.21.5",
        format: numeric,
        tag: "",
        nccl_bytes: same,
        decide: ring_ll128,
    };
    let set = read_str("ag", &text(&total)).unwrap();
    assert!(
        set.rows.iter().all(|r| r.tuning.is_some()),
        "{:?}",
        decisions(&set)
    );
    fn per_rank(b: u64) -> u64 {
        b / 2
    }
    let split = Run {
        version: "2.27.7",
        format: named,
        nccl_bytes: per_rank,
        ..total
    };
    let set = read_str("ag", &text(&split)).unwrap();
    assert!(
        set.rows.iter().all(|r| r.tuning.is_some()),
        "{:?}",
        decisions(&set)
    );
    // A per-rank size under 2.21 is not this row's call: no annotation, never a wrong one.
    let wrong = Run {
        version: "2.21.5",
        format: numeric,
        nccl_bytes: per_rank,
        ..total
    };
    let set = read_str("ag", &text(&wrong)).unwrap();
    assert!(
        set.rows.iter().all(|r| r.tuning.is_none()),
        "{:?}",
        decisions(&set)
    );
}

#[test]
fn another_collective_s_decisions_do_not_annotate() {
    let run = Run {
        program: "all_reduce",
        func: "Broadcast",
        version: "2.27.7",
        format: named,
        tag: "",
        nccl_bytes: same,
        decide: ring_ll128,
    };
    let set = read_str("inline", &text(&run)).unwrap();
    assert!(set.rows.iter().all(|r| r.tuning.is_none()));
}
