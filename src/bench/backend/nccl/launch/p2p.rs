//! The calls made of `ncclSend`/`ncclRecv`: alltoall, gather and scatter where the library has
//! no native entry point (before 2.28), alltoallv, sendrecv's ring and hypercube's exchange
//! steps. Each
//! runs inside a group opened by the caller even for a single rank: NCCL pairs a send to self
//! with the receive from self only within one group (alone, either is ncclInvalidUsage), and
//! a send whose matching receive is queued behind it never completes.
//!
//! Per-peer blocks are placed as the collective's spec lays out the buffers (the layout the
//! runner allocates and the verifier reads), so the forms cannot drift from it.

use crate::core::collective::spec::{Blocks, PerPeer, Sizing};
use crate::core::collective::{Collective, Traffic};
use crate::core::error::Error;
use nccl_sys::bindings as b;

use super::{check, nccl_dtype, Args, Failure};
use crate::bench::backend::nccl::error::cuda_err;
use crate::bench::backend::nccl::NcclBackend;
use crate::bench::backend::Call;

/// The block function of a buffer the send/recv form splits by peer.
fn per_peer(coll: Collective, blocks: Blocks) -> Result<PerPeer, Failure> {
    match blocks {
        Blocks::PerPeer(f) => Ok(f),
        Blocks::One => Err(Failure::Other(Error::Backend(format!(
            "{}: the spec has no per-peer blocks for the send/recv form",
            coll.name()
        )))),
    }
}

/// `(peer, byte offset, elements)` of each peer's block in `rank`'s buffer (a running sum, so
/// a launch allocates nothing).
fn peer_blocks(
    t: &Traffic,
    f: PerPeer,
    count: usize,
    rank: usize,
    nranks: usize,
    elt: u64,
) -> impl Iterator<Item = (usize, u64, usize)> + '_ {
    (0..nranks).scan(0u64, move |start, peer| {
        let sizing = Sizing {
            traffic: t,
            count,
            elt: elt as usize,
            nranks,
        };
        let len = f(sizing, rank, peer);
        let block = (peer, *start, len);
        *start += len as u64 * elt;
        Some(block)
    })
}

impl NcclBackend {
    /// alltoall before 2.28: a send to and a receive from every peer, as nccl-tests does.
    pub(super) fn alltoall_p2p(&self, call: &Call, a: &Args) -> Result<(), Failure> {
        let spec = call.coll.spec();
        let (send, recv) = (
            per_peer(call.coll, spec.send)?,
            per_peer(call.coll, spec.recv)?,
        );
        let (n, elt, dt) = self.shape(call);
        let sends = peer_blocks(&call.traffic, send, call.count, a.rank, n, elt);
        let recvs = peer_blocks(&call.traffic, recv, call.count, a.rank, n, elt);
        for ((peer, s_off, s_len), (_, r_off, r_len)) in sends.zip(recvs) {
            self.send(a.send + s_off, s_len, dt, peer, a)?;
            self.recv(a.recv + r_off, r_len, dt, peer, a)?;
        }
        Ok(())
    }

    /// alltoallv, as nccl-tests runs it: per peer a send of this rank's segment for it and a
    /// receive of its segment from it, each skipped when empty (so spread 1 sends nothing to
    /// self, and matrix zeros post nothing).
    pub(super) fn alltoallv_p2p(&self, call: &Call, a: &Args) -> Result<(), Failure> {
        let spec = call.coll.spec();
        let (send, recv) = (
            per_peer(call.coll, spec.send)?,
            per_peer(call.coll, spec.recv)?,
        );
        let (n, elt, dt) = self.shape(call);
        let sends = peer_blocks(&call.traffic, send, call.count, a.rank, n, elt);
        let recvs = peer_blocks(&call.traffic, recv, call.count, a.rank, n, elt);
        for ((peer, s_off, s_len), (_, r_off, r_len)) in sends.zip(recvs) {
            if s_len > 0 {
                self.send(a.send + s_off, s_len, dt, peer, a)?;
            }
            if r_len > 0 {
                self.recv(a.recv + r_off, r_len, dt, peer, a)?;
            }
        }
        Ok(())
    }

    /// gather before 2.28: every rank sends its block to the root; the root receives each
    /// rank's block into its place.
    pub(super) fn gather_p2p(&self, call: &Call, a: &Args) -> Result<(), Failure> {
        let (n, elt, dt) = self.shape(call);
        self.send(a.send, call.count, dt, call.root, a)?;
        if a.rank == call.root {
            let recv = per_peer(call.coll, call.coll.spec().recv)?;
            for (peer, off, len) in peer_blocks(&call.traffic, recv, call.count, a.rank, n, elt) {
                self.recv(a.recv + off, len, dt, peer, a)?;
            }
        }
        Ok(())
    }

    /// scatter before 2.28: the root sends each rank its block; every rank receives its own.
    pub(super) fn scatter_p2p(&self, call: &Call, a: &Args) -> Result<(), Failure> {
        let (n, elt, dt) = self.shape(call);
        if a.rank == call.root {
            let send = per_peer(call.coll, call.coll.spec().send)?;
            for (peer, off, len) in peer_blocks(&call.traffic, send, call.count, a.rank, n, elt) {
                self.send(a.send + off, len, dt, peer, a)?;
            }
        }
        self.recv(a.recv, call.count, dt, call.root, a)
    }

    /// sendrecv: send to rank + 1, receive from rank - 1 (a ring).
    pub(super) fn sendrecv_ring(&self, call: &Call, a: &Args) -> Result<(), Failure> {
        let (n, _, dt) = self.shape(call);
        self.send(a.send, call.count, dt, (a.rank + 1) % n, a)?;
        self.recv(a.recv, call.count, dt, (a.rank + n - 1) % n, a)
    }

    /// hypercube: each rank copies its block into place, then log2(n) steps each exchange the
    /// 2^k blocks gathered so far with rank XOR 2^k (one group per step, all local ranks in it).
    pub(super) fn hypercube(&mut self, call: &Call, args: &[Args]) -> Result<(), Failure> {
        let (n, elt, dt) = self.shape(call);
        let block = call.count as u64 * elt;
        for (r, a) in self.ranks.iter().zip(args) {
            let own = a.recv + a.rank as u64 * block;
            if own != a.send && block > 0 {
                let api = r.context.driver().api();
                let cuda = |e| Failure::Other(cuda_err(e));
                r.context.set_current().map_err(cuda)?;
                // SAFETY: both ranges lie in this rank's allocations; the stream is its own.
                let code =
                    unsafe { (api.memcpy_dtod_async)(own, a.send, block as usize, r.stream.raw()) };
                r.context
                    .driver()
                    .check("cuMemcpyDtoDAsync_v2", code)
                    .map_err(cuda)?;
            }
        }
        let mut step = 1;
        while step < n {
            self.in_group(true, |me| {
                args.iter().try_for_each(|a| {
                    let peer = a.rank ^ step;
                    let mine = (a.rank & !(step - 1)) as u64 * block;
                    let theirs = (peer & !(step - 1)) as u64 * block;
                    let count = call.count * step;
                    me.send(a.recv + mine, count, dt, peer, a)?;
                    me.recv(a.recv + theirs, count, dt, peer, a)
                })
            })?;
            step <<= 1;
        }
        Ok(())
    }

    /// Ranks in the communicator, element size and NCCL type of `call`.
    fn shape(&self, call: &Call) -> (usize, u64, b::ncclDataType_t) {
        let dt = nccl_dtype(call.dtype) as b::ncclDataType_t;
        (self.info.nranks, call.dtype.size() as u64, dt)
    }

    fn send(&self, ptr: u64, count: usize, dt: u32, peer: usize, a: &Args) -> Result<(), Failure> {
        // SAFETY: a range of this rank's send buffer (the spec's layout), a live communicator
        // and a stream of the rank's device.
        let code = unsafe {
            (self.nccl.api().ncclSend)(
                ptr as *const std::ffi::c_void,
                count,
                dt,
                peer as i32,
                a.comm,
                a.stream,
            )
        };
        check(&self.nccl, "ncclSend", code, a.rank)
    }

    fn recv(&self, ptr: u64, count: usize, dt: u32, peer: usize, a: &Args) -> Result<(), Failure> {
        // SAFETY: as in `send`, in the receive buffer.
        let code = unsafe {
            (self.nccl.api().ncclRecv)(
                ptr as *mut std::ffi::c_void,
                count,
                dt,
                peer as i32,
                a.comm,
                a.stream,
            )
        };
        check(&self.nccl, "ncclRecv", code, a.rank)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::collective::spec::uniform;

    #[test]
    fn uniform_blocks_sit_at_peer_times_count() {
        let blocks: Vec<_> = peer_blocks(&Traffic::default(), uniform, 5, 1, 3, 4).collect();
        assert_eq!(blocks, vec![(0, 0, 5), (1, 20, 5), (2, 40, 5)]);
    }

    #[test]
    fn variable_blocks_follow_the_spec_function() {
        let f: PerPeer = |z, r, p| z.count + r + p;
        let blocks: Vec<_> = peer_blocks(&Traffic::default(), f, 1, 2, 3, 2).collect();
        // Sizes 3, 4, 5 elements of 2 bytes.
        assert_eq!(blocks, vec![(0, 0, 3), (1, 6, 4), (2, 14, 5)]);
    }

    #[test]
    fn every_send_recv_form_finds_per_peer_blocks_in_its_spec() {
        for (coll, needs_send, needs_recv) in [
            (Collective::AllToAll, true, true),
            (Collective::AllToAllv, true, true),
            (Collective::Gather, false, true),
            (Collective::Scatter, true, false),
        ] {
            let spec = coll.spec();
            assert_eq!(per_peer(coll, spec.send).is_ok(), needs_send, "{coll:?}");
            assert_eq!(per_peer(coll, spec.recv).is_ok(), needs_recv, "{coll:?}");
        }
    }
}
