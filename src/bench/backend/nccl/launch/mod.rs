//! One [`Call`] as NCCL calls, the way nccl-tests issues them: the collective's own entry
//! point where the library has it, grouped `ncclSend`/`ncclRecv` otherwise ([`p2p`]: alltoall,
//! gather, scatter before 2.28; sendrecv and hypercube always), a PreMulSum operator made per
//! call and rank for mulsum, and every local rank's call inside one group when this process
//! drives more than one rank. The case's description for an error message is built only when
//! a call fails (launches sit in the timed loop).

mod p2p;

use std::ffi::c_void;

use crate::bench::backend::{Buf, BufPtr, Call};
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::{mulsum_scalar, RedOp};
use nccl_sys::bindings::{self as b, cudaStream_t, ncclComm_t, ncclRedOp_t, ncclResult_t};
use nccl_sys::{red_op, Nccl, NcclError};

use super::error::nccl_call_err;
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
pub(super) struct Args {
    send: u64,
    recv: u64,
    comm: ncclComm_t,
    stream: cudaStream_t,
    rank: usize,
}

impl NcclBackend {
    /// Enqueues `call` on every local rank, inside a group when there is more than one rank or
    /// the call is made of sends and receives.
    pub(super) fn launch_call(&mut self, call: &Call) -> Result<(), Error> {
        // The per-rank arguments go into a buffer kept from launch to launch: a launch sits in
        // the timed loop, where nothing is allocated.
        let mut args = std::mem::take(&mut self.launch_args);
        let launched = self.resolve(call, &mut args).and_then(|()| {
            // One rank alone still needs the group for sends and receives: NCCL refuses a
            // send to self outside one, and a send waiting on a receive queued behind it hangs.
            let grouped = self.ranks.len() > 1 || self.is_send_recv_form(call.coll);
            let args = &args[..];
            match call.coll {
                Collective::Hypercube => self.hypercube(call, args),
                Collective::SendRecv => self.in_group(true, |me| {
                    args.iter().try_for_each(|a| me.sendrecv_ring(call, a))
                }),
                _ => self.in_group(grouped, |me| {
                    args.iter().try_for_each(|a| me.one_rank(call, a))
                }),
            }
            .map_err(|e| e.into_error(call))
        });
        self.launch_args = args;
        launched
    }

    /// Whether `coll` runs as `ncclSend`/`ncclRecv` with the loaded library.
    fn is_send_recv_form(&self, coll: Collective) -> bool {
        match coll {
            Collective::SendRecv | Collective::Hypercube | Collective::AllToAllv => true,
            Collective::AllToAll => self.caps.alltoall.is_none(),
            Collective::Gather => self.caps.gather.is_none(),
            Collective::Scatter => self.caps.scatter.is_none(),
            _ => false,
        }
    }

    /// Each local rank's pointers, communicator and stream, into `out` (emptied first).
    fn resolve(&self, call: &Call, out: &mut Vec<Args>) -> Result<(), Error> {
        let addr = |r: &Rank, p: BufPtr| -> Result<u64, Error> {
            let mem = match p.buf {
                Buf::Send => r.send.as_ref(),
                Buf::Recv => r.recv.as_ref(),
            };
            let mem = mem.ok_or_else(|| Error::Backend("launch before allocate".into()))?;
            Ok(mem.ptr() + p.offset as u64)
        };
        out.clear();
        for (r, a) in self.ranks.iter().zip(&call.ranks) {
            out.push(Args {
                send: addr(r, a.send)?,
                recv: addr(r, a.recv)?,
                comm: r.comm,
                stream: r.stream.raw().cast(),
                rank: r.global,
            });
        }
        Ok(())
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
                None => self.alltoall_p2p(call, a),
            },
            Collective::AllToAllv => self.alltoallv_p2p(call, a),
            // nccl-tests makes no call for an empty gather or scatter.
            Collective::Gather if count == 0 => Ok(()),
            Collective::Gather => match self.caps.gather {
                Some(f) => {
                    let code = unsafe { f(send, recv, count, dt, root, a.comm, a.stream) };
                    check(n, call.coll.spec().nccl.call, code, a.rank)
                }
                None => self.gather_p2p(call, a),
            },
            Collective::Scatter if count == 0 => Ok(()),
            Collective::Scatter => match self.caps.scatter {
                Some(f) => {
                    let code = unsafe { f(send, recv, count, dt, root, a.comm, a.stream) };
                    check(n, call.coll.spec().nccl.call, code, a.rank)
                }
                None => self.scatter_p2p(call, a),
            },
            Collective::SendRecv | Collective::Hypercube => unreachable!("handled by launch_call"),
        }
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
    /// The error of a failed launch of `call`.
    fn into_error(self, call: &Call) -> Error {
        match self {
            Failure::Nccl(e, rank) => nccl_call_err(e, rank, &describe(call)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_launch_names_its_case() {
        let call = Call {
            coll: Collective::Gather,
            dtype: DataType::Int32,
            op: RedOp::Sum,
            root: 1,
            count: 256,
            traffic: Default::default(),
            ranks: Vec::new(),
        };
        let e = NcclError {
            call: "ncclSend",
            code: 5,
            text: "invalid usage".into(),
            detail: "Trying to send to self without a matching recv".into(),
        };
        let text = Failure::Nccl(e, 3).into_error(&call).to_string();
        assert!(
            text.contains("NCCL failure on rank 3 (gather int32 root 1 count 256): ncclSend"),
            "{text}"
        );
    }
}
