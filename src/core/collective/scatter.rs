//! `scatter`: the root sends a distinct block to every rank.

use super::spec::{per_rank, uniform, AlgBytes, Blocks, InPlace, LogBytes, Nccl, Spec};
use super::{Collective, Content, OpColumn, Segment};

/// The spec.
pub(super) const SPEC: Spec = Spec {
    collective: Collective::Scatter,
    name: "scatter",
    about: "The root sends a distinct block to every rank (scatter_perf)",
    op_column: OpColumn::None,
    reduces: false,
    rooted: true,
    checks_in_place: true,
    power_of_two_ranks: false,
    count: per_rank,
    uneven: false,
    send: Blocks::PerPeer(uniform),
    recv: Blocks::One,
    in_place: InPlace::RecvAtOwnBlock,
    algbw: AlgBytes::Size,
    busbw_factor: |n| (n - 1.0) / n,
    send_contents: super::broadcast::root_sends,
    expected_contents: |s, at| {
        vec![Segment::new(
            0,
            s.recv_elems,
            Content::Plain {
                first: at.rank * s.count,
            },
        )]
    },
    nccl: Nccl {
        call: "ncclScatter",
        log_func: None,
        log_bytes: LogBytes::Call,
    },
};
