//! CUDA events: `cuEventCreate`, `cuEventRecord` (an [`Item::Record`] on the stream, stamped
//! when the stream reaches it), `cuEventQuery`, `cuEventElapsedTime`, `cuEventDestroy_v2`.

use std::ffi::{c_float, c_void};
use std::time::Instant;

use crate::cuda_api::{current_device, require_init};
use crate::engine::progress;
use crate::state::*;
use crate::stream::{stream_of_current, Item};

/// A CUDA event.
#[derive(Debug)]
pub struct Event {
    pub device: usize,
    pub flags: u32,
    /// Number of the latest record, and of the latest one reached.
    pub last_gen: u64,
    pub done_gen: u64,
    pub stamp: Option<Instant>,
}

/// `cuEventCreate(CUevent*, unsigned flags)`.
#[no_mangle]
pub unsafe extern "C" fn cuEventCreate(out: *mut *mut c_void, flags: u32) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let device = current_device(&st)?;
        if out.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let id = st.fresh_id();
        let event = Event {
            device,
            flags,
            last_gen: 0,
            done_gen: 0,
            stamp: None,
        };
        st.events.insert(id, event);
        put(out, handle(TAG_EVENT, id), CUDA_ERROR_INVALID_VALUE)
    })
}

fn event_id(st: &State, h: *mut c_void) -> Result<u64, CuResult> {
    unhandle(TAG_EVENT, h)
        .filter(|id| st.events.contains_key(id))
        .ok_or(CUDA_ERROR_INVALID_HANDLE)
}

/// `cuEventRecord(CUevent, CUstream)`: event and stream must share a device.
#[no_mangle]
pub unsafe extern "C" fn cuEventRecord(event: *mut c_void, h: *mut c_void) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let e = event_id(&st, event)?;
        let s = stream_of_current(&st, h)?;
        if st.events[&e].device != st.streams[&s].device {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        }
        st.enqueue(s, Item::Record { event: e, gen: 0 });
        progress(&mut st);
        Ok(())
    })
}

/// `cuEventQuery(CUevent)`: success when the latest record was reached (or none was made).
#[no_mangle]
pub unsafe extern "C" fn cuEventQuery(event: *mut c_void) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let e = event_id(&st, event)?;
        progress(&mut st);
        let ev = &st.events[&e];
        if ev.done_gen == ev.last_gen {
            return Ok(());
        }
        let st = crate::xproc::pause_if_waiting(st);
        match st.events.get(&e) {
            Some(ev) if ev.done_gen == ev.last_gen => Ok(()),
            _ => Err(CUDA_ERROR_NOT_READY),
        }
    })
}

/// `cuEventElapsedTime(float* ms, CUevent start, CUevent end)`.
#[no_mangle]
pub unsafe extern "C" fn cuEventElapsedTime(
    ms: *mut c_float,
    start: *mut c_void,
    end: *mut c_void,
) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let (a, b) = (event_id(&st, start)?, event_id(&st, end)?);
        progress(&mut st);
        let (a, b) = (&st.events[&a], &st.events[&b]);
        if a.last_gen == 0 || b.last_gen == 0 || (a.flags | b.flags) & 2 != 0 {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        }
        match (a.stamp, b.stamp) {
            (Some(x), Some(y)) if a.done_gen == a.last_gen && b.done_gen == b.last_gen => {
                let d = if y >= x {
                    (y - x).as_secs_f64()
                } else {
                    -(x - y).as_secs_f64()
                };
                put(ms, (d * 1e3) as f32, CUDA_ERROR_INVALID_VALUE)
            }
            _ => Err(CUDA_ERROR_NOT_READY),
        }
    })
}

/// `cuEventDestroy_v2(CUevent)`.
#[no_mangle]
pub unsafe extern "C" fn cuEventDestroy_v2(event: *mut c_void) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let e = event_id(&st, event)?;
        st.events.remove(&e);
        Ok(())
    })
}
