//! The driver's global entry points: `cuInit`, versions, error texts, device queries and
//! primary contexts. A context is one handle per device, refcounted; `cuCtxSetCurrent` sets a
//! thread-local current device. Releasing the last reference destroys the device's memory,
//! streams and events, as the real driver does.
//!
//! `FAKE_CUDA_DRIVER_VERSION` (12040) is what `cuDriverGetVersion` reports; below 11070 the
//! driver predates `cuStreamWaitValue32_v2`. `FAKE_CUDA_NO_STREAM_MEM_OPS=1` makes every
//! device report CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 (92) as 0, so the v1
//! `cuStreamWaitValue32` fails with CUDA_ERROR_NOT_SUPPORTED (v2 needs no attribute).
//! `FAKE_CUDA_INIT_ERROR=CODE` makes `cuInit` return CODE (see [`init_error`]).

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::{MutexGuard, OnceLock};

use crate::state::*;

thread_local! {
    static CURRENT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The locked state, or CUDA_ERROR_NOT_INITIALIZED before `cuInit`.
pub fn require_init() -> Result<MutexGuard<'static, State>, CuResult> {
    let st = state();
    if st.initialized {
        Ok(st)
    } else {
        Err(CUDA_ERROR_NOT_INITIALIZED)
    }
}

/// The device of the calling thread's current context (CUDA_ERROR_INVALID_CONTEXT if none, or
/// if that context has been released since).
pub fn current_device(st: &State) -> Result<usize, CuResult> {
    match CURRENT.with(Cell::get) {
        Some(dev) if st.devices[dev].ctx_refs > 0 => Ok(dev),
        _ => Err(CUDA_ERROR_INVALID_CONTEXT),
    }
}

/// The current device, if any context is current (for NCCL calls, which report their own error).
pub fn current_device_opt(st: &State) -> Option<usize> {
    current_device(st).ok()
}

fn device_index(st: &State, dev: c_int) -> Result<usize, CuResult> {
    usize::try_from(dev)
        .ok()
        .filter(|&d| d < st.devices.len())
        .ok_or(CUDA_ERROR_INVALID_DEVICE)
}

/// (name, description) of the codes this double returns.
fn error_text(code: CuResult) -> Option<(&'static CStr, &'static CStr)> {
    Some(match code {
        0 => (c"CUDA_SUCCESS", c"no error"),
        1 => (c"CUDA_ERROR_INVALID_VALUE", c"invalid argument"),
        2 => (c"CUDA_ERROR_OUT_OF_MEMORY", c"out of memory"),
        3 => (c"CUDA_ERROR_NOT_INITIALIZED", c"initialization error"),
        100 => (
            c"CUDA_ERROR_NO_DEVICE",
            c"no CUDA-capable device is detected",
        ),
        101 => (c"CUDA_ERROR_INVALID_DEVICE", c"invalid device ordinal"),
        201 => (c"CUDA_ERROR_INVALID_CONTEXT", c"invalid device context"),
        400 => (c"CUDA_ERROR_INVALID_HANDLE", c"invalid resource handle"),
        401 => (
            c"CUDA_ERROR_ILLEGAL_STATE",
            c"the operation cannot be performed in the present state",
        ),
        600 => (c"CUDA_ERROR_NOT_READY", c"device not ready"),
        801 => (c"CUDA_ERROR_NOT_SUPPORTED", c"operation not supported"),
        200 => (
            c"CUDA_ERROR_INVALID_IMAGE",
            c"device kernel image is invalid",
        ),
        209 => (
            c"CUDA_ERROR_NO_BINARY_FOR_GPU",
            c"no kernel image is available for execution on the device",
        ),
        218 => (c"CUDA_ERROR_INVALID_PTX", c"a PTX JIT compilation failed"),
        500 => (c"CUDA_ERROR_NOT_FOUND", c"named symbol not found"),
        719 => (c"CUDA_ERROR_LAUNCH_FAILED", c"unspecified launch failure"),
        702 => (
            c"CUDA_ERROR_LAUNCH_TIMEOUT",
            c"the launch timed out and was terminated",
        ),
        900 => (
            c"CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
            c"operation not permitted when stream is capturing",
        ),
        999 => (c"CUDA_ERROR_UNKNOWN", c"unknown error"),
        _ => return None,
    })
}

/// `cuInit(unsigned flags)`; flags must be 0. Fails with [`init_error`] when one is set, and
/// the driver then stays uninitialised (every later call is CUDA_ERROR_NOT_INITIALIZED), as a
/// real driver whose `cuInit` failed.
#[no_mangle]
pub unsafe extern "C" fn cuInit(flags: u32) -> CuResult {
    cu_guard(|| {
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if let Some(code) = init_error() {
            return Err(code);
        }
        state().initialized = true;
        Ok(())
    })
}

/// The code `cuInit` returns (`FAKE_CUDA_INIT_ERROR`: a node whose driver is installed but
/// cannot start, e.g. 802 with the fabric manager down, 803 after a driver upgrade without a
/// reboot); `None` when unset, empty or 0. A value that is not a number panics, which the
/// guard turns into CUDA_ERROR_UNKNOWN: a typo in a test must not pass for a working driver.
pub fn init_error() -> Option<CuResult> {
    static V: OnceLock<Option<CuResult>> = OnceLock::new();
    *V.get_or_init(|| {
        let text = std::env::var("FAKE_CUDA_INIT_ERROR").unwrap_or_default();
        match text.trim() {
            "" => None,
            t => match t.parse::<CuResult>() {
                Ok(0) => None,
                Ok(code) => Some(code),
                Err(_) => panic!("FAKE_CUDA_INIT_ERROR={t:?} is not a CUresult"),
            },
        }
    })
}

/// The CUDA version the fake driver impersonates (`FAKE_CUDA_DRIVER_VERSION`, 12040).
pub fn driver_version() -> c_int {
    static V: OnceLock<c_int> = OnceLock::new();
    *V.get_or_init(|| {
        let text = std::env::var("FAKE_CUDA_DRIVER_VERSION").unwrap_or_default();
        text.trim().parse().unwrap_or(12040)
    })
}

/// Whether the devices allow v1 stream memory operations (not `FAKE_CUDA_NO_STREAM_MEM_OPS=1`).
pub fn stream_mem_ops_v1() -> bool {
    static V: OnceLock<bool> = OnceLock::new();
    *V.get_or_init(|| std::env::var("FAKE_CUDA_NO_STREAM_MEM_OPS").as_deref() != Ok("1"))
}

/// `cuDriverGetVersion(int*)`: [`driver_version`] (works before `cuInit`, as the real one).
#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut c_int) -> CuResult {
    cu_guard(|| put(version, driver_version(), CUDA_ERROR_INVALID_VALUE))
}

/// `cuGetErrorName(CUresult, const char**)`.
#[no_mangle]
pub unsafe extern "C" fn cuGetErrorName(code: CuResult, out: *mut *const c_char) -> CuResult {
    cu_guard(|| match error_text(code) {
        Some((name, _)) => put(out, name.as_ptr(), CUDA_ERROR_INVALID_VALUE),
        None => {
            let _ = put(out, std::ptr::null(), ());
            Err(CUDA_ERROR_INVALID_VALUE)
        }
    })
}

/// `cuGetErrorString(CUresult, const char**)`.
#[no_mangle]
pub unsafe extern "C" fn cuGetErrorString(code: CuResult, out: *mut *const c_char) -> CuResult {
    cu_guard(|| match error_text(code) {
        Some((_, text)) => put(out, text.as_ptr(), CUDA_ERROR_INVALID_VALUE),
        None => {
            let _ = put(out, std::ptr::null(), ());
            Err(CUDA_ERROR_INVALID_VALUE)
        }
    })
}

/// `cuDeviceGetCount(int*)`.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> CuResult {
    cu_guard(|| {
        let st = require_init()?;
        put(count, st.devices.len() as c_int, CUDA_ERROR_INVALID_VALUE)
    })
}

/// `cuDeviceGet(CUdevice*, int ordinal)`.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(device: *mut c_int, ordinal: c_int) -> CuResult {
    cu_guard(|| {
        let st = require_init()?;
        let dev = device_index(&st, ordinal)?;
        put(device, dev as c_int, CUDA_ERROR_INVALID_VALUE)
    })
}

/// `cuDeviceGetName(char*, int len, CUdevice)`: "Fake GPU N", truncated to fit.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, device: c_int) -> CuResult {
    cu_guard(|| {
        let st = require_init()?;
        let dev = device_index(&st, device)?;
        if name.is_null() || len <= 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let text = format!("Fake GPU {dev}");
        let n = text.len().min(len as usize - 1);
        std::ptr::copy_nonoverlapping(text.as_ptr(), name as *mut u8, n);
        *name.add(n) = 0;
        Ok(())
    })
}

/// `cuDeviceGetAttribute(int*, CUdevice_attribute, CUdevice)`: PCI ids, compute capability and
/// stream memory operations.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetAttribute(
    value: *mut c_int,
    attribute: c_int,
    device: c_int,
) -> CuResult {
    cu_guard(|| {
        let st = require_init()?;
        let dev = device_index(&st, device)? as c_int;
        let (major, minor) = crate::config::compute_capability();
        let v = match attribute {
            16 => 132,        // MULTIPROCESSOR_COUNT
            33 => 0x18 + dev, // PCI_BUS_ID
            34 => 0,          // PCI_DEVICE_ID
            50 => 0,          // PCI_DOMAIN_ID
            75 => major,
            76 => minor,
            92 => stream_mem_ops_v1() as c_int, // CAN_USE_STREAM_MEM_OPS_V1
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        };
        put(value, v, CUDA_ERROR_INVALID_VALUE)
    })
}

/// `cuDeviceTotalMem_v2(size_t*, CUdevice)`.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, device: c_int) -> CuResult {
    cu_guard(|| {
        let st = require_init()?;
        device_index(&st, device)?;
        put(
            bytes,
            crate::config::device_memory(),
            CUDA_ERROR_INVALID_VALUE,
        )
    })
}

/// `cuDevicePrimaryCtxRetain(CUcontext*, CUdevice)`: one handle per device, refcounted.
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(
    ctx: *mut *mut c_void,
    device: c_int,
) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let dev = device_index(&st, device)?;
        put(ctx, handle(TAG_CTX, dev as u64), CUDA_ERROR_INVALID_VALUE)?;
        st.devices[dev].ctx_refs += 1;
        Ok(())
    })
}

/// `cuDevicePrimaryCtxRelease_v2(CUdevice)`; the last release destroys the context's objects.
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease_v2(device: c_int) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let dev = device_index(&st, device)?;
        if st.devices[dev].ctx_refs == 0 {
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        st.devices[dev].ctx_refs -= 1;
        if st.devices[dev].ctx_refs == 0 {
            st.free_device_memory(dev);
            let legacy = st.devices[dev].legacy_stream;
            st.streams.retain(|&id, s| s.device != dev || id == legacy);
            if let Some(s) = st.streams.get_mut(&legacy) {
                s.queue.clear();
            }
            st.events.retain(|_, e| e.device != dev);
        }
        Ok(())
    })
}

/// `cuCtxSetCurrent(CUcontext)`: NULL unsets.
#[no_mangle]
pub unsafe extern "C" fn cuCtxSetCurrent(ctx: *mut c_void) -> CuResult {
    cu_guard(|| {
        let st = require_init()?;
        if ctx.is_null() {
            CURRENT.with(|c| c.set(None));
            return Ok(());
        }
        let dev = unhandle(TAG_CTX, ctx)
            .map(|d| d as usize)
            .filter(|&d| d < st.devices.len() && st.devices[d].ctx_refs > 0)
            .ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        CURRENT.with(|c| c.set(Some(dev)));
        Ok(())
    })
}

/// `cuCtxGetCurrent(CUcontext*)`: NULL when none is current.
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetCurrent(ctx: *mut *mut c_void) -> CuResult {
    cu_guard(|| {
        let st = require_init()?;
        let h = match current_device(&st) {
            Ok(dev) => handle(TAG_CTX, dev as u64),
            Err(_) => std::ptr::null_mut(),
        };
        put(ctx, h, CUDA_ERROR_INVALID_VALUE)
    })
}
