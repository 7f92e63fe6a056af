//! The communication calls: every argument is checked the way a strict NCCL would (dtype and
//! op codes against the impersonated version, roots and peers, the stream's device, each
//! buffer's range against one device allocation of the comm's device), then the op is held in
//! the caller's group or placed on its stream. Calling outside a group from a thread that owns
//! several ranks of the communicator is refused: real NCCL would deadlock there.

use std::ffi::c_void;

use crate::engine::{Kind, Op, Red};
use crate::memory::AllocKind;
use crate::nccl_api::{check_dtype, need_version};
use crate::reduce::dtype_size;
use crate::state::*;

/// The arguments of one call.
pub(crate) struct Call {
    pub(crate) kind: Kind,
    pub(crate) send: u64,
    pub(crate) recv: u64,
    pub(crate) count: usize,
    pub(crate) dtype: u32,
    pub(crate) op: Option<u32>,
    pub(crate) root: i32,
    pub(crate) peer: i32,
}

/// Checks that `[ptr, ptr + bytes)` lies in one device allocation of `device`.
fn check_buffer(
    st: &State,
    call: &str,
    rank: usize,
    device: usize,
    which: &str,
    ptr: u64,
    bytes: usize,
) -> Result<(), NcclError> {
    if bytes == 0 {
        return Ok(());
    }
    let fail = |why: String| {
        nccl_err(
            NCCL_INVALID_ARGUMENT,
            format!("{call}: rank {rank}: {which} {ptr:#x} (+{bytes} bytes) {why}"),
        )
    };
    if ptr == 0 {
        return fail("is NULL".into());
    }
    match st.alloc_at(ptr) {
        None => fail("is not inside any device allocation".into()),
        Some(a) if a.kind != AllocKind::Device => {
            fail("is host memory, not a device allocation".into())
        }
        Some(a) if a.device != device => fail(format!(
            "is on device {}, the comm is on device {device}",
            a.device
        )),
        Some(a) => {
            let end = a.base + a.len as u64;
            let over = (ptr as u128 + bytes as u128).saturating_sub(end as u128);
            if over > 0 {
                return fail(format!(
                    "overflows allocation a{} ({} bytes, offset {}) by {over} bytes",
                    a.id,
                    a.len,
                    ptr - a.base
                ));
            }
            Ok(())
        }
    }
}

pub(crate) fn issue(c: Call, comm_h: *mut c_void, stream_h: *mut c_void) -> NcclResult {
    nccl_guard(|| {
        let mut st = state();
        let comm_id = st.comm_id(comm_h);
        crate::trace::coll(
            &st,
            c.kind.c_name(),
            comm_id.as_ref().ok().copied(),
            &[c.send, c.recv],
            c.count,
            c.dtype,
            c.op,
            c.root,
            c.peer,
            stream_h,
        );
        let id = comm_id?;
        let name = c.kind.c_name();
        if matches!(c.kind, Kind::AlltoAll | Kind::Gather | Kind::Scatter) {
            need_version(22800, name)?;
        }
        check_dtype(c.dtype)?;
        let comm = &st.comms[&id];
        crate::debuglog::on_call(
            &st,
            id,
            &c.kind,
            c.send,
            c.recv,
            c.count,
            c.dtype,
            c.op,
            c.root.max(c.peer).max(0),
            stream_h,
        );
        let (n, rank, device) = (comm.nranks, comm.rank, comm.device);
        if comm.finalized {
            return nccl_err(
                NCCL_INVALID_USAGE,
                format!("{name}: rank {rank}: comm was finalized"),
            );
        }
        if (10..=11).contains(&c.dtype)
            && c.kind.reduces()
            && crate::config::compute_capability().0 < 9
        {
            return nccl_err(
                NCCL_INVALID_ARGUMENT,
                format!("{name}: fp8 reductions need sm90 or newer"),
            );
        }
        let red = match c.op {
            None => Red::None,
            Some(code @ 0..=3) => Red::Builtin(code),
            Some(4) => {
                need_version(21000, "ncclAvg").map_err(|e| NcclError {
                    code: NCCL_INVALID_ARGUMENT,
                    ..e
                })?;
                Red::Builtin(4)
            }
            Some(code) => match comm.premulsum.get(code as usize - 5).copied().flatten() {
                Some(op) if op.dtype == c.dtype => Red::PreMulSum { code, op },
                Some(op) => {
                    return nccl_err(
                        NCCL_INVALID_ARGUMENT,
                        format!(
                            "{name}: op {code} was created for dtype {}, used with {}",
                            op.dtype, c.dtype
                        ),
                    )
                }
                None => {
                    return nccl_err(
                        NCCL_INVALID_ARGUMENT,
                        format!(
                        "{name}: op {code} is not an op of this comm (destroyed or never created)"
                    ),
                    )
                }
            },
        };
        // A one-rank communicator runs a reduction as one local kernel, and NCCL (2.24 through
        // 2.30 and its master) builds that kernel's fp8 PreMulSum variants only for device code,
        // so the host's table lacks them: avg (a PreMulSum by 1/n on float types) and a
        // user PreMulSum on an fp8 type return ncclInvalidArgument there. Seen on an H200 with
        // 2.28.9, where nccl-tests' `-d all -o all` stops at f8e4m3 avg too.
        let premulsum = matches!(red, Red::PreMulSum { .. } | Red::Builtin(4));
        if n == 1 && c.count > 0 && c.kind.reduces() && (10..=11).contains(&c.dtype) && premulsum {
            return nccl_err(
                NCCL_INVALID_ARGUMENT,
                format!("{name}: no one-rank fp8 PreMulSum kernel (avg or a PreMulSum op)"),
            );
        }
        let rooted = matches!(
            c.kind,
            Kind::Broadcast | Kind::Reduce | Kind::Gather | Kind::Scatter
        );
        if rooted && !(0..n as i32).contains(&c.root) {
            return nccl_err(
                NCCL_INVALID_ARGUMENT,
                format!("{name}: root {} out of range for {n} ranks", c.root),
            );
        }
        if c.kind.is_p2p() && !(0..n as i32).contains(&c.peer) {
            return nccl_err(
                NCCL_INVALID_ARGUMENT,
                format!("{name}: peer {} out of range for {n} ranks", c.peer),
            );
        }
        let stream = st.stream_id(stream_h, device).ok_or_else(|| NcclError {
            code: NCCL_INVALID_ARGUMENT,
            message: format!("{name}: invalid stream"),
        })?;
        if st.streams[&stream].device != device {
            return nccl_err(
                NCCL_INVALID_ARGUMENT,
                format!(
                    "{name}: rank {rank}: stream is on device {}, the comm on device {device}",
                    st.streams[&stream].device
                ),
            );
        }
        let is_root = c.root as usize == rank;
        let (s_elems, r_elems) = match c.kind {
            Kind::AllReduce => (Some(1), Some(1)),
            Kind::Broadcast => (is_root.then_some(1), Some(1)),
            Kind::Reduce => (Some(1), is_root.then_some(1)),
            Kind::AllGather => (Some(1), Some(n)),
            Kind::ReduceScatter => (Some(n), Some(1)),
            Kind::AlltoAll => (Some(n), Some(n)),
            Kind::Gather => (Some(1), is_root.then_some(n)),
            Kind::Scatter => (is_root.then_some(n), Some(1)),
            Kind::Send => (Some(1), None),
            Kind::Recv => (None, Some(1)),
        };
        let too_big = || NcclError {
            code: NCCL_INVALID_ARGUMENT,
            message: format!("{name}: count {} overflows", c.count),
        };
        for (which, ptr, factor) in [("sendbuff", c.send, s_elems), ("recvbuff", c.recv, r_elems)] {
            if let Some(f) = factor {
                let bytes = c
                    .count
                    .checked_mul(dtype_size(c.dtype) * f)
                    .ok_or_else(too_big)?;
                check_buffer(&st, name, rank, device, which, ptr, bytes)?;
            }
        }
        let communicator = comm.communicator;
        if crate::group::depth() == 0 && st.owned_members(communicator) > 1 {
            return nccl_err(NCCL_INVALID_USAGE, format!("{name}: rank {rank}: this thread owns several ranks of the communicator; the call would deadlock real NCCL: use ncclGroupStart/End"));
        }
        st.comms.get_mut(&id).expect("checked").calls += 1;
        let op = Op {
            comm: id,
            rank,
            nranks: n,
            kind: c.kind,
            send: c.send,
            recv: c.recv,
            count: c.count,
            dtype: c.dtype,
            red,
            root: c.root,
            peer: c.peer,
            key: None,
            index: 0,
            stalled: false,
            corrupt: false,
            corrupt_rank: None,
            published: false,
            done: false,
        };
        if crate::group::depth() > 0 {
            crate::group::hold(stream, op);
        } else {
            // Outside a group the call is a group of its own (a lone send to self is refused).
            crate::group::place_all(&mut st, vec![(stream, op)])?;
        }
        Ok(())
    })
}
