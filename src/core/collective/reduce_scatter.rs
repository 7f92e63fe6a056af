//! `reduce_scatter`: each rank ends with its block of the reduction.

use super::spec::{per_rank, uniform, AlgBytes, Blocks, InPlace, LogBytes, Nccl, Spec};
use super::{Collective, Content, OpColumn, Segment};

/// The spec.
pub(super) const SPEC: Spec = Spec {
    collective: Collective::ReduceScatter,
    name: "reduce_scatter",
    about: "Each rank ends with its block of the reduction (reduce_scatter_perf)",
    op_column: OpColumn::Op,
    reduces: true,
    rooted: false,
    checks_in_place: true,
    power_of_two_ranks: false,
    count: per_rank,
    uneven: false,
    send: Blocks::PerPeer(uniform),
    recv: Blocks::One,
    in_place: InPlace::RecvAtOwnBlock,
    algbw: AlgBytes::Size,
    busbw_factor: |n| (n - 1.0) / n,
    send_contents: |s, _| {
        vec![Segment::new(
            0,
            s.send_elems,
            Content::ReduceInput { first: 0 },
        )]
    },
    expected_contents: |s, at| {
        vec![Segment::new(
            0,
            s.recv_elems,
            Content::Reduced {
                first: at.rank * s.count,
            },
        )]
    },
    nccl: Nccl {
        call: "ncclReduceScatter",
        log_func: Some("ReduceScatter"),
        log_bytes: LogBytes::TotalBefore2_24,
    },
};
