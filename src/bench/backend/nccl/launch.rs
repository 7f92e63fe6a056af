//! One [`Call`] as NCCL calls, the way nccl-tests issues them: the collective's own entry
//! point where the library has it, grouped `ncclSend`/`ncclRecv` otherwise (alltoall, gather,
//! scatter before 2.28; sendrecv and hypercube always), a PreMulSum operator made per call and
//! rank for mulsum, and every local rank's call inside one group when this process drives more
//! than one rank.

use std::ffi::c_void;

use crate::bench::backend::{Buf, BufPtr, Call};
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::{mulsum_scalar, RedOp};
use nccl_sys::bindings::{self as b, cudaStream_t, ncclComm_t, ncclRedOp_t, ncclResult_t};
use nccl_sys::{red_op, Nccl, NcclError};

use super::error::{cuda_err, nccl_call_err};
use super::{NcclBackend, Rank};

/// The `ncclDataType_t` of `dtype`.
pub(super) fn nccl_dtype(dtype: DataType) -> i32 {
    dtype.nccl_code()
}

/// The built-in `ncclRedOp_t` of `op` (mulsum is created per call).
fn builtin_op(op: RedOp) -> ncclRedOp_t {
    (match op {
        RedOp::Sum | RedOp::MulSum => red_op::SUM,
        RedOp::Prod => red_op::PROD,
        RedOp::Max => red_op::MAX,
        RedOp::Min => red_op::MIN,
        RedOp::Avg => red_op::AVG,
    }) as ncclRedOp_t
}

/// One rank's resolved arguments.
struct Args {
    send: u64,
    recv: u64,
    comm: ncclComm_t,
    stream: cudaStream_t,
    rank: usize,
}

impl NcclBackend {
    /// Enqueues `call` on every local rank (inside a group when there is more than one).
    pub(super) fn launch_call(&mut self, call: &Call) -> Result<(), Error> {
        let case = describe(call);
        let args = self.resolve(call)?;
        let grouped = self.ranks.len() > 1;
        match call.coll {
            Collective::Hypercube => self.hypercube(call, &args, &case),
            Collective::SendRecv => self
                .in_group(true, |me| {
                    args.iter().try_for_each(|a| me.sendrecv_ring(call, a))
                })
                .map_err(|e| e.into_error(&case)),
            _ => self
                .in_group(grouped, |me| {
                    args.iter().try_for_each(|a| me.one_rank(call, a))
                })
                .map_err(|e| e.into_error(&case)),
        }
    }

    /// Each local rank's pointers, communicator and stream.
    fn resolve(&self, call: &Call) -> Result<Vec<Args>, Error> {
        let addr = |r: &Rank, p: BufPtr| -> Result<u64, Error> {
            let mem = match p.buf {
                Buf::Send => r.send.as_ref(),
                Buf::Recv => r.recv.as_ref(),
            };
            let mem = mem.ok_or_else(|| Error::Backend("launch before allocate".into()))?;
            Ok(mem.ptr() + p.offset as u64)
        };
        self.ranks
            .iter()
            .zip(&call.ranks)
            .map(|(r, a)| {
                Ok(Args {
                    send: addr(r, a.send)?,
                    recv: addr(r, a.recv)?,
                    comm: r.comm,
                    stream: r.stream.raw().cast(),
                    rank: r.global,
                })
            })
            .collect()
    }

    /// Runs `body` between `ncclGroupStart` and `ncclGroupEnd` when `grouped`; the group is
    /// closed even when `body` fails.
    fn in_group<T>(
        &mut self,
        grouped: bool,
        body: impl FnOnce(&mut Self) -> Result<T, Failure>,
    ) -> Result<T, Failure> {
        if !grouped {
            return body(self);
        }
        let api = *self.nccl.api();
        // SAFETY: no arguments.
        check(
            &self.nccl,
            "ncclGroupStart",
            unsafe { (api.ncclGroupStart)() },
            0,
        )?;
        let out = body(self);
        // SAFETY: closes the group opened above.
        let end = check(
            &self.nccl,
            "ncclGroupEnd",
            unsafe { (api.ncclGroupEnd)() },
            0,
        );
        let out = out?;
        end?;
        Ok(out)
    }

    /// The collective's own entry point (or its send/recv form) for one rank.
    fn one_rank(&self, call: &Call, a: &Args) -> Result<(), Failure> {
        let api = self.nccl.api();
        let n = &self.nccl;
        let dt = nccl_dtype(call.dtype) as b::ncclDataType_t;
        let (send, recv) = (a.send as *const c_void, a.recv as *mut c_void);
        let count = call.count;
        let root = call.root as i32;
        let elt = call.dtype.size() as u64;
        let nranks = self.info.nranks;
        // SAFETY (every call below): pointers inside this rank's allocations (the runner's
        // layout, checked by the collective table's tests), a live communicator and a stream
        // of the rank's device.
        match call.coll {
            Collective::AllReduce | Collective::Reduce | Collective::ReduceScatter => {
                let op = self.make_op(call, a)?;
                let code = unsafe {
                    match call.coll {
                        Collective::AllReduce => {
                            (api.ncclAllReduce)(send, recv, count, dt, op.0, a.comm, a.stream)
                        }
                        Collective::Reduce => {
                            (api.ncclReduce)(send, recv, count, dt, op.0, root, a.comm, a.stream)
                        }
                        _ => (api.ncclReduceScatter)(send, recv, count, dt, op.0, a.comm, a.stream),
                    }
                };
                let result = check(n, call.coll.spec().nccl.call, code, a.rank);
                self.drop_op(op, a)?;
                result
            }
            Collective::AllGather => {
                let code = unsafe { (api.ncclAllGather)(send, recv, count, dt, a.comm, a.stream) };
                check(n, call.coll.spec().nccl.call, code, a.rank)
            }
            Collective::Broadcast => {
                let code =
                    unsafe { (api.ncclBroadcast)(send, recv, count, dt, root, a.comm, a.stream) };
                check(n, call.coll.spec().nccl.call, code, a.rank)
            }
            Collective::AllToAll => match self.caps.alltoall {
                Some(f) => {
                    let code = unsafe { f(send, recv, count, dt, a.comm, a.stream) };
                    check(n, call.coll.spec().nccl.call, code, a.rank)
                }
                None => (0..nranks).try_for_each(|peer| {
                    let off = peer as u64 * count as u64 * elt;
                    self.send(a.send + off, count, dt, peer, a)?;
                    self.recv(a.recv + off, count, dt, peer, a)
                }),
            },
            Collective::Gather => {
                if count == 0 {
                    return Ok(());
                }
                match self.caps.gather {
                    Some(f) => {
                        let code = unsafe { f(send, recv, count, dt, root, a.comm, a.stream) };
                        check(n, call.coll.spec().nccl.call, code, a.rank)
                    }
                    None => {
                        self.send(a.send, count, dt, call.root, a)?;
                        if a.rank == call.root {
                            (0..nranks).try_for_each(|peer| {
                                let off = peer as u64 * count as u64 * elt;
                                self.recv(a.recv + off, count, dt, peer, a)
                            })?;
                        }
                        Ok(())
                    }
                }
            }
            Collective::Scatter => {
                if count == 0 {
                    return Ok(());
                }
                match self.caps.scatter {
                    Some(f) => {
                        let code = unsafe { f(send, recv, count, dt, root, a.comm, a.stream) };
                        check(n, call.coll.spec().nccl.call, code, a.rank)
                    }
                    None => {
                        if a.rank == call.root {
                            (0..nranks).try_for_each(|peer| {
                                let off = peer as u64 * count as u64 * elt;
                                self.send(a.send + off, count, dt, peer, a)
                            })?;
                        }
                        self.recv(a.recv, count, dt, call.root, a)
                    }
                }
            }
            Collective::SendRecv | Collective::Hypercube => unreachable!("handled by launch_call"),
        }
    }

    /// sendrecv: send to rank + 1, receive from rank - 1 (a ring).
    fn sendrecv_ring(&self, call: &Call, a: &Args) -> Result<(), Failure> {
        let n = self.info.nranks;
        let dt = nccl_dtype(call.dtype) as b::ncclDataType_t;
        self.send(a.send, call.count, dt, (a.rank + 1) % n, a)?;
        self.recv(a.recv, call.count, dt, (a.rank + n - 1) % n, a)
    }

    /// hypercube: each rank copies its block into place, then log2(n) steps each exchange the
    /// 2^k blocks gathered so far with rank XOR 2^k (one group per step, all local ranks in it).
    fn hypercube(&mut self, call: &Call, args: &[Args], case: &str) -> Result<(), Error> {
        let n = self.info.nranks;
        let elt = call.dtype.size() as u64;
        let block = call.count as u64 * elt;
        let dt = nccl_dtype(call.dtype) as b::ncclDataType_t;
        for (r, a) in self.ranks.iter().zip(args) {
            let own = a.recv + a.rank as u64 * block;
            if own != a.send && block > 0 {
                let api = r.context.driver().api();
                r.context.set_current().map_err(cuda_err)?;
                // SAFETY: both ranges lie in this rank's allocations; the stream is its own.
                let code =
                    unsafe { (api.memcpy_dtod_async)(own, a.send, block as usize, r.stream.raw()) };
                r.context
                    .driver()
                    .check("cuMemcpyDtoDAsync_v2", code)
                    .map_err(cuda_err)?;
            }
        }
        let mut step = 1;
        while step < n {
            let result = self.in_group(true, |me| {
                args.iter().try_for_each(|a| {
                    let peer = a.rank ^ step;
                    let mine = (a.rank & !(step - 1)) as u64 * block;
                    let theirs = (peer & !(step - 1)) as u64 * block;
                    let count = call.count * step;
                    me.send(a.recv + mine, count, dt, peer, a)?;
                    me.recv(a.recv + theirs, count, dt, peer, a)
                })
            });
            result.map_err(|e| e.into_error(case))?;
            step <<= 1;
        }
        Ok(())
    }

    fn send(&self, ptr: u64, count: usize, dt: u32, peer: usize, a: &Args) -> Result<(), Failure> {
        // SAFETY: as in `one_rank`.
        let code = unsafe {
            (self.nccl.api().ncclSend)(
                ptr as *const c_void,
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
        // SAFETY: as in `one_rank`.
        let code = unsafe {
            (self.nccl.api().ncclRecv)(ptr as *mut c_void, count, dt, peer as i32, a.comm, a.stream)
        };
        check(&self.nccl, "ncclRecv", code, a.rank)
    }

    /// The operator of a reducing call: built in, or a PreMulSum made for this rank with the
    /// scalar 1 (even ranks) or 2 (odd ranks) as a host immediate in the element type.
    fn make_op(&self, call: &Call, a: &Args) -> Result<(ncclRedOp_t, bool), Failure> {
        if call.op != RedOp::MulSum {
            return Ok((builtin_op(call.op), false));
        }
        let (create, _) = self.caps.premulsum.ok_or_else(|| {
            Failure::Other(Error::Backend(
                "mulsum needs ncclRedOpCreatePreMulSum (NCCL 2.11+)".into(),
            ))
        })?;
        let mut scalar = [0u8; 8];
        let s = mulsum_scalar(a.rank);
        let bits = if call.dtype.is_float() {
            crate::core::numeric::from_f64(call.dtype, f64::from(s))
        } else {
            u64::from(s)
        };
        crate::core::numeric::store(call.dtype, &mut scalar, 0, bits);
        let mut op: ncclRedOp_t = 0;
        let dt = nccl_dtype(call.dtype) as b::ncclDataType_t;
        // SAFETY: the scalar is read immediately (host immediate residence).
        let code = unsafe {
            create(
                &mut op,
                scalar.as_mut_ptr().cast(),
                dt,
                b::ncclScalarHostImmediate,
                a.comm,
            )
        };
        check(&self.nccl, "ncclRedOpCreatePreMulSum", code, a.rank)?;
        Ok((op, true))
    }

    /// Destroys a PreMulSum right after its launch, as nccl-tests does.
    fn drop_op(&self, op: (ncclRedOp_t, bool), a: &Args) -> Result<(), Failure> {
        match (op.1, self.caps.premulsum) {
            (true, Some((_, destroy))) => {
                // SAFETY: an operator created on this communicator.
                let code = unsafe { destroy(op.0, a.comm) };
                check(&self.nccl, "ncclRedOpDestroy", code, a.rank)
            }
            _ => Ok(()),
        }
    }
}

/// A launch failure: an NCCL call on a rank, or something already an [`Error`].
pub(super) enum Failure {
    Nccl(NcclError, usize),
    Other(Error),
}

impl Failure {
    fn into_error(self, case: &str) -> Error {
        match self {
            Failure::Nccl(e, rank) => nccl_call_err(e, rank, case),
            Failure::Other(e) => e,
        }
    }
}

fn check(nccl: &Nccl, call: &'static str, code: ncclResult_t, rank: usize) -> Result<(), Failure> {
    nccl.check(call, code).map_err(|e| Failure::Nccl(e, rank))
}

/// `all_reduce float sum count 262144` for error messages.
fn describe(call: &Call) -> String {
    let mut s = format!("{} {} ", call.coll.name(), call.dtype);
    if call.coll.iterates_ops() {
        s += &format!("{} ", call.op);
    }
    if call.coll.rooted() {
        s += &format!("root {} ", call.root);
    }
    s += &format!("count {}", call.count);
    s
}
