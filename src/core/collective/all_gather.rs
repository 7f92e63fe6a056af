//! `all_gather`: every rank ends with every rank's block, in rank order.

use super::spec::{per_rank, uniform, AlgBytes, Blocks, InPlace, LogBytes, Nccl, Spec};
use super::{Collective, Content, OpColumn, Segment, Shape};

/// The spec.
pub(super) const SPEC: Spec = Spec {
    collective: Collective::AllGather,
    name: "all_gather",
    about: "Every rank ends with every rank's block, in rank order (all_gather_perf)",
    op_column: OpColumn::None,
    reduces: false,
    rooted: false,
    checks_in_place: true,
    power_of_two_ranks: false,
    count: per_rank,
    uneven: false,
    send: Blocks::One,
    recv: Blocks::PerPeer(uniform),
    in_place: InPlace::SendAtOwnBlock,
    algbw: AlgBytes::Size,
    busbw_factor: |n| (n - 1.0) / n,
    send_contents: own_block,
    expected_contents: |s, _| vec![Segment::new(0, s.recv_elems, Content::Plain { first: 0 })],
    nccl: Nccl {
        call: "ncclAllGather",
        log_func: Some("AllGather"),
        log_bytes: LogBytes::TotalBefore2_24,
    },
};

/// A rank sends its own block of the global pattern (all_gather, gather, hypercube, sendrecv).
pub(super) fn own_block(s: &Shape, at: super::spec::At) -> Vec<Segment> {
    vec![Segment::new(
        0,
        s.count,
        Content::Plain {
            first: at.rank * s.count,
        },
    )]
}
