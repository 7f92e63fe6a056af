//! Record shapes against serde: a record read along a learned shape yields exactly what serde
//! yields, on records whose own values all changed, on records of other communicators and
//! processes (another branch) and of other kinds sharing a shape's beginning, and on many
//! thousands of mutated records; what a shape cannot replay is never learned.

use super::super::fast::Shapes;
use super::fast::{mutate, outcomes, outcomes_with, shapes, Rng};
use super::{ALL_REDUCE, OLD_ALL_GATHER, SEND};

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
        assert_eq!(
            outcomes_with(&text, |b| learned.read(b)),
            outcomes(&text, false),
            "{}",
            String::from_utf8_lossy(&text)
        );
    }
    assert!(along > 2_500 && off > 5_000, "{along} {off}");
}
