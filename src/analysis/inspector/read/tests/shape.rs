//! Record shapes against serde: a record read along a learned shape yields exactly what serde
//! yields, on records whose own values all changed, on records of other communicators and
//! processes (another branch) and of other kinds sharing a shape's beginning, and on many
//! thousands of mutated records; what a shape cannot replay is never learned; the records read
//! along one shape share one source.

use super::super::fast::Shapes;
use super::super::intern::Interner;
use super::super::json::{parse, Parsed};
use super::super::split::{scan, Found};
use super::fast::{mutate, outcomes, outcomes_with, shapes, Rng};
use super::{ALL_REDUCE, OLD_ALL_GATHER, SEND};
use std::path::PathBuf;
use std::sync::Arc;

/// What scanning `bytes` of `file` yields with records built along `learned`'s shapes, as a
/// piece of a file reads them.
fn recorded(
    bytes: &[u8],
    learned: &mut Shapes,
    file: &Arc<PathBuf>,
    sources: &mut Interner,
) -> (Vec<(usize, Parsed)>, usize) {
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
        out.push((at, parse(text, file, &mut Interner::default())));
    }
    out.sort_by_key(|(at, _)| *at);
    (out, consumed)
}

/// Shapes learned from one record of each documented shape.
fn trained() -> Shapes {
    let mut learned = Shapes::default();
    for text in shapes() {
        learned.read(text.as_bytes());
    }
    learned
}

/// `text` with each `(from, to)` replaced once.
fn edit(text: &str, edits: &[(&str, &str)]) -> String {
    edits
        .iter()
        .fold(text.to_string(), |t, (from, to)| t.replacen(from, to, 1))
}

#[test]
fn a_record_of_a_learned_shape_is_read_along_it_whatever_its_own_values() {
    let mut learned = Shapes::default();
    assert!(!learned.fits(ALL_REDUCE.as_bytes()));
    assert!(learned.read(ALL_REDUCE.as_bytes()).is_some());
    // The header and metadata but the time are one step; each other value ends one.
    assert_eq!(learned.steps(), 9);
    let other = edit(
        ALL_REDUCE,
        &[
            ("1748030377748202", "9"),
            ("AllReduce", "AllGather"),
            ("1407", "0"),
            ("17179869184", "1024"),
            ("61974", "12.5"),
            ("kernel_gpu", "collective_cpu"),
            ("277.210914", "\"nan\""),
            ("485.119099", "null"),
        ],
    );
    assert!(learned.fits(other.as_bytes()), "{other}");
    let (read, _) = outcomes_with(other.as_bytes(), |b| learned.read(b));
    assert_eq!(read.len(), 1);
    assert_eq!(
        (read, learned.steps()),
        (outcomes(other.as_bytes(), false).0, 9)
    );
}

#[test]
fn another_communicator_or_process_is_another_branch_learned_once() {
    let mut learned = Shapes::default();
    learned.read(ALL_REDUCE.as_bytes());
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
    ] {
        let other = ALL_REDUCE.replacen(from, to, 1);
        let before = learned.steps();
        assert!(!learned.fits(other.as_bytes()), "{other}");
        let read = outcomes_with(other.as_bytes(), |b| learned.read(b));
        assert_eq!(read, outcomes(other.as_bytes(), false));
        assert!(learned.fits(other.as_bytes()), "{other}");
        // Fields before the time part at the root; the host and pid after the time.
        let after_time = from == "example-hostname" || from == "1639453";
        assert_eq!(learned.steps() - before, if after_time { 8 } else { 9 });
    }
    assert!(learned.fits(ALL_REDUCE.as_bytes()));
}

#[test]
fn shapes_share_their_common_beginning_and_each_kind_is_read_along_its_own() {
    let mut learned = Shapes::default();
    learned.read(ALL_REDUCE.as_bytes());
    // A send by the same process on the same communicator parts from the all-reduce after
    // the time.
    let perf = &SEND[SEND.find(r#""p2p_perf""#).unwrap()..];
    let own_send = ALL_REDUCE[..ALL_REDUCE.find(r#""coll_perf""#).unwrap()].to_string() + perf;
    learned.read(own_send.as_bytes());
    assert_eq!(learned.steps(), 9 + 9);
    learned.read(SEND.as_bytes());
    learned.read(OLD_ALL_GATHER.as_bytes());
    assert_eq!(learned.steps(), 18 + 10 + 8);
    for text in [ALL_REDUCE, SEND, OLD_ALL_GATHER, &own_send] {
        assert!(learned.fits(text.as_bytes()), "{text}");
        assert_eq!(
            outcomes_with(text.as_bytes(), |b| learned.read(b)),
            outcomes(text.as_bytes(), false)
        );
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
    for text in [verbose.as_str(), other_kind, duplicate.as_str()] {
        let mut learned = Shapes::default();
        learned.read(text.as_bytes());
        assert_eq!(learned.steps(), 0, "{text}");
        assert_eq!(
            outcomes_with(text.as_bytes(), |b| learned.read(b)),
            outcomes(text.as_bytes(), false)
        );
    }
}

#[test]
fn reading_along_shapes_reads_what_serde_reads_on_mutated_records() {
    let base = shapes();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut along, mut off) = (0, 0);
    let mut learned = trained();
    for i in 0..30_000 {
        // Mutated records are learned too; a fresh set now and then keeps learning going.
        if i % 300 == 0 {
            learned = trained();
        }
        let text = mutate(&mut rng, base[i % base.len()].as_bytes());
        if learned.fits(&text) {
            along += 1;
        } else {
            off += 1;
        }
        let want = outcomes(&text, false);
        assert_eq!(
            outcomes_with(&text, |b| learned.read(b)),
            want,
            "{}",
            String::from_utf8_lossy(&text)
        );
        // Built as a piece builds them: sources remembered along shapes change nothing.
        let file = Arc::new(PathBuf::from("f.log"));
        assert_eq!(
            recorded(&text, &mut learned, &file, &mut Interner::default()),
            want,
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
    let mut sources = Interner::default();
    let others = [
        ALL_REDUCE.replacen("0x7f8c496ae9f661", "0x1", 1),
        ALL_REDUCE.replacen(r#""rank":2"#, r#""rank":3"#, 1),
        ALL_REDUCE.replacen("example-hostname", "n2", 1),
        ALL_REDUCE.replacen("1639453", "3", 1),
        ALL_REDUCE.to_string(),
    ];
    // Each communicator and process three times, interleaved, with its own values changed.
    let mut firsts: Vec<Option<Arc<_>>> = vec![None; others.len()];
    for round in 0..3 {
        for (k, text) in others.iter().enumerate() {
            let text = text.replacen(r#""coll_sn":1407"#, &format!(r#""coll_sn":{round}"#), 1);
            let (len, parsed) = learned
                .record(text.as_bytes(), &file, &mut sources)
                .expect("read by the fast path");
            assert_eq!(len, text.len());
            assert_eq!(
                parsed,
                parse(text.as_bytes(), &file, &mut Interner::default())
            );
            let Parsed::Record(r, _) = parsed else {
                panic!("{text}")
            };
            match &firsts[k] {
                Some(first) => assert!(Arc::ptr_eq(first, &r.source), "{text}"),
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
