//! The join on synthetic 2.27 logs: mixed decisions are kept apart, warm-ups and calls without
//! a line are counted but not annotated, other communicators' lines are ignored, and the
//! opCount mapping is found whether opCount counts calls or launch groups.

use super::*;
use crate::core::dtype::DataType;
use crate::core::op::RedOp;
use crate::logs::LineParser;
use crate::result::Placement;

const PID: u32 = 7;

fn op(seq: u64, group: u64, count: u64, phase: Phase) -> OpKey {
    OpKey {
        collective: Collective::AllReduce,
        dtype: DataType::Float,
        op: RedOp::Sum,
        root: 0,
        count,
        bytes: count * 4,
        placement: Placement::OutOfPlace,
        phase,
        seq,
        group,
    }
}

/// Feeds log lines (`[dev] NCCL INFO ...`, or without the device for device 0) of process
/// [`PID`].
fn feed(j: &mut Joiner, p: &mut LineParser, lines: &[String]) {
    for l in lines {
        let l = if l.starts_with('[') {
            l.clone()
        } else {
            format!("[0] NCCL INFO {l}")
        };
        let line = format!("host:{PID}:{PID} {l}");
        p.line(line.as_bytes(), &mut |r| j.record(&r));
    }
}

fn init(comm: u64, rank: u32) -> String {
    format!(
        "[{rank}] NCCL INFO ncclCommInitRank comm {comm:#x} rank {rank} nranks 2 cudaDev {rank} nvmlDev {rank} \
         busId 18000 commId 0x99 - Init COMPLETE"
    )
}

/// A COLL line, logged on the device of the communicator's rank (0xa rank 0, 0xb rank 1).
fn coll(op_count: u64, count: u64, comm: u64) -> String {
    format!(
        "[{}] NCCL INFO AllReduce: opCount {op_count:x} sendbuff 0x1 recvbuff 0x2 count {count} datatype 7 \
         op 0 root 0 comm {comm:#x} [nranks=2] stream 0x3",
        comm - 0xa
    )
}

fn decision(bytes: u64, algo: &str, proto: &str) -> String {
    format!("AllReduce: {bytes} Bytes -> Algo {algo} proto {proto} channel{{Lo..Hi}}={{0..3}}")
}

fn setup() -> (Joiner, LineParser) {
    let mut j = Joiner::new(2, Some(PID));
    let mut p = LineParser::new();
    let lines = [
        "NCCL version 2.27.3+cuda12.4".to_string(),
        init(0xa, 0),
        init(0xb, 1),
    ];
    feed(&mut j, &mut p, &lines);
    (j, p)
}

#[test]
fn differing_decisions_of_one_measurement_are_mixed_and_listed() {
    let (mut j, mut p) = setup();
    // A warm-up of another size, then three calls of the measurement.
    j.call(&op(0, 0, 64, Phase::Warmup));
    for s in 1..4 {
        j.call(&op(
            s,
            s,
            256,
            if s == 1 { Phase::Untimed } else { Phase::Timed },
        ));
    }
    let mut lines = vec![];
    for (s, proto) in [(0, ""), (1, "LL"), (2, "LL128"), (3, "LL")] {
        let count = if s == 0 { 64 } else { 256 };
        lines.push(coll(s, count, 0xa));
        lines.push(coll(s, count, 0xb));
        let p = if s == 0 { "LL" } else { proto };
        lines.push(decision(count * 4, "RING", p));
    }
    feed(&mut j, &mut p, &lines);
    let t = j.take_measurement();
    assert_eq!((t.kind(), t.calls, t.unmatched_calls), ("mixed", 3, 0));
    assert_eq!(
        (t.algo_text(), t.proto_text()),
        ("Ring|Ring".into(), "LL|LL128".into())
    );
    assert_eq!(
        t.decisions.iter().map(|d| d.calls).collect::<Vec<_>>(),
        vec![2, 1]
    );
    assert_eq!((j.decisions, j.joined), (4, 4));
    assert_eq!(j.op_count_text(), "opCount = seq + 0 for 4 calls");
}

#[test]
fn calls_without_lines_other_comms_and_stray_lines_are_not_annotations() {
    let (mut j, mut p) = setup();
    j.call(&op(0, 0, 0, Phase::Untimed));
    j.call(&op(1, 1, 256, Phase::Timed));
    let lines = vec![
        coll(0, 0, 0xa),
        coll(1, 256, 0xa),
        // Rank 1's communicator (FAKE_NCCL_TUNING_ALL_RANKS-like) and a size nobody called.
        coll(1, 256, 0xb),
        decision(1024, "TREE", "LL"),
        decision(4096, "RING", "SIMPLE"),
    ];
    feed(&mut j, &mut p, &lines);
    let t = j.take_measurement();
    assert_eq!((t.kind(), t.calls, t.unmatched_calls), ("single", 2, 1));
    assert_eq!(t.short(), "Tree/LL/0-3");
    assert_eq!((j.decisions, j.joined), (2, 1));
    // The next measurement starts empty; a late line for an old call matches nothing.
    feed(&mut j, &mut p, &[decision(1024, "TREE", "LL")]);
    let t = j.take_measurement();
    assert_eq!((t.kind(), t.calls), ("", 0));
}

#[test]
fn an_op_count_that_counts_launch_groups_is_reported_as_such() {
    let (mut j, mut p) = setup();
    // Warm-up 0 (group 0), then two -m 2 groups of calls 1-2 and 3-4, opCount per group + 5.
    let calls = [(0, 0), (1, 1), (2, 1), (3, 2), (4, 2)];
    let mut lines = vec![];
    for (s, g) in calls {
        j.call(&op(s, g, 256, Phase::Timed));
        lines.push(coll(g + 5, 256, 0xa));
    }
    feed(&mut j, &mut p, &lines);
    assert_eq!(
        j.op_count_text(),
        "opCount = launch group + 5 for 5 calls (calls of a group share one)"
    );
    // A COLL line that disagrees with its call is counted, not mapped.
    j.call(&op(5, 3, 256, Phase::Timed));
    feed(&mut j, &mut p, &[coll(9, 128, 0xa)]);
    assert!(j
        .op_count_text()
        .ends_with("1 COLL lines disagreed with the call at their position, 0 had none"));
}
