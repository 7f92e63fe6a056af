//! What each rank's worker does for one call: the call is checked, then cut into phases of
//! copy and reduce operations, one list per worker thread.
//!
//! The plans partition the work so that, within a phase, no thread writes bytes that another
//! thread reads or writes (the race tests check every collective, out-of-place and in-place).
//! Workers meet at a barrier between phases. Layouts that the plans were not proven for (any
//! overlap of a rank's send and receive regions other than the table's in-place offsets, and
//! in-place alltoall, alltoallv and sendrecv, which read what other ranks overwrite) run *staged*: every
//! thread first copies all its inputs aside, then all threads write.

use crate::bench::backend::{Buf, BufPtr, Call};
use crate::core::collective::Collective;
use crate::core::error::Error;

/// A byte position in one rank's allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Loc {
    /// Rank owning the allocation.
    pub rank: usize,
    /// Which allocation.
    pub buf: Buf,
    /// Byte offset.
    pub offset: usize,
}

impl Loc {
    /// The position `bytes` further on.
    pub(super) fn add(self, bytes: usize) -> Loc {
        Loc {
            offset: self.offset + bytes,
            ..self
        }
    }
}

/// One unit of work of one thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Op {
    /// Copy `bytes` bytes.
    Copy { src: Loc, dst: Loc, bytes: usize },
    /// Reduce `elems` elements of every rank (`src[j]` is rank j's input) and write the result
    /// to every `dst`.
    Reduce {
        src: Vec<Loc>,
        dst: Vec<Loc>,
        elems: usize,
    },
}

/// Rejects calls that a worker cannot run: wrong rank count, bad root, non-power-of-two
/// hypercube, or a region outside its allocation. `len(rank, buf)` is an allocation's size.
pub(super) fn check(
    call: &Call,
    nranks: usize,
    len: impl Fn(usize, Buf) -> usize,
) -> Result<(), Error> {
    if call.ranks.len() != nranks {
        return Err(Error::Backend(format!(
            "host backend: call has arguments for {} ranks, the communicator has {nranks}",
            call.ranks.len()
        )));
    }
    if call.coll == Collective::Hypercube && !nranks.is_power_of_two() {
        return Err(Error::usage(format!(
            "hypercube needs a power-of-two number of ranks, not {nranks}"
        )));
    }
    if call.coll.rooted() && call.root >= nranks {
        return Err(Error::usage(format!(
            "root {} is not a rank of a {nranks}-rank communicator",
            call.root
        )));
    }
    let elt = call.dtype.size();
    let too_big = || Error::Backend(format!("host backend: count {} is too large", call.count));
    for (rank, args) in call.ranks.iter().enumerate() {
        let (send, recv) = call
            .coll
            .extents(&call.traffic, call.count, call.dtype, rank, nranks)
            .ok_or_else(too_big)?;
        for (p, elems) in [(args.send, send), (args.recv, recv)] {
            let bytes = elems.checked_mul(elt).ok_or_else(too_big)?;
            let size = len(rank, p.buf);
            if p.offset.checked_add(bytes).is_none_or(|end| end > size) {
                return Err(Error::Backend(format!(
                    "host backend: {} of {bytes} bytes at offset {} of rank {rank}'s {:?} \
                     buffer ({size} bytes) is out of bounds",
                    call.coll, p.offset, p.buf
                )));
            }
        }
    }
    Ok(())
}

/// True when the plain plans may run without staging (see the module doc).
pub(super) fn direct_ok(call: &Call, nranks: usize) -> bool {
    let Some(extents) = (0..nranks)
        .map(|r| {
            call.coll
                .extents(&call.traffic, call.count, call.dtype, r, nranks)
        })
        .collect::<Option<Vec<_>>>()
    else {
        return false;
    };
    let elt = call.dtype.size();
    let overlap = |r: usize| {
        let (s, d) = (call.ranks[r].send, call.ranks[r].recv);
        let (send, recv) = extents[r];
        s.buf == d.buf
            && send > 0
            && recv > 0
            && s.offset < d.offset + recv * elt
            && d.offset < s.offset + send * elt
    };
    if !(0..nranks).any(overlap) {
        return true;
    }
    if matches!(
        call.coll,
        Collective::AllToAll | Collective::AllToAllv | Collective::SendRecv
    ) {
        return false;
    }
    let shape = call
        .coll
        .shape_from_count(&call.traffic, call.count, call.dtype, nranks);
    call.ranks.iter().enumerate().all(|(r, a)| {
        let (s, d) = call.coll.in_place_offsets(&shape, r);
        a.send.buf == Buf::Recv
            && a.recv.buf == Buf::Recv
            && a.send.offset as i128 - a.recv.offset as i128
                == (s as i128 - d as i128) * elt as i128
    })
}

/// The phases of `rank`'s work for a checked call; every rank gets the same number of phases
/// (none when the count is zero).
pub(super) fn phases(call: &Call, rank: usize, nranks: usize) -> Vec<Vec<Op>> {
    let (c, n, elt) = (call.count, nranks, call.dtype.size());
    // alltoallv's sizes are not multiples of the count (0 in matrix mode).
    if c == 0 && call.coll != Collective::AllToAllv {
        return Vec::new();
    }
    let at = |r: usize, p: BufPtr, elem: usize| Loc {
        rank: r,
        buf: p.buf,
        offset: p.offset + elem * elt,
    };
    let send = |r: usize, elem| at(r, call.ranks[r].send, elem);
    let recv = |r: usize, elem| at(r, call.ranks[r].recv, elem);
    let copy = |src, dst, elems: usize| Op::Copy {
        src,
        dst,
        bytes: elems * elt,
    };
    // This rank's share of the c elements of the unchunked collectives.
    let share = |t: usize| ((c as u128 * t as u128) / n as u128) as usize;
    let (lo, hi) = (share(rank), share(rank + 1));
    let root = call.root;
    let reduce = |src: Vec<Loc>, dst: Vec<Loc>, elems: usize| Op::Reduce { src, dst, elems };
    let all = 0..n;
    match call.coll {
        Collective::AllReduce => vec![vec![reduce(
            all.clone().map(|j| send(j, lo)).collect(),
            all.map(|j| recv(j, lo)).collect(),
            hi - lo,
        )]],
        Collective::Reduce => vec![vec![reduce(
            all.map(|j| send(j, lo)).collect(),
            vec![recv(root, lo)],
            hi - lo,
        )]],
        Collective::ReduceScatter => vec![vec![reduce(
            all.map(|j| send(j, rank * c)).collect(),
            vec![recv(rank, 0)],
            c,
        )]],
        Collective::Broadcast => vec![all
            .map(|j| copy(send(root, lo), recv(j, lo), hi - lo))
            .collect()],
        Collective::AllGather => vec![all
            .map(|i| copy(send(rank, 0), recv(i, rank * c), c))
            .collect()],
        Collective::Gather => vec![vec![copy(send(rank, 0), recv(root, rank * c), c)]],
        Collective::Scatter => vec![vec![copy(send(root, rank * c), recv(rank, 0), c)]],
        Collective::AllToAll => vec![all
            .map(|i| copy(send(i, rank * c), recv(rank, i * c), c))
            .collect()],
        Collective::AllToAllv => alltoallv(call, rank, n),
        Collective::SendRecv => vec![vec![copy(send((rank + n - 1) % n, 0), recv(rank, 0), c)]],
        Collective::Hypercube => {
            let mut phases = vec![vec![copy(send(rank, 0), recv(rank, rank * c), c)]];
            let mut span = 1;
            while span < n {
                // Take the partner's accumulated group of `span` blocks.
                let peer = rank ^ span;
                let first = peer & !(span - 1);
                phases.push(vec![copy(
                    recv(peer, first * c),
                    recv(rank, first * c),
                    span * c,
                )]);
                span *= 2;
            }
            phases
        }
    }
}

/// alltoallv's one phase for receiver `rank`: the segment of every source, from where it sits
/// in that source's send buffer to where it belongs in this rank's receive buffer. Every rank
/// gets the one phase, even with nothing to receive (matrix mode's count is 0).
fn alltoallv(call: &Call, rank: usize, n: usize) -> Vec<Vec<Op>> {
    use crate::core::collective::alltoallv::pair_elems;
    let elt = call.dtype.size();
    let pair = |src: usize, dst: usize| pair_elems(&call.traffic, call.count, elt, src, dst, n);
    let mut at = 0;
    let ops = (0..n)
        .filter_map(|src| {
            let len = pair(src, rank);
            let from: usize = (0..rank).map(|k| pair(src, k)).sum();
            let s = call.ranks[src].send;
            let d = call.ranks[rank].recv;
            let op = Op::Copy {
                src: Loc {
                    rank: src,
                    buf: s.buf,
                    offset: s.offset + from * elt,
                },
                dst: Loc {
                    rank,
                    buf: d.buf,
                    offset: d.offset + at * elt,
                },
                bytes: len * elt,
            };
            at += len;
            (len > 0).then_some(op)
        })
        .collect();
    vec![ops]
}
