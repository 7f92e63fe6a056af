//! Streams (in-order queues of [`Item`]s; events are in [`crate::event`]). The NULL stream is
//! the current device's legacy stream. Nothing runs here: [`crate::engine::progress`] executes
//! head items; the query and synchronize calls drive it, and complete the stream's landings
//! ([`crate::copy`]). Work on a blocking stream is ordered after the legacy stream's.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::time::Instant;

pub use crate::event::Event;

use crate::cuda_api::{current_device, require_init};
use crate::engine::{progress, Op};
use crate::state::*;

/// One queued unit of work.
#[derive(Debug, Clone)]
pub enum Item {
    /// `cuEventRecord`: stamps the event when reached (`gen` numbers the records).
    Record { event: u64, gen: u64 },
    /// `cuStreamWaitValue32`: blocks the stream until the condition on `*addr` holds.
    WaitValue { addr: u64, value: u32, flags: u32 },
    /// `cuMemcpyDtoDAsync` (or a pinned-source `cuMemcpyHtoDAsync`): copies `len` bytes when
    /// reached (both ranges checked on enqueue).
    Copy { dst: u64, src: u64, len: usize },
    /// Staged host bytes (or a memset's) landing at `dst`; while `lazy` and last in its queue
    /// it waits, so nothing unordered with it sees the bytes early ([`crate::copy`]).
    Write { dst: u64, data: Vec<u8>, lazy: bool },
    /// The communication ops one group (or one ungrouped call) put on this stream.
    Batch(Vec<Op>),
    /// `cuLaunchKernel` of a verification kernel ([`crate::launch`]).
    Kernel(crate::launch::Launch),
    /// `cuMemcpyDtoHAsync_v2`: `len` bytes at device `src` copied to host `dst` when reached.
    ReadBack { dst: u64, src: u64, len: usize },
}

/// An in-order queue.
#[derive(Debug)]
pub struct Stream {
    pub id: u64,
    pub device: usize,
    pub flags: u32,
    pub legacy: bool,
    pub queue: VecDeque<Item>,
    /// `Some` while capturing: where enqueued items go instead.
    pub capture: Option<Vec<Item>>,
}

impl Stream {
    pub fn new(id: u64, device: usize, flags: u32, legacy: bool) -> Stream {
        Stream {
            id,
            device,
            flags,
            legacy,
            queue: VecDeque::new(),
            capture: None,
        }
    }
}

impl State {
    /// The stream id of handle `h` (NULL: the legacy stream of `null_device`).
    pub fn stream_id(&self, h: *mut c_void, null_device: usize) -> Option<u64> {
        if h.is_null() {
            return self.devices.get(null_device).map(|d| d.legacy_stream);
        }
        unhandle(TAG_STREAM, h).filter(|id| self.streams.contains_key(id))
    }

    /// Appends `item` to the stream (or to its capture); event records get their number here.
    pub fn enqueue(&mut self, stream: u64, mut item: Item) {
        self.order_after_legacy(stream);
        let capturing = self
            .streams
            .get(&stream)
            .is_some_and(|s| s.capture.is_some());
        if let Item::Record { event, gen } = &mut item {
            if !capturing {
                if let Some(e) = self.events.get_mut(event) {
                    e.last_gen += 1;
                    *gen = e.last_gen;
                }
            }
        }
        if let Item::Batch(ops) = item {
            return crate::engine::place_batch(self, stream, ops);
        }
        let s = self
            .streams
            .get_mut(&stream)
            .expect("caller resolved the stream");
        match &mut s.capture {
            Some(list) => list.push(item),
            None => s.queue.push_back(item),
        }
    }
}

/// The stream of handle `h` in the current context (NULL: its legacy stream).
pub(crate) fn stream_of_current(st: &State, h: *mut c_void) -> Result<u64, CuResult> {
    let dev = current_device(st)?;
    st.stream_id(h, dev).ok_or(CUDA_ERROR_INVALID_HANDLE)
}

/// `cuStreamCreate(CUstream*, unsigned flags)`.
#[no_mangle]
pub unsafe extern "C" fn cuStreamCreate(out: *mut *mut c_void, flags: u32) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let dev = current_device(&st)?;
        if out.is_null() || flags > 1 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let id = st.fresh_id();
        st.streams.insert(id, Stream::new(id, dev, flags, false));
        put(out, handle(TAG_STREAM, id), CUDA_ERROR_INVALID_VALUE)
    })
}

/// `cuStreamDestroy_v2(CUstream)`: pending work is dropped with the stream.
#[no_mangle]
pub unsafe extern "C" fn cuStreamDestroy_v2(h: *mut c_void) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        current_device(&st)?;
        let id = unhandle(TAG_STREAM, h).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        st.settle(id);
        progress(&mut st);
        st.streams
            .remove(&id)
            .map(drop)
            .ok_or(CUDA_ERROR_INVALID_HANDLE)
    })
}

/// `cuStreamQuery(CUstream)`: CUDA_ERROR_NOT_READY while items remain.
#[no_mangle]
pub unsafe extern "C" fn cuStreamQuery(h: *mut c_void) -> CuResult {
    cu_guard(|| {
        crate::sticky::on_query()?;
        let mut st = require_init()?;
        let id = stream_of_current(&st, h)?;
        if st.streams[&id].capture.is_some() {
            return Err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        }
        st.settle(id);
        progress(&mut st);
        if st.streams[&id].queue.is_empty() {
            return Ok(());
        }
        // Waiting on another process: block briefly (a message wakes it) rather than spin.
        let st = crate::xproc::pause_if_waiting(st);
        if st.streams.get(&id).is_some_and(|s| s.queue.is_empty()) {
            Ok(())
        } else {
            Err(CUDA_ERROR_NOT_READY)
        }
    })
}

/// `cuStreamSynchronize(CUstream)`: drives progress until the stream is empty, giving up with
/// CUDA_ERROR_LAUNCH_TIMEOUT after [`crate::config::sync_timeout`].
#[no_mangle]
pub unsafe extern "C" fn cuStreamSynchronize(h: *mut c_void) -> CuResult {
    cu_guard(|| {
        crate::sticky::poisoned()?;
        let start = Instant::now();
        loop {
            let mut st = require_init()?;
            let id = stream_of_current(&st, h)?;
            if st.streams[&id].capture.is_some() {
                return Err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
            }
            st.settle(id);
            progress(&mut st);
            if st.streams[&id].queue.is_empty() {
                return Ok(());
            }
            if start.elapsed() > crate::config::sync_timeout() {
                return Err(CUDA_ERROR_LAUNCH_TIMEOUT);
            }
            // Released until another process's message (or an abort) changes the state; a
            // partner thread of this process or a host-written word is seen within 200 us.
            drop(wait(st, std::time::Duration::from_micros(200)));
        }
    })
}

/// `cuStreamWaitValue32_v2(CUstream, CUdeviceptr, cuuint32_t, unsigned flags)`: drivers before
/// CUDA 11.7 lack it, which the fake (whose exports are fixed) shows as
/// CUDA_ERROR_NOT_SUPPORTED when it impersonates one.
#[no_mangle]
pub unsafe extern "C" fn cuStreamWaitValue32_v2(
    h: *mut c_void,
    addr: u64,
    value: u32,
    flags: u32,
) -> CuResult {
    if crate::cuda_api::driver_version() < 11070 {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    wait_value32(h, addr, value, flags)
}

/// `cuStreamWaitValue32(CUstream, CUdeviceptr, cuuint32_t, unsigned flags)`, the v1 ABI:
/// CUDA_ERROR_NOT_SUPPORTED unless the device allows v1 stream memory operations.
#[no_mangle]
pub unsafe extern "C" fn cuStreamWaitValue32(
    h: *mut c_void,
    addr: u64,
    value: u32,
    flags: u32,
) -> CuResult {
    if !crate::cuda_api::stream_mem_ops_v1() {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    wait_value32(h, addr, value, flags)
}

fn wait_value32(h: *mut c_void, addr: u64, value: u32, flags: u32) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let id = stream_of_current(&st, h)?;
        if st.alloc_holding(addr, 4).is_none() || addr % 4 != 0 || (flags & 0xFFFF) > 3 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        st.enqueue(id, Item::WaitValue { addr, value, flags });
        progress(&mut st);
        Ok(())
    })
}
