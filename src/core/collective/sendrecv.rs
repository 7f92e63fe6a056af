//! `sendrecv`: a ring exchange, each rank sends to rank+1 and receives from rank-1.

use super::spec::{whole, AlgBytes, Blocks, InPlace, LogBytes, Nccl, Spec};
use super::{Collective, Content, OpColumn, Segment};

/// The spec.
pub(super) const SPEC: Spec = Spec {
    collective: Collective::SendRecv,
    name: "sendrecv",
    about: "Ring exchange: send to rank+1, receive from rank-1 (sendrecv_perf)",
    // nccl-tests prints and iterates the op for sendrecv although nothing is reduced.
    op_column: OpColumn::Op,
    reduces: false,
    rooted: false,
    // In place, the block sent is the one being received into.
    checks_in_place: false,
    power_of_two_ranks: false,
    count: whole,
    uneven: false,
    send: Blocks::One,
    recv: Blocks::One,
    in_place: InPlace::Base,
    algbw: AlgBytes::Size,
    busbw_factor: |_| 1.0,
    send_contents: super::all_gather::own_block,
    expected_contents: |s, at| {
        let from = (at.rank + at.nranks - 1) % at.nranks;
        vec![Segment::new(
            0,
            s.recv_elems,
            Content::Plain {
                first: from * s.count,
            },
        )]
    },
    nccl: Nccl {
        call: "ncclSend/ncclRecv",
        log_func: None,
        log_bytes: LogBytes::Call,
    },
};
