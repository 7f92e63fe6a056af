//! `hypercube`: an all_gather by log2(n) pairwise exchange steps.

use super::spec::{per_rank, uniform, AlgBytes, Blocks, InPlace, LogBytes, Nccl, Spec};
use super::{Collective, Content, OpColumn, Segment};

/// The spec.
pub(super) const SPEC: Spec = Spec {
    collective: Collective::Hypercube,
    name: "hypercube",
    about: "All-gather by log2(n) pairwise exchange steps (hypercube_perf)",
    op_column: OpColumn::Blank,
    reduces: false,
    rooted: false,
    checks_in_place: true,
    // Step k exchanges with rank ^ 2^k, which needs a power-of-two rank count.
    power_of_two_ranks: true,
    count: per_rank,
    uneven: false,
    send: Blocks::One,
    recv: Blocks::PerPeer(uniform),
    in_place: InPlace::SendAtOwnBlock,
    // Each rank receives n-1 blocks; nccl-tests' algbw counts those, not the whole buffer.
    algbw: AlgBytes::PeerBlocks,
    busbw_factor: |_| 1.0,
    send_contents: super::all_gather::own_block,
    expected_contents: |s, _| vec![Segment::new(0, s.recv_elems, Content::Plain { first: 0 })],
    nccl: Nccl {
        call: "ncclSend/ncclRecv",
        log_func: None,
        log_bytes: LogBytes::Call,
    },
};
