//! The exported communication entry points, each a thin C shim over
//! `crate::nccl_coll::issue` with NCCL's exact signature.

use std::ffi::c_void;

use crate::engine::Kind;
use crate::nccl_coll::{issue, Call};
use crate::state::NcclResult;

fn p(ptr: *const c_void) -> u64 {
    ptr as usize as u64
}

#[allow(clippy::too_many_arguments)]
fn call(
    kind: Kind,
    send: *const c_void,
    recv: *const c_void,
    count: usize,
    dtype: u32,
    op: Option<u32>,
    root: i32,
    peer: i32,
) -> Call {
    Call {
        kind,
        send: p(send),
        recv: p(recv),
        count,
        dtype,
        op,
        root,
        peer,
    }
}

/// `ncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm, stream)`.
#[no_mangle]
pub extern "C" fn ncclAllReduce(
    s: *const c_void,
    r: *mut c_void,
    count: usize,
    dt: u32,
    op: u32,
    comm: *mut c_void,
    stream: *mut c_void,
) -> NcclResult {
    issue(
        call(Kind::AllReduce, s, r, count, dt, Some(op), -1, -1),
        comm,
        stream,
    )
}

/// `ncclBroadcast(sendbuff, recvbuff, count, datatype, root, comm, stream)`.
#[no_mangle]
pub extern "C" fn ncclBroadcast(
    s: *const c_void,
    r: *mut c_void,
    count: usize,
    dt: u32,
    root: i32,
    comm: *mut c_void,
    stream: *mut c_void,
) -> NcclResult {
    issue(
        call(Kind::Broadcast, s, r, count, dt, None, root, -1),
        comm,
        stream,
    )
}

/// `ncclReduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream)`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn ncclReduce(
    s: *const c_void,
    r: *mut c_void,
    count: usize,
    dt: u32,
    op: u32,
    root: i32,
    comm: *mut c_void,
    stream: *mut c_void,
) -> NcclResult {
    issue(
        call(Kind::Reduce, s, r, count, dt, Some(op), root, -1),
        comm,
        stream,
    )
}

/// `ncclAllGather(sendbuff, recvbuff, sendcount, datatype, comm, stream)`.
#[no_mangle]
pub extern "C" fn ncclAllGather(
    s: *const c_void,
    r: *mut c_void,
    count: usize,
    dt: u32,
    comm: *mut c_void,
    stream: *mut c_void,
) -> NcclResult {
    issue(
        call(Kind::AllGather, s, r, count, dt, None, -1, -1),
        comm,
        stream,
    )
}

/// `ncclReduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream)`.
#[no_mangle]
pub extern "C" fn ncclReduceScatter(
    s: *const c_void,
    r: *mut c_void,
    count: usize,
    dt: u32,
    op: u32,
    comm: *mut c_void,
    stream: *mut c_void,
) -> NcclResult {
    issue(
        call(Kind::ReduceScatter, s, r, count, dt, Some(op), -1, -1),
        comm,
        stream,
    )
}

/// `ncclAlltoAll(sendbuff, recvbuff, count, datatype, comm, stream)` (2.28+).
#[no_mangle]
pub extern "C" fn ncclAlltoAll(
    s: *const c_void,
    r: *mut c_void,
    count: usize,
    dt: u32,
    comm: *mut c_void,
    stream: *mut c_void,
) -> NcclResult {
    issue(
        call(Kind::AlltoAll, s, r, count, dt, None, -1, -1),
        comm,
        stream,
    )
}

/// `ncclGather(sendbuff, recvbuff, count, datatype, root, comm, stream)` (2.28+).
#[no_mangle]
pub extern "C" fn ncclGather(
    s: *const c_void,
    r: *mut c_void,
    count: usize,
    dt: u32,
    root: i32,
    comm: *mut c_void,
    stream: *mut c_void,
) -> NcclResult {
    issue(
        call(Kind::Gather, s, r, count, dt, None, root, -1),
        comm,
        stream,
    )
}

/// `ncclScatter(sendbuff, recvbuff, count, datatype, root, comm, stream)` (2.28+).
#[no_mangle]
pub extern "C" fn ncclScatter(
    s: *const c_void,
    r: *mut c_void,
    count: usize,
    dt: u32,
    root: i32,
    comm: *mut c_void,
    stream: *mut c_void,
) -> NcclResult {
    issue(
        call(Kind::Scatter, s, r, count, dt, None, root, -1),
        comm,
        stream,
    )
}

/// `ncclSend(sendbuff, count, datatype, peer, comm, stream)`.
#[no_mangle]
pub extern "C" fn ncclSend(
    s: *const c_void,
    count: usize,
    dt: u32,
    peer: i32,
    comm: *mut c_void,
    stream: *mut c_void,
) -> NcclResult {
    issue(
        call(Kind::Send, s, std::ptr::null(), count, dt, None, -1, peer),
        comm,
        stream,
    )
}

/// `ncclRecv(recvbuff, count, datatype, peer, comm, stream)`.
#[no_mangle]
pub extern "C" fn ncclRecv(
    r: *mut c_void,
    count: usize,
    dt: u32,
    peer: i32,
    comm: *mut c_void,
    stream: *mut c_void,
) -> NcclResult {
    issue(
        call(Kind::Recv, std::ptr::null(), r, count, dt, None, -1, peer),
        comm,
        stream,
    )
}
