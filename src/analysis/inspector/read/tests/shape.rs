//! Record shapes against serde: a record read along a learned shape yields exactly what serde
//! yields, on records whose own values all changed, on records of other communicators,
//! processes and functions (another branch) and of other kinds sharing a shape's beginning,
//! and on many thousands of mutated records; what a shape cannot replay is never learned; the
//! records read along one shape share one source. (Debug builds also hold every record read
//! along a shape to the same object read field by field.)

use super::super::fast::Shapes;
use super::super::intern::Interner;
use super::super::json::{parse, Parsed};
use super::super::split::{scan, Found};
use super::fast::{mutate, outcomes, shapes, Rng};
use super::{ALL_REDUCE, OLD_ALL_GATHER, SEND};
use crate::analysis::inspector::record::{Op, Source};
use std::path::PathBuf;
use std::sync::Arc;

/// What scanning `bytes` of `file` yields with records built along `learned`'s shapes, as a
/// piece of a file reads them.
fn recorded<'a>(
    bytes: &[u8],
    learned: &mut Shapes<'a>,
    file: &Arc<PathBuf>,
    sources: &mut Interner<'a>,
) -> (Vec<(usize, Parsed<'a>)>, usize) {
    let mut out = Vec::new();
    let mut left = Vec::new();
    let consumed = scan(
        bytes,
        |b| learned.record(b, file, sources),
        |found| match found {
            Found::Read { at, value } => out.push((at, value)),
            Found::Object { at, text } => left.push((at, text)),
            Found::Garbage { at, reason } => out.push((at, Parsed::Skip(reason))),
        },
    );
    for (at, text) in left {
        out.push((at, parse(text, file, &mut Interner::new(super::arena()))));
    }
    out.sort_by_key(|(at, _)| *at);
    (out, consumed)
}

/// Shapes learned from one record of each documented shape of `file`.
fn trained(file: &Arc<PathBuf>) -> Shapes<'static> {
    let mut learned = Shapes::default();
    for text in shapes() {
        recorded(
            text.as_bytes(),
            &mut learned,
            file,
            &mut Interner::new(super::arena()),
        );
    }
    learned
}

/// What scanning `text` yields through `learned` (a file's piece reading it), which must be
/// what serde yields; `learned` learns from it.
fn read_along<'a>(
    learned: &mut Shapes<'a>,
    file: &Arc<PathBuf>,
    text: &str,
) -> Vec<(usize, Parsed<'a>)> {
    let (read, _) = recorded(
        text.as_bytes(),
        learned,
        file,
        &mut Interner::new(super::arena()),
    );
    assert_eq!(read, outcomes(text.as_bytes(), false).0, "{text}");
    read
}

/// `text` with each `(from, to)` replaced once.
fn edit(text: &str, edits: &[(&str, &str)]) -> String {
    edits
        .iter()
        .fold(text.to_string(), |t, (from, to)| t.replacen(from, to, 1))
}

#[test]
fn a_record_of_a_learned_shape_is_read_along_it_whatever_its_own_values() {
    let file = Arc::new(PathBuf::from("f.log"));
    let mut learned = Shapes::default();
    assert!(!learned.fits(ALL_REDUCE.as_bytes()));
    read_along(&mut learned, &file, ALL_REDUCE);
    // The header, the metadata but the time, the function name and the timing source are
    // part of the steps' bytes; each other value ends one.
    assert_eq!(learned.steps(), 7);
    let other = edit(
        ALL_REDUCE,
        &[
            ("1748030377748202", "9"),
            ("1407", "0"),
            ("17179869184", "1024"),
            ("61974", "12.5"),
            ("277.210914", "\"nan\""),
            ("485.119099", "null"),
        ],
    );
    assert!(learned.fits(other.as_bytes()), "{other}");
    assert_eq!(read_along(&mut learned, &file, &other).len(), 1);
    assert_eq!(learned.steps(), 7);
    // A send's peer is its own, as are its other values.
    read_along(&mut learned, &file, SEND);
    let steps = learned.steps();
    let other = edit(
        SEND,
        &[
            ("11", "12"),
            (r#""p2p_peer":5"#, r#""p2p_peer":0"#),
            ("65536", "8"),
        ],
    );
    assert!(learned.fits(other.as_bytes()), "{other}");
    let read = read_along(&mut learned, &file, &other);
    let Parsed::Record(r, _) = &read[0].1 else {
        panic!("{read:?}")
    };
    assert_eq!(r.op(), Op::Send { peer: Some(0) });
    assert_eq!(learned.steps(), steps);
}

#[test]
fn another_communicator_or_process_is_another_branch_learned_once() {
    let file = Arc::new(PathBuf::from("f.log"));
    let mut learned = Shapes::default();
    read_along(&mut learned, &file, ALL_REDUCE);
    for (from, to) in [
        ("0x7f8c496ae9f661", "0x1"),
        ("DP Group 0", "TP Group 12"),
        (r#""rank":2"#, r#""rank":17"#),
        (r#""n_ranks":8"#, r#""n_ranks":64"#),
        (r#""nnodes":1"#, r#""nnodes":null"#),
        ("v4.0", "v4.1"),
        (r#""git_rev":"""#, r#""git_rev":"abc""#),
        ("example-hostname", "n2"),
        ("1639453", "3"),
        ("AllReduce", "AllGather"),
        ("kernel_gpu", "collective_cpu"),
    ] {
        let other = ALL_REDUCE.replacen(from, to, 1);
        let before = learned.steps();
        assert!(!learned.fits(other.as_bytes()), "{other}");
        read_along(&mut learned, &file, &other);
        assert!(learned.fits(other.as_bytes()), "{other}");
        read_along(&mut learned, &file, &other);
        // Fields before the time part at the root; the host, pid and function name after the
        // time; the timing source before the algorithm bandwidth.
        let new_steps = match from {
            "example-hostname" | "1639453" | "AllReduce" => 6,
            "kernel_gpu" => 3,
            _ => 7,
        };
        assert_eq!(learned.steps() - before, new_steps, "{other}");
    }
    assert!(learned.fits(ALL_REDUCE.as_bytes()));
}

#[test]
fn shapes_share_their_common_beginning_and_each_kind_is_read_along_its_own() {
    let file = Arc::new(PathBuf::from("f.log"));
    let mut learned = Shapes::default();
    read_along(&mut learned, &file, ALL_REDUCE);
    // A send by the same process on the same communicator parts from the all-reduce after
    // the time.
    let perf = &SEND[SEND.find(r#""p2p_perf""#).unwrap()..];
    let own_send = ALL_REDUCE[..ALL_REDUCE.find(r#""coll_perf""#).unwrap()].to_string() + perf;
    read_along(&mut learned, &file, &own_send);
    assert_eq!(learned.steps(), 7 + 7);
    read_along(&mut learned, &file, SEND);
    read_along(&mut learned, &file, OLD_ALL_GATHER);
    assert_eq!(learned.steps(), 14 + 8 + 7);
    for text in [ALL_REDUCE, SEND, OLD_ALL_GATHER, &own_send] {
        assert!(learned.fits(text.as_bytes()), "{text}");
        read_along(&mut learned, &file, text);
    }
    // Other spacing is another shape.
    let spaced = ALL_REDUCE.replace(r#","coll_sn":"#, r#", "coll_sn":"#);
    assert!(!learned.fits(spaced.as_bytes()));
}

#[test]
fn what_a_shape_cannot_replay_is_never_learned() {
    let trace = r#","event_trace_sn":{"coll_start_sn":1},"event_trace_ts":{"coll_start_ts":5}}}"#;
    let verbose = ALL_REDUCE.strip_suffix("}}").unwrap().to_string() + trace;
    let other_kind = r#"{"header":{"id":"0x1","n_ranks":2},"kernel_perf":{"x":1}}"#;
    let duplicate = ALL_REDUCE.replace(r#""rank":2"#, r#""rank":2,"rank":3"#);
    let file = Arc::new(PathBuf::from("f.log"));
    for text in [verbose.as_str(), other_kind, duplicate.as_str()] {
        let mut learned = Shapes::default();
        read_along(&mut learned, &file, text);
        assert_eq!(learned.steps(), 0, "{text}");
        read_along(&mut learned, &file, text);
    }
}

#[test]
fn reading_along_shapes_reads_what_serde_reads_on_mutated_records() {
    let base = shapes();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut along, mut off) = (0, 0);
    let file = Arc::new(PathBuf::from("f.log"));
    let mut learned = trained(&file);
    let mut sources = Interner::new(super::arena());
    for i in 0..30_000 {
        // Mutated records are learned too; a fresh set now and then keeps learning going.
        if i % 300 == 0 {
            learned = trained(&file);
        }
        let text = mutate(&mut rng, base[i % base.len()].as_bytes());
        if learned.fits(&text) {
            along += 1;
        } else {
            off += 1;
        }
        assert_eq!(
            recorded(&text, &mut learned, &file, &mut sources),
            outcomes(&text, false),
            "{}",
            String::from_utf8_lossy(&text)
        );
    }
    assert!(along > 2_500 && off > 5_000, "{along} {off}");
}

#[test]
fn records_read_along_one_shape_share_its_source_and_no_other() {
    let file = Arc::new(PathBuf::from("f.log"));
    let mut learned = Shapes::default();
    let mut sources = Interner::new(super::arena());
    let others = [
        ALL_REDUCE.replacen("0x7f8c496ae9f661", "0x1", 1),
        ALL_REDUCE.replacen(r#""rank":2"#, r#""rank":3"#, 1),
        ALL_REDUCE.replacen("example-hostname", "n2", 1),
        ALL_REDUCE.replacen("1639453", "3", 1),
        ALL_REDUCE.to_string(),
    ];
    // Each communicator and process three times, interleaved, with its own values changed.
    let mut firsts: Vec<Option<&Source>> = vec![None; others.len()];
    for round in 0..3 {
        for (k, text) in others.iter().enumerate() {
            let text = text.replacen(r#""coll_sn":1407"#, &format!(r#""coll_sn":{round}"#), 1);
            let (len, parsed) = learned
                .record(text.as_bytes(), &file, &mut sources)
                .expect("read by the fast path");
            assert_eq!(len, text.len());
            assert_eq!(
                parsed,
                parse(text.as_bytes(), &file, &mut Interner::new(super::arena()))
            );
            let Parsed::Record(r, _) = parsed else {
                panic!("{text}")
            };
            match &firsts[k] {
                Some(first) => assert!(std::ptr::eq(*first, r.source), "{text}"),
                None => firsts[k] = Some(r.source),
            }
        }
    }
    for (i, a) in firsts.iter().enumerate() {
        for b in &firsts[i + 1..] {
            assert_ne!(a, b);
        }
    }
    // The same shape read for another file: its source names that file.
    let other_file = Arc::new(PathBuf::from("g.log"));
    let (_, parsed) = learned
        .record(ALL_REDUCE.as_bytes(), &other_file, &mut sources)
        .unwrap();
    let Parsed::Record(r, _) = parsed else {
        panic!()
    };
    assert_eq!(*r.source.file, PathBuf::from("g.log"));
}
