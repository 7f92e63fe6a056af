//! Library tests of the log parser: the per-line API a joiner uses (decisions in file order
//! with comm, rank, pid), the same input split at any byte boundary or cut anywhere, and
//! hostile input (random bytes, mutated samples) never panicking.

use super::event::{Event, Record};
use super::{parse_reader, LineParser, ParseOptions};
use crate::logs::{Algo, DecisionPath, Func, Proto};
use std::io::BufReader;
use std::path::Path;

mod fast_path;
mod many_files;
mod old_logs;

fn sample(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/logs")
        .join(name);
    std::fs::read(p).unwrap()
}

fn records(text: &[u8]) -> Vec<Record> {
    let mut p = LineParser::new();
    let mut out = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        p.line(line, &mut |r| out.push(r));
    }
    out
}

#[test]
fn decisions_carry_comm_rank_and_process_in_file_order() {
    let recs = records(&sample("v2.27_named_symmetric.log"));
    let ds: Vec<_> = recs
        .iter()
        .filter_map(|r| match &r.event {
            Event::Decision(d) => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(ds.len(), 6);
    let d = ds[0];
    assert_eq!(d.collective, Some(Func::AllReduce));
    assert_eq!(
        (d.bytes, d.algo, d.proto),
        (8388608, Some(Algo::Ring), Some(Proto::Simple))
    );
    assert_eq!((d.channels_lo, d.channels_hi), (Some(0), Some(23)));
    assert_eq!(
        (d.comm, d.comm_id),
        (Some(0x55aa00000010), Some(0x54fe282d32a87d85))
    );
    assert_eq!(
        (d.rank, d.nranks, d.count, d.op_count),
        (Some(0), Some(2), Some(2097152), Some(0))
    );
    assert_eq!(
        (&*d.origin.host, d.origin.pid, d.origin.line),
        ("dgx-b7", 88123, 13)
    );
    // The symmetric lines are printed by both ranks: each goes to its own rank.
    let sym: Vec<_> = ds
        .iter()
        .filter(|d| d.path == DecisionPath::Symmetric)
        .collect();
    assert_eq!(
        sym.iter().map(|d| d.rank).collect::<Vec<_>>(),
        [Some(0), Some(1)]
    );
    assert!(ds.windows(2).all(|w| w[0].origin.line < w[1].origin.line));
}

#[test]
fn numeric_decisions_take_the_collective_from_the_coll_line() {
    let recs = records(&sample("v2.21_numeric.log"));
    let d: Vec<_> = recs
        .iter()
        .filter_map(|r| match &r.event {
            Event::Decision(d) => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(d[0].collective, Some(Func::AllReduce));
    assert_eq!(d[0].model_time_us, Some(11.5));
    assert_eq!(d.last().unwrap().collective, Some(Func::AllGather));
    // 2.21 has six algorithms: 7 is not one.
    assert!(d.iter().any(|d| d.algo.is_none() && d.bytes == 2048));
}

#[test]
fn reading_in_any_chunking_gives_the_same_summary() {
    let text = sample("multihost_interleaved.log");
    let whole = parse_reader(&text[..], "x", &ParseOptions::default()).unwrap();
    for cap in [1, 2, 7, 64, 1000] {
        let r = BufReader::with_capacity(cap, &text[..]);
        let s = parse_reader(r, "x", &ParseOptions::default()).unwrap();
        assert_eq!(s.files, whole.files, "capacity {cap}");
        assert_eq!(s.decisions, whole.decisions, "capacity {cap}");
        assert_eq!(s.hosts.len(), whole.hosts.len());
    }
}

#[test]
fn every_cut_of_every_sample_parses_without_panic() {
    for name in [
        "v2.18_table_only.log",
        "v2.21_numeric.log",
        "v2.23_numeric_func.log",
        "v2.27_named_symmetric.log",
        "v2.30_ce_symmetric.log",
        "multihost_interleaved.log",
        "crlf_truncated.log",
    ] {
        let text = sample(name);
        for cut in 0..text.len() {
            let s = parse_reader(
                &text[..cut],
                name,
                &ParseOptions {
                    keep_decisions: true,
                },
            )
            .unwrap();
            let _ = super::findings::findings(&s);
        }
    }
}

#[test]
fn hostile_bytes_never_panic_and_reports_render() {
    let base = sample("multihost_interleaved.log");
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..300 {
        let mut t = base.clone();
        for _ in 0..(1 + round % 20) {
            let i = (next() as usize) % t.len();
            match next() % 4 {
                0 => t[i] = (next() & 0xff) as u8,
                1 => t[i] = b"0123456789:[] x\n|/."[(next() % 19) as usize],
                2 => {
                    t.remove(i);
                }
                _ => t.insert(i, b"\xff\x00 NCCL INFO "[(next() % 12) as usize]),
            }
        }
        let s = parse_reader(
            &t[..],
            "fuzz",
            &ParseOptions {
                keep_decisions: true,
            },
        )
        .unwrap();
        let f = super::findings::findings(&s);
        for redact in [super::redact::Redactor::none(), s.redactor()] {
            let rep = super::report::Report {
                summary: &s,
                findings: &f,
                redact: &redact,
            };
            let _ = super::report::text::render(&rep);
            let json = super::report::json::render(&rep);
            serde_json::from_str::<serde_json::Value>(&json).unwrap();
        }
    }
}

#[test]
fn over_long_lines_are_cut_and_counted() {
    let mut text = b"h:1:1 [0] NCCL INFO NCCL version 2.27.7+cuda12.9\n".to_vec();
    text.extend(std::iter::repeat_n(b'x', super::MAX_LINE + 10));
    text.extend(b"\nh:1:1 [0] NCCL INFO Using network IB\n");
    let s = parse_reader(
        BufReader::with_capacity(4096, &text[..]),
        "long",
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(s.files[0].lines, 3);
    assert!(s.files[0]
        .warnings
        .contains_key(&super::warnings::WarningKind::OverlongLine));
    assert!(s.hosts["h"].networks.contains_key("IB"));
}
