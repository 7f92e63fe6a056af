//! `gather`: the root ends with every rank's block, in rank order.

use super::spec::{per_rank, uniform, AlgBytes, Blocks, InPlace, LogBytes, Nccl, Spec};
use super::{Collective, Content, OpColumn, Segment, Shape};

/// The spec.
pub(super) const SPEC: Spec = Spec {
    collective: Collective::Gather,
    name: "gather",
    about: "The root receives every rank's block, in rank order (gather_perf)",
    op_column: OpColumn::None,
    reduces: false,
    rooted: true,
    checks_in_place: true,
    power_of_two_ranks: false,
    count: per_rank,
    uneven: false,
    send: Blocks::One,
    recv: Blocks::PerPeer(uniform),
    in_place: InPlace::SendAtOwnBlock,
    algbw: AlgBytes::Size,
    busbw_factor: |n| (n - 1.0) / n,
    send_contents: super::all_gather::own_block,
    expected_contents: expected,
    nccl: Nccl {
        call: "ncclGather",
        log_func: None,
        log_bytes: LogBytes::Call,
    },
};

/// The root holds every block; every other rank's receive buffer is left alone.
fn expected(s: &Shape, at: super::spec::At) -> Vec<Segment> {
    let c = if at.rank == at.root {
        Content::Plain { first: 0 }
    } else {
        Content::Unchanged
    };
    vec![Segment::new(0, s.recv_elems, c)]
}
