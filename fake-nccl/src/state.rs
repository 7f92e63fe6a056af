//! The one process-wide state (devices, allocations, streams, events, graphs, communicators)
//! behind one mutex, the opaque handle scheme, and the guards every exported function runs in.
//!
//! Handles are never dereferenced: each is `tag << 44 | id`, looked up in a map, so a stale or
//! foreign handle is an error code, not a crash. Nothing may unwind into C: [`cu_guard`] and
//! [`nccl_guard`] turn a panic into CUDA_ERROR_UNKNOWN / ncclInternalError.

use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use crate::comm::{Comm, Communicator};
use crate::memory::Alloc;
use crate::stream::{Event, Item, Stream};

/// `CUresult`.
pub type CuResult = i32;
/// `ncclResult_t`.
pub type NcclResult = u32;

pub const CUDA_SUCCESS: CuResult = 0;
pub const CUDA_ERROR_INVALID_VALUE: CuResult = 1;
pub const CUDA_ERROR_OUT_OF_MEMORY: CuResult = 2;
pub const CUDA_ERROR_NOT_INITIALIZED: CuResult = 3;
pub const CUDA_ERROR_INVALID_DEVICE: CuResult = 101;
pub const CUDA_ERROR_INVALID_CONTEXT: CuResult = 201;
pub const CUDA_ERROR_INVALID_HANDLE: CuResult = 400;
pub const CUDA_ERROR_ILLEGAL_STATE: CuResult = 401;
pub const CUDA_ERROR_NOT_READY: CuResult = 600;
pub const CUDA_ERROR_LAUNCH_TIMEOUT: CuResult = 702;
pub const CUDA_ERROR_NOT_SUPPORTED: CuResult = 801;
pub const CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: CuResult = 900;
pub const CUDA_ERROR_UNKNOWN: CuResult = 999;

pub const NCCL_SUCCESS: NcclResult = 0;
pub const NCCL_UNHANDLED_CUDA_ERROR: NcclResult = 1;
pub const NCCL_INTERNAL_ERROR: NcclResult = 3;
pub const NCCL_INVALID_ARGUMENT: NcclResult = 4;
pub const NCCL_INVALID_USAGE: NcclResult = 5;
pub const NCCL_SYSTEM_ERROR: NcclResult = 2;
pub const NCCL_REMOTE_ERROR: NcclResult = 6;

/// Handle tags (the bits above 44).
pub const TAG_CTX: u64 = 0xC1;
pub const TAG_STREAM: u64 = 0x51;
pub const TAG_EVENT: u64 = 0xE1;
pub const TAG_GRAPH: u64 = 0x61;
pub const TAG_EXEC: u64 = 0x62;
pub const TAG_COMM: u64 = 0xCC;
pub const TAG_REG: u64 = 0x4E;

/// The opaque pointer for object `id` of kind `tag`.
pub fn handle(tag: u64, id: u64) -> *mut c_void {
    ((tag << 44) | id) as usize as *mut c_void
}

/// The id of `h` if it carries `tag`.
pub fn unhandle(tag: u64, h: *const c_void) -> Option<u64> {
    let v = h as usize as u64;
    (v >> 44 == tag).then_some(v & ((1 << 44) - 1))
}

/// One fake device: its primary context's reference count and legacy stream.
#[derive(Debug)]
pub struct Device {
    pub ctx_refs: u32,
    pub legacy_stream: u64,
}

/// Everything the fake driver and library know.
#[derive(Default)]
pub struct State {
    pub initialized: bool,
    pub devices: Vec<Device>,
    /// Live allocations by base address.
    pub allocs: BTreeMap<u64, Alloc>,
    pub next_alloc_id: u64,
    pub streams: HashMap<u64, Stream>,
    pub events: HashMap<u64, Event>,
    pub graphs: HashMap<u64, Vec<Item>>,
    pub execs: HashMap<u64, Vec<Item>>,
    pub comms: HashMap<u64, Comm>,
    pub communicators: HashMap<u64, Communicator>,
    /// Registrations and windows: handle id -> (owning comm, is a window).
    pub registrations: HashMap<u64, (u64, bool)>,
    /// Registration handle id -> base of the allocation it covers (live while the handle is
    /// in `registrations`).
    pub registered_allocs: HashMap<u64, u64>,
    /// `ncclCommSplit` calls waiting for the rest of their parent's ranks, by (parent
    /// communicator, split number).
    pub splits: HashMap<(u64, u64), Vec<crate::split::Entry>>,
    /// The last [`crate::engine::progress`] left ops waiting on other processes.
    pub xp_waiting: bool,
    /// What other processes sent, by communicator ([`crate::xproc::Rdv::tag`]).
    pub mail: HashMap<u64, crate::xproc::Mailbox>,
    next_id: u64,
}

impl State {
    /// A fresh object id (shared by every kind, so handles never repeat).
    pub fn fresh_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Creates the devices on first use (the count comes from the environment).
    pub fn ensure_devices(&mut self) {
        if !self.devices.is_empty() {
            return;
        }
        for dev in 0..crate::config::device_count() {
            let id = self.fresh_id();
            self.streams.insert(id, Stream::new(id, dev, 0, true));
            self.devices.push(Device {
                ctx_refs: 0,
                legacy_stream: id,
            });
        }
    }
}

/// The locked state (a panic while it was held does not make it unusable).
pub fn state() -> MutexGuard<'static, State> {
    static STATE: OnceLock<Mutex<State>> = OnceLock::new();
    let m = STATE.get_or_init(|| {
        let mut s = State::default();
        s.ensure_devices();
        Mutex::new(s)
    });
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Signalled when a message from another process changed the state, or a communicator left.
static CHANGED: Condvar = Condvar::new();

/// Releases the state until [`wake`] or `limit` passes (a blocked wait, not a poll, for work
/// done by another process), and takes it again.
pub fn wait(st: MutexGuard<'static, State>, limit: Duration) -> MutexGuard<'static, State> {
    CHANGED
        .wait_timeout(st, limit)
        .unwrap_or_else(|e| e.into_inner())
        .0
}

/// Wakes every thread in [`wait`].
pub fn wake() {
    CHANGED.notify_all();
}

/// Runs a CUDA entry point body: `Err(code)` and panics become the returned code.
pub fn cu_guard(f: impl FnOnce() -> Result<(), CuResult>) -> CuResult {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => CUDA_SUCCESS,
        Ok(Err(code)) => code,
        Err(_) => CUDA_ERROR_UNKNOWN,
    }
}

/// An NCCL failure: the code and the text `ncclGetLastError` returns.
#[derive(Debug, Clone)]
pub struct NcclError {
    pub code: NcclResult,
    pub message: String,
}

/// `Err(NcclError)` with code and message.
pub fn nccl_err<T>(code: NcclResult, message: impl Into<String>) -> Result<T, NcclError> {
    Err(NcclError {
        code,
        message: message.into(),
    })
}

/// Runs an NCCL entry point body; a failure's message becomes the thread's last error.
pub fn nccl_guard(f: impl FnOnce() -> Result<(), NcclError>) -> NcclResult {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => NCCL_SUCCESS,
        Ok(Err(e)) => {
            crate::nccl_api::set_last_error(&e.message);
            e.code
        }
        Err(_) => {
            crate::nccl_api::set_last_error("fake-nccl: internal panic");
            NCCL_INTERNAL_ERROR
        }
    }
}

/// Writes `value` through an out-pointer, or `Err(err)` when it is NULL.
///
/// # Safety
/// `p` is NULL or valid for a write of `T`.
pub unsafe fn put<T, E>(p: *mut T, value: T, err: E) -> Result<(), E> {
    if p.is_null() {
        return Err(err);
    }
    p.write_unaligned(value);
    Ok(())
}
