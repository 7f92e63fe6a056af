//! `all_reduce`: every rank ends with the reduction of all ranks' inputs.

use super::spec::{whole, AlgBytes, Blocks, InPlace, LogBytes, Nccl, Spec};
use super::{Collective, Content, OpColumn, Segment};

/// The spec.
pub(super) const SPEC: Spec = Spec {
    collective: Collective::AllReduce,
    name: "all_reduce",
    about: "Every rank ends with the reduction of all ranks' inputs (all_reduce_perf)",
    op_column: OpColumn::Op,
    reduces: true,
    rooted: false,
    checks_in_place: true,
    power_of_two_ranks: false,
    count: whole,
    uneven: false,
    send: Blocks::One,
    recv: Blocks::One,
    in_place: InPlace::Base,
    algbw: AlgBytes::Size,
    // Reduce-scatter then all-gather: each rank moves 2(n-1)/n of the buffer.
    busbw_factor: |n| 2.0 * (n - 1.0) / n,
    send_contents: |s, _| {
        vec![Segment::new(
            0,
            s.send_elems,
            Content::ReduceInput { first: 0 },
        )]
    },
    expected_contents: |s, _| vec![Segment::new(0, s.recv_elems, Content::Reduced { first: 0 })],
    nccl: Nccl {
        call: "ncclAllReduce",
        log_func: Some("AllReduce"),
        log_bytes: LogBytes::Call,
    },
};
