//! `reduce`: the root ends with the reduction of all ranks' inputs.

use super::spec::{whole, AlgBytes, Blocks, InPlace, LogBytes, Nccl, Spec};
use super::{Collective, Content, OpColumn, Segment, Shape};

/// The spec.
pub(super) const SPEC: Spec = Spec {
    collective: Collective::Reduce,
    name: "reduce",
    about: "The root ends with the reduction of all ranks' inputs (reduce_perf)",
    op_column: OpColumn::Op,
    reduces: true,
    rooted: true,
    checks_in_place: true,
    power_of_two_ranks: false,
    count: whole,
    uneven: false,
    send: Blocks::One,
    recv: Blocks::One,
    in_place: InPlace::Base,
    algbw: AlgBytes::Size,
    busbw_factor: |_| 1.0,
    send_contents: |s, _| {
        vec![Segment::new(
            0,
            s.send_elems,
            Content::ReduceInput { first: 0 },
        )]
    },
    expected_contents: expected,
    nccl: Nccl {
        call: "ncclReduce",
        log_func: Some("Reduce"),
        log_bytes: LogBytes::Call,
    },
};

/// The root holds the reduction; every other rank's receive buffer is left alone.
fn expected(s: &Shape, at: super::spec::At) -> Vec<Segment> {
    let c = if at.rank == at.root {
        Content::Reduced { first: 0 }
    } else {
        Content::Unchanged
    };
    vec![Segment::new(0, s.recv_elems, c)]
}
