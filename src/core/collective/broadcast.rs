//! `broadcast`: the root's buffer is copied to every rank.

use super::spec::{whole, AlgBytes, Blocks, InPlace, LogBytes, Nccl, Spec};
use super::{Collective, Content, OpColumn, Segment, Shape};

/// The spec.
pub(super) const SPEC: Spec = Spec {
    collective: Collective::Broadcast,
    name: "broadcast",
    about: "The root's buffer is copied to every rank (broadcast_perf)",
    op_column: OpColumn::None,
    reduces: false,
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
    send_contents: root_sends,
    expected_contents: |s, _| vec![Segment::new(0, s.recv_elems, Content::Plain { first: 0 })],
    nccl: Nccl {
        call: "ncclBroadcast",
        log_func: Some("Broadcast"),
        log_bytes: LogBytes::Call,
    },
};

/// The root sends the pattern; any other rank's send buffer holds a decoy that must reach no
/// output (broadcast, scatter).
pub(super) fn root_sends(s: &Shape, at: super::spec::At) -> Vec<Segment> {
    let content = if at.rank == at.root {
        Content::Plain { first: 0 }
    } else {
        Content::Decoy
    };
    vec![Segment::new(0, s.send_elems, content)]
}
