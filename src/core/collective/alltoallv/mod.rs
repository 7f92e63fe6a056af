//! `alltoallv`: every rank sends a segment of its own size to every rank (nccl-tests 2.19's
//! `alltoallv_perf`). Each pair's byte count comes from the run's [`Traffic`]: generated from
//! the requested size and `NCCL_TESTS_ALLTOALLV_SPREAD`, or read from a matrix file.
//!
//! The traffic is a value of the run's configuration, chosen once from the environment before
//! the run and handed to every spec function; every layer (backends, verifier, bandwidth) asks
//! the same functions here with it, so a segment's size and place cannot differ between them.
//! A rank's send buffer holds its segments in peer order, its receive buffer the segments from
//! each source in rank order; the buffers of every rank are sized for the largest rank.

mod summary;

use super::spec::{AlgBytes, At, Blocks, InPlace, LogBytes, Nccl, Sizing, Spec};
use super::{Collective, Content, OpColumn, Segment, Shape};

pub use super::traffic::{parse_matrix, read_matrix, Matrix, Traffic};
pub use summary::summary_lines;

/// Elements `src` sends to `dst` under traffic `t`.
pub fn pair_elems(
    t: &Traffic,
    count: usize,
    elt: usize,
    src: usize,
    dst: usize,
    n: usize,
) -> usize {
    t.pair_bytes(count, elt, src, dst, n) / elt
}

/// `rank`'s send block for `peer`.
fn send_block(z: Sizing, rank: usize, peer: usize) -> usize {
    pair_elems(z.traffic, z.count, z.elt, rank, peer, z.nranks)
}

/// `rank`'s receive block from `peer`.
fn recv_block(z: Sizing, rank: usize, peer: usize) -> usize {
    pair_elems(z.traffic, z.count, z.elt, peer, rank, z.nranks)
}

fn param_count(z: Sizing) -> usize {
    z.traffic.param_count(z.count, z.elt, z.nranks)
}

/// The spec.
pub(super) const SPEC: Spec = Spec {
    collective: Collective::AllToAllv,
    name: "alltoallv",
    about: "Every rank sends a segment of its own size to every rank (alltoallv_perf)",
    op_column: OpColumn::None,
    reduces: false,
    rooted: false,
    // As alltoall: in place, a segment is overwritten before it is read; nccl-tests prints N/A.
    checks_in_place: false,
    power_of_two_ranks: false,
    count: param_count,
    uneven: true,
    send: Blocks::PerPeer(send_block),
    recv: Blocks::PerPeer(recv_block),
    in_place: InPlace::Base,
    // The size column is the largest rank's max(send, recv): nccl-tests' algbw numerator.
    algbw: AlgBytes::Size,
    busbw_factor: |n| (n - 1.0) / n,
    send_contents,
    expected_contents,
    nccl: Nccl {
        call: "ncclSend/ncclRecv",
        log_func: None,
        log_bytes: LogBytes::Call,
    },
};

/// Where rank `src`'s pattern starts: ranks own disjoint index ranges of the largest send
/// total, so a segment delivered from the wrong source or to the wrong peer shows.
fn base(s: &Shape, src: usize) -> usize {
    src * s.send_elems
}

/// Offset of `src`'s segment for `dst` in its send buffer.
fn send_offset(t: &Traffic, s: &Shape, src: usize, dst: usize, n: usize) -> usize {
    (0..dst)
        .map(|k| pair_elems(t, s.count, s.elt, src, k, n))
        .sum()
}

fn send_contents(s: &Shape, a: At) -> Vec<Segment> {
    let (t, rank, n) = (a.traffic, a.rank, a.nranks);
    let mut at = 0;
    (0..n)
        .map(|peer| {
            let len = pair_elems(t, s.count, s.elt, rank, peer, n);
            let seg = Segment::new(
                at,
                len,
                Content::Plain {
                    first: base(s, rank) + at,
                },
            );
            at += len;
            seg
        })
        .collect()
}

fn expected_contents(s: &Shape, a: At) -> Vec<Segment> {
    let (t, rank, n) = (a.traffic, a.rank, a.nranks);
    let mut at = 0;
    let mut segs: Vec<Segment> = (0..n)
        .map(|src| {
            let len = pair_elems(t, s.count, s.elt, src, rank, n);
            let first = base(s, src) + send_offset(t, s, src, rank, n);
            let seg = Segment::new(at, len, Content::Plain { first });
            at += len;
            seg
        })
        .collect();
    // Ranks receiving less than the largest total must leave the rest of the buffer alone.
    segs.push(Segment::new(
        at,
        s.recv_elems.saturating_sub(at),
        Content::Unchanged,
    ));
    segs
}

#[cfg(test)]
mod tests;
