//! Stream capture and graphs. A capturing stream collects enqueued items instead of queueing
//! them; the graph is that item list, and `cuGraphLaunch` appends fresh copies to a stream
//! (collectives get their sequence numbers there, not at capture). The
//! `FAKE_NCCL_CORRUPT_IN_GRAPH` hook corrupts what a replay places.

use std::ffi::c_void;

use crate::cuda_api::{current_device, require_init};
use crate::engine::progress;
use crate::state::*;
use crate::stream::Item;

fn capturing_stream(st: &State, h: *mut c_void) -> Result<u64, CuResult> {
    let dev = current_device(st)?;
    let id = st.stream_id(h, dev).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if st.streams[&id].legacy {
        return Err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    }
    Ok(id)
}

/// `cuStreamBeginCapture_v2(CUstream, CUstreamCaptureMode)`.
#[no_mangle]
pub unsafe extern "C" fn cuStreamBeginCapture_v2(h: *mut c_void, mode: i32) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let id = capturing_stream(&st, h)?;
        if !(0..=2).contains(&mode) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let s = st.streams.get_mut(&id).expect("resolved");
        if s.capture.is_some() {
            return Err(CUDA_ERROR_ILLEGAL_STATE);
        }
        s.capture = Some(Vec::new());
        Ok(())
    })
}

/// `cuStreamEndCapture(CUstream, CUgraph*)`.
#[no_mangle]
pub unsafe extern "C" fn cuStreamEndCapture(h: *mut c_void, graph: *mut *mut c_void) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let id = capturing_stream(&st, h)?;
        if graph.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let items = st.streams.get_mut(&id).expect("resolved").capture.take();
        let items = items.ok_or(CUDA_ERROR_ILLEGAL_STATE)?;
        let g = st.fresh_id();
        st.graphs.insert(g, items);
        put(graph, handle(TAG_GRAPH, g), CUDA_ERROR_INVALID_VALUE)
    })
}

/// `cuGraphInstantiateWithFlags(CUgraphExec*, CUgraph, unsigned long long)`.
#[no_mangle]
pub unsafe extern "C" fn cuGraphInstantiateWithFlags(
    exec: *mut *mut c_void,
    graph: *mut c_void,
    _flags: u64,
) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        current_device(&st)?;
        let g = unhandle(TAG_GRAPH, graph).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let items = st.graphs.get(&g).ok_or(CUDA_ERROR_INVALID_HANDLE)?.clone();
        if exec.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let x = st.fresh_id();
        st.execs.insert(x, items);
        put(exec, handle(TAG_EXEC, x), CUDA_ERROR_INVALID_VALUE)
    })
}

/// `cuGraphLaunch(CUgraphExec, CUstream)`.
#[no_mangle]
pub unsafe extern "C" fn cuGraphLaunch(exec: *mut c_void, h: *mut c_void) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let dev = current_device(&st)?;
        let x = unhandle(TAG_EXEC, exec).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let items = st.execs.get(&x).ok_or(CUDA_ERROR_INVALID_HANDLE)?.clone();
        let s = st.stream_id(h, dev).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        for item in items {
            let batch = matches!(item, Item::Batch(_));
            st.enqueue(s, item);
            if batch {
                corrupt_if_hooked(&mut st, s);
            }
        }
        progress(&mut st);
        Ok(())
    })
}

/// `FAKE_NCCL_CORRUPT_IN_GRAPH`: marks the batch a replay just placed on `stream` as corrupt,
/// op by op per its communicator's hooks (before anything runs it). A replay into a capturing
/// stream places nothing on the queue, so nothing is marked.
fn corrupt_if_hooked(st: &mut State, stream: u64) {
    let hooked: Vec<bool> = match st.streams.get(&stream) {
        Some(s) if s.capture.is_none() => match s.queue.back() {
            Some(Item::Batch(ops)) => ops
                .iter()
                .map(|op| {
                    st.comms
                        .get(&op.comm)
                        .and_then(|c| st.communicators.get(&c.communicator))
                        .is_some_and(|c| c.hooks.corrupt_in_graph)
                })
                .collect(),
            _ => return,
        },
        _ => return,
    };
    let Some(Item::Batch(ops)) = st.streams.get_mut(&stream).and_then(|s| s.queue.back_mut())
    else {
        return;
    };
    for (op, hooked) in ops.iter_mut().zip(hooked) {
        op.corrupt |= hooked;
    }
}

/// `cuGraphExecDestroy(CUgraphExec)`.
#[no_mangle]
pub unsafe extern "C" fn cuGraphExecDestroy(exec: *mut c_void) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let x = unhandle(TAG_EXEC, exec).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        st.execs
            .remove(&x)
            .map(drop)
            .ok_or(CUDA_ERROR_INVALID_HANDLE)
    })
}

/// `cuGraphDestroy(CUgraph)`.
#[no_mangle]
pub unsafe extern "C" fn cuGraphDestroy(graph: *mut c_void) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let g = unhandle(TAG_GRAPH, graph).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        st.graphs
            .remove(&g)
            .map(drop)
            .ok_or(CUDA_ERROR_INVALID_HANDLE)
    })
}
