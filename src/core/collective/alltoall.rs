//! `alltoall`: every rank sends a distinct block to every rank.

use super::spec::{per_rank, uniform, AlgBytes, Blocks, InPlace, LogBytes, Nccl, Spec};
use super::{Collective, Content, OpColumn, Segment, Shape};

/// The spec.
pub(super) const SPEC: Spec = Spec {
    collective: Collective::AllToAll,
    name: "alltoall",
    about: "Every rank sends a distinct block to every rank (alltoall_perf)",
    op_column: OpColumn::None,
    reduces: false,
    rooted: false,
    // In place, a rank's block for a peer is overwritten by that peer's block for it before
    // it is read: nccl-tests does not check it and prints N/A.
    checks_in_place: false,
    power_of_two_ranks: false,
    count: per_rank,
    uneven: false,
    send: Blocks::PerPeer(uniform),
    recv: Blocks::PerPeer(uniform),
    in_place: InPlace::Base,
    algbw: AlgBytes::Size,
    busbw_factor: |n| (n - 1.0) / n,
    send_contents: |s, at| blocks(s, at.nranks, |j| (at.rank * at.nranks + j) * s.count),
    expected_contents: |s, at| blocks(s, at.nranks, |j| (j * at.nranks + at.rank) * s.count),
    nccl: Nccl {
        call: "ncclAlltoAll",
        log_func: None,
        log_bytes: LogBytes::Call,
    },
};

/// One block of `count` per peer `j`, holding the pattern from global index `first(j)`.
fn blocks(s: &Shape, n: usize, first: impl Fn(usize) -> usize) -> Vec<Segment> {
    (0..n)
        .map(|j| Segment::new(j * s.count, s.count, Content::Plain { first: first(j) }))
        .collect()
}
