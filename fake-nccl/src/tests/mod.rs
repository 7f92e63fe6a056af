//! Unit tests calling the exported functions directly, as C would. Tests run in parallel in
//! one process: each uses its own contexts (thread-local), streams, buffers and comms, and
//! overrides version, hooks, trace and log per thread.

mod colls;
mod copies;
mod cuda;
mod hooks;
mod modules;
mod nccl;
mod p2p_devices;
mod registered_free;
mod split;
mod timed_loop;
mod xproc;

use std::ffi::{c_void, CStr};

use crate::copy::*;
use crate::cuda_api::*;
use crate::event::*;
use crate::group::{ncclGroupEnd, ncclGroupStart};
use crate::init::*;
use crate::memory::*;
use crate::nccl_api::*;
use crate::premulsum::*;
use crate::stream::*;

pub type Ptr = *mut c_void;

/// Initialises the driver and makes device `dev`'s primary context current.
pub fn ctx(dev: i32) -> Ptr {
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut c = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut c, dev), 0);
        assert_eq!(cuCtxSetCurrent(c), 0);
        c
    }
}

/// Device memory on the current device.
pub fn alloc(bytes: usize) -> u64 {
    let mut p = 0;
    assert_eq!(unsafe { cuMemAlloc_v2(&mut p, bytes) }, 0);
    p
}

/// Copies to the device and waits until the bytes landed (a pageable copy lands lazily on the
/// legacy stream, see crate::copy).
pub fn h2d(p: u64, data: &[u8]) {
    assert_eq!(
        unsafe { cuMemcpyHtoD_v2(p, data.as_ptr().cast(), data.len()) },
        0
    );
    sync(std::ptr::null_mut());
}

pub fn d2h(p: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    assert_eq!(unsafe { cuMemcpyDtoH_v2(v.as_mut_ptr().cast(), p, len) }, 0);
    v
}

pub fn stream() -> Ptr {
    let mut s = std::ptr::null_mut();
    assert_eq!(unsafe { cuStreamCreate(&mut s, 1) }, 0);
    s
}

pub fn sync(s: Ptr) {
    assert_eq!(unsafe { cuStreamSynchronize(s) }, 0);
}

/// A rank of a test communicator: its device, context, comm and stream.
pub struct Rank {
    pub ctx: Ptr,
    pub comm: Ptr,
    pub stream: Ptr,
}

impl Rank {
    /// Makes this rank's context current (for its allocations).
    pub fn on(&self) -> &Self {
        assert_eq!(unsafe { cuCtxSetCurrent(self.ctx) }, 0);
        self
    }
}

/// `n` ranks on devices 0..n, all owned by this thread.
pub fn ranks(n: usize) -> Vec<Rank> {
    let mut id = UniqueId { internal: [0; 128] };
    assert_eq!(unsafe { ncclGetUniqueId(&mut id) }, 0);
    (0..n)
        .map(|r| {
            let ctx = ctx(r as i32);
            let mut comm = std::ptr::null_mut();
            assert_eq!(
                ncclCommInitRank(&mut comm, n as i32, id, r as i32),
                0,
                "{}",
                last_error()
            );
            Rank {
                ctx,
                comm,
                stream: stream(),
            }
        })
        .collect()
}

/// Runs `f` for every rank inside one group.
pub fn grouped(ranks: &[Rank], mut f: impl FnMut(usize, &Rank) -> u32) {
    assert_eq!(ncclGroupStart(), 0);
    for (r, rank) in ranks.iter().enumerate() {
        assert_eq!(f(r, rank), 0, "rank {r}: {}", last_error());
    }
    assert_eq!(ncclGroupEnd(), 0, "{}", last_error());
}

pub fn sync_all(ranks: &[Rank]) {
    for r in ranks {
        r.on();
        sync(r.stream);
    }
}

pub fn destroy(ranks: Vec<Rank>) {
    for r in ranks {
        assert_eq!(ncclCommDestroy(r.comm), 0);
    }
}

pub fn last_error() -> String {
    unsafe { CStr::from_ptr(ncclGetLastError(std::ptr::null_mut())) }
        .to_string_lossy()
        .into_owned()
}

pub fn ptr(p: u64) -> Ptr {
    p as usize as Ptr
}

pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn as_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn as_i32(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
