//! One collective call of the MPI backend on this process's rank: the send region is copied
//! aside (so in-place calls never hand MPI aliased buffers), the data moves with one
//! nonblocking MPI collective on bytes, reductions happen locally, and the result is copied
//! into the receive region.
//!
//! Reductions gather every rank's input (`MPI_Iallgather`, `MPI_Igather`, or `MPI_Ialltoall`
//! for reduce_scatter) and fold them here in rank order with the host backend's element
//! functions, for every type and operator alike. That gives NCCL's exact arithmetic (wrapping
//! integers, PreMulSum for `avg` and `mulsum`, half/bf16/fp8 that MPI lacks) and a
//! deterministic order that verification can check exactly; MPI's own reductions guarantee
//! neither. It moves n times the data of a reduction tree: this backend checks semantics and
//! launch mechanics, its times are not an MPI allreduce benchmark.

use super::nb::{self, Comm, Posted, Stuck};
use crate::bench::backend::{Buf, BufPtr, Call};
use crate::core::collective::Collective;
use crate::core::error::Error;
use crate::core::reduce::reduce;
use std::time::Instant;

/// A process's buffers and scratch space.
#[derive(Default)]
pub(super) struct Mem {
    /// Send and receive allocations.
    pub send: Vec<u8>,
    pub recv: Vec<u8>,
    /// The staged input, the gathered inputs, the output.
    a: Vec<u8>,
    b: Vec<u8>,
    o: Vec<u8>,
}

impl Mem {
    pub(super) fn buf(&self, b: Buf) -> &Vec<u8> {
        match b {
            Buf::Send => &self.send,
            Buf::Recv => &self.recv,
        }
    }

    pub(super) fn buf_mut(&mut self, b: Buf) -> &mut Vec<u8> {
        match b {
            Buf::Send => &mut self.send,
            Buf::Recv => &mut self.recv,
        }
    }

    fn region(&self, p: BufPtr, len: usize, call: &Call) -> Result<&[u8], Error> {
        let b = self.buf(p.buf);
        p.offset
            .checked_add(len)
            .and_then(|end| b.get(p.offset..end))
            .ok_or_else(|| {
                Error::Backend(format!(
                    "mpi backend: {} of {len} bytes at offset {} of the {:?} buffer ({} bytes) \
                     is out of bounds",
                    call.coll,
                    p.offset,
                    p.buf,
                    b.len()
                ))
            })
    }

    /// Posts `post` on the scratch buffers and waits; the buffers come back on success.
    fn wait(
        &mut self,
        posted: Vec<Posted>,
        deadline: Option<Instant>,
    ) -> Result<Option<Stuck>, Error> {
        let bufs = vec![
            std::mem::take(&mut self.a),
            std::mem::take(&mut self.b),
            std::mem::take(&mut self.o),
        ];
        match nb::complete(posted, bufs, deadline)? {
            Ok(mut v) => {
                self.o = v.pop().unwrap_or_default();
                self.b = v.pop().unwrap_or_default();
                self.a = v.pop().unwrap_or_default();
                Ok(None)
            }
            Err(stuck) => Ok(Some(stuck)),
        }
    }
}

/// Runs `call` as rank `r` of the `n`-rank communicator `c`.
pub(super) fn run(
    c: Comm,
    n: usize,
    r: usize,
    call: &Call,
    mem: &mut Mem,
    deadline: Option<Instant>,
) -> Result<Option<Stuck>, Error> {
    let elt = call.dtype.size();
    let too_big = || Error::Backend(format!("mpi backend: count {} is too large", call.count));
    let (se, re) = call
        .coll
        .extents(&call.traffic, call.count, call.dtype, r, n)
        .ok_or_else(too_big)?;
    let (sb, rb, bb) = (se * elt, re * elt, call.count * elt);
    let args = call.ranks.first().copied().ok_or_else(|| {
        Error::Backend("mpi backend: a call needs this process's pointers".into())
    })?;
    if call.coll.rooted() && call.root >= n {
        return Err(Error::usage(format!(
            "root {} is not a rank of a {n}-rank communicator",
            call.root
        )));
    }
    if call.coll == Collective::Hypercube && !n.is_power_of_two() {
        return Err(Error::usage(format!(
            "hypercube needs a power-of-two number of ranks, not {n}"
        )));
    }
    mem.region(args.recv, rb, call)?;
    let staged = mem.region(args.send, sb, call)?.to_vec();
    // alltoallv's segments are not multiples of the count (0 in matrix mode).
    if bb == 0 && call.coll != Collective::AllToAllv {
        return Ok(None);
    }
    mem.a = staged;
    let all = n.checked_mul(bb).ok_or_else(too_big)?;
    mem.b.resize(all, 0);
    mem.o.resize(rb, 0);
    let root = call.root;
    // Whether this rank's receive region gets the output.
    let mut writes = true;
    let posted = match call.coll {
        Collective::AllReduce => vec![nb::allgather(c, &mem.a, &mut mem.b)?],
        Collective::Reduce => {
            writes = r == root;
            vec![nb::gather(c, &mem.a, &mut mem.b, root)?]
        }
        Collective::ReduceScatter => vec![nb::alltoall(c, &mem.a, &mut mem.b, bb)?],
        Collective::Broadcast => {
            mem.o.copy_from_slice(&mem.a);
            vec![nb::bcast(c, &mut mem.o, root)?]
        }
        Collective::AllGather => vec![nb::allgather(c, &mem.a, &mut mem.o)?],
        Collective::Gather => {
            writes = r == root;
            vec![nb::gather(c, &mem.a, &mut mem.o, root)?]
        }
        Collective::Scatter => vec![nb::scatter(c, &mem.a, &mut mem.o, root)?],
        Collective::AllToAll => vec![nb::alltoall(c, &mem.a, &mut mem.o, bb)?],
        Collective::AllToAllv => return alltoallv(c, n, r, call, mem, args.recv, deadline),
        Collective::SendRecv => vec![
            nb::recv(c, &mut mem.o, (r + n - 1) % n, 7)?,
            nb::send(c, &mem.a, (r + 1) % n, 7)?,
        ],
        Collective::Hypercube => return hypercube(c, n, r, bb, mem, args.recv, deadline),
    };
    if let Some(stuck) = mem.wait(posted, deadline)? {
        return Ok(Some(stuck));
    }
    if matches!(
        call.coll,
        Collective::AllReduce | Collective::Reduce | Collective::ReduceScatter
    ) && writes
    {
        let inputs: Vec<&[u8]> = mem.b.chunks_exact(bb).collect();
        reduce(call.dtype, call.op, &inputs, &mut mem.o);
    }
    if writes {
        let o = std::mem::take(&mut mem.o);
        mem.buf_mut(args.recv.buf)[args.recv.offset..args.recv.offset + rb].copy_from_slice(&o);
        mem.o = o;
    }
    Ok(None)
}

/// alltoallv as nccl-tests posts it: to and from every peer a send and a receive of that
/// pair's segment, none for an empty one. `mem.a` holds this rank's send region.
fn alltoallv(
    c: Comm,
    n: usize,
    r: usize,
    call: &Call,
    mem: &mut Mem,
    out: BufPtr,
    deadline: Option<Instant>,
) -> Result<Option<Stuck>, Error> {
    use crate::core::collective::alltoallv::pair_elems;
    let elt = call.dtype.size();
    let pair =
        |src: usize, dst: usize| pair_elems(&call.traffic, call.count, elt, src, dst, n) * elt;
    let total: usize = (0..n).map(|p| pair(p, r)).sum();
    mem.o.resize(total, 0);
    let mut posted = Vec::new();
    let (mut s_at, mut r_at) = (0, 0);
    for p in 0..n {
        let (s_len, r_len) = (pair(r, p), pair(p, r));
        if r_len > 0 {
            posted.push(nb::recv(c, &mut mem.o[r_at..r_at + r_len], p, 9)?);
        }
        if s_len > 0 {
            posted.push(nb::send(c, &mem.a[s_at..s_at + s_len], p, 9)?);
        }
        s_at += s_len;
        r_at += r_len;
    }
    if let Some(stuck) = mem.wait(posted, deadline)? {
        return Ok(Some(stuck));
    }
    let o = std::mem::take(&mut mem.o);
    mem.buf_mut(out.buf)[out.offset..out.offset + total].copy_from_slice(&o[..total]);
    mem.o = o;
    Ok(None)
}

/// nccl-tests' hypercube all-gather: log2(n) rounds, each exchanging the accumulated blocks
/// with the partner `r ^ span`.
fn hypercube(
    c: Comm,
    n: usize,
    r: usize,
    bb: usize,
    mem: &mut Mem,
    out: BufPtr,
    deadline: Option<Instant>,
) -> Result<Option<Stuck>, Error> {
    mem.o[r * bb..(r + 1) * bb].copy_from_slice(&mem.a[..bb]);
    let mut span = 1;
    while span < n {
        let peer = r ^ span;
        let (mine, theirs) = (r & !(span - 1), peer & !(span - 1));
        mem.a.clear();
        mem.a
            .extend_from_slice(&mem.o[mine * bb..(mine + span) * bb]);
        mem.b.resize(span * bb, 0);
        let posted = vec![
            nb::recv(c, &mut mem.b[..span * bb], peer, 8)?,
            nb::send(c, &mem.a, peer, 8)?,
        ];
        if let Some(stuck) = mem.wait(posted, deadline)? {
            return Ok(Some(stuck));
        }
        mem.o[theirs * bb..(theirs + span) * bb].copy_from_slice(&mem.b[..span * bb]);
        span *= 2;
    }
    let rb = n * bb;
    let o = std::mem::take(&mut mem.o);
    mem.buf_mut(out.buf)[out.offset..out.offset + rb].copy_from_slice(&o[..rb]);
    mem.o = o;
    Ok(None)
}
