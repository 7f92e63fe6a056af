//! Copies and memsets with the driver's host-synchronisation rules, so that a missing stream
//! synchronisation in the caller shows as stale bytes instead of passing by luck:
//!
//! * `cuMemcpyHtoD_v2` from pageable memory first completes the legacy stream's work, then
//!   stages the bytes and returns; they reach the device as a *landing* item of the current
//!   device's legacy stream, which a non-blocking stream never waits for. From pinned memory
//!   (`cuMemHostAlloc`) it is synchronous.
//! * `cuMemsetD8_v2` is a landing item of the legacy stream (asynchronous to the host).
//! * `cuMemcpyHtoDAsync_v2` from pageable memory stages at the call and lands as an item of
//!   the given stream; from pinned memory the bytes are read when the item runs.
//! * `cuMemcpyDtoH_v2` completes the legacy stream's work first and copies before returning.
//! * `cuMemcpyDtoDAsync_v2` is an item of its stream.
//!
//! A landing lands as late as the driver allows: when its stream is synchronized or queried,
//! when a later item of the same stream runs, or, on a legacy stream, when a later synchronous
//! copy or work on a blocking stream of that device is enqueued ([`State::settle`]). A
//! collective on a non-blocking stream that runs before then reads the old bytes.

use std::ffi::c_void;

use crate::cuda_api::{current_device, require_init};
use crate::engine::progress;
use crate::memory::AllocKind;
use crate::state::*;
use crate::stream::{stream_of_current, Item};

impl State {
    /// Lets every landing queued on `stream` so far complete as soon as it is reached (the
    /// stream was synchronized, queried, or something ordered after it was enqueued).
    pub fn settle(&mut self, stream: u64) {
        if let Some(s) = self.streams.get_mut(&stream) {
            for item in s.queue.iter_mut() {
                if let Item::Write { lazy, .. } = item {
                    *lazy = false;
                }
            }
        }
    }

    /// Settles the legacy stream of `device`.
    pub fn settle_legacy(&mut self, device: usize) {
        if let Some(legacy) = self.devices.get(device).map(|d| d.legacy_stream) {
            self.settle(legacy);
        }
    }

    /// Work enqueued on a blocking stream (created without CU_STREAM_NON_BLOCKING) waits for
    /// the legacy stream's earlier work; a non-blocking stream does not. Settling lets those
    /// copies land, and [`progress`] advances legacy streams first, so they land before the
    /// blocking stream's item runs (unless the legacy stream's head is itself waiting, a case
    /// ncclbench never makes: its streams are non-blocking or the legacy stream itself).
    pub fn order_after_legacy(&mut self, stream: u64) {
        let blocking = self
            .streams
            .get(&stream)
            .filter(|s| !s.legacy && s.flags & 1 == 0)
            .map(|s| s.device);
        if let Some(device) = blocking {
            self.settle_legacy(device);
        }
    }

    /// Whether `[addr, addr + len)` lies in pinned host memory (`cuMemHostAlloc`).
    fn pinned(&self, addr: u64, len: usize) -> bool {
        self.alloc_holding(addr, len)
            .is_some_and(|a| a.kind == AllocKind::Host)
    }
}

/// Settles the current device's legacy stream and runs what can run, returning that stream.
fn complete_legacy(st: &mut State) -> Result<u64, CuResult> {
    let dev = current_device(st)?;
    st.settle_legacy(dev);
    progress(st);
    Ok(st.devices[dev].legacy_stream)
}

/// `cuMemcpyHtoD_v2(CUdeviceptr, const void*, size_t)`, bounds-checked; see the module
/// documentation for when the bytes land.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(dst: u64, src: *const c_void, bytes: usize) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        current_device(&st)?;
        if st.alloc_holding(dst, bytes).is_none() || (src.is_null() && bytes > 0) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let legacy = complete_legacy(&mut st)?;
        if bytes == 0 {
            return Ok(());
        }
        if st.pinned(src as u64, bytes) {
            std::ptr::copy(src as *const u8, dst as usize as *mut u8, bytes);
            return Ok(());
        }
        let data = std::slice::from_raw_parts(src as *const u8, bytes).to_vec();
        st.enqueue(
            legacy,
            Item::Write {
                dst,
                data,
                lazy: true,
            },
        );
        progress(&mut st);
        Ok(())
    })
}

/// `cuMemcpyHtoDAsync_v2(CUdeviceptr, const void*, size_t, CUstream)`, bounds-checked: an
/// item of the stream (pageable bytes staged now, pinned ones read when it runs).
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    dst: u64,
    src: *const c_void,
    bytes: usize,
    h: *mut c_void,
) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let id = stream_of_current(&st, h)?;
        if st.alloc_holding(dst, bytes).is_none() || (src.is_null() && bytes > 0) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if bytes == 0 {
            return Ok(());
        }
        let item = if st.pinned(src as u64, bytes) {
            Item::Copy {
                dst,
                src: src as u64,
                len: bytes,
            }
        } else {
            let data = std::slice::from_raw_parts(src as *const u8, bytes).to_vec();
            Item::Write {
                dst,
                data,
                lazy: true,
            }
        };
        st.enqueue(id, item);
        progress(&mut st);
        Ok(())
    })
}

/// `cuMemcpyDtoH_v2(void*, CUdeviceptr, size_t)`, bounds-checked: after the legacy stream's
/// earlier work, complete on return. Work of non-blocking streams is not waited for.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(dst: *mut c_void, src: u64, bytes: usize) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        complete_legacy(&mut st)?;
        if st.alloc_holding(src, bytes).is_none() || (dst.is_null() && bytes > 0) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if bytes > 0 {
            std::ptr::copy(src as usize as *const u8, dst as *mut u8, bytes);
        }
        Ok(())
    })
}

/// `cuMemsetD8_v2(CUdeviceptr, unsigned char, size_t)`, bounds-checked: a landing item of the
/// legacy stream.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8_v2(dst: u64, value: u8, count: usize) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let dev = current_device(&st)?;
        if st.alloc_holding(dst, count).is_none() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if count > 0 {
            let legacy = st.devices[dev].legacy_stream;
            let data = vec![value; count];
            st.enqueue(
                legacy,
                Item::Write {
                    dst,
                    data,
                    lazy: true,
                },
            );
        }
        progress(&mut st);
        Ok(())
    })
}

/// `cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t, CUstream)`: a copy queued
/// on the stream, both ranges inside live allocations.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoDAsync_v2(
    dst: u64,
    src: u64,
    len: usize,
    h: *mut c_void,
) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let id = stream_of_current(&st, h)?;
        if st.alloc_holding(dst, len).is_none() || st.alloc_holding(src, len).is_none() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        st.enqueue(id, Item::Copy { dst, src, len });
        progress(&mut st);
        Ok(())
    })
}
