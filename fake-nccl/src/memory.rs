//! Device memory on the host: `cuMemAlloc` hands out 256-byte aligned heap blocks whose
//! addresses serve as `CUdeviceptr`s, recorded in a registry (id, device, base, length) that
//! every copy and every NCCL buffer argument is checked against. `cuMemHostAlloc` memory is
//! registered too (kind [`AllocKind::Host`]) and is its own device address.
//!
//! `FAKE_CUDA_MEM_BUSY_MIB=a,b,...` says how many MiB of device 0, 1, ... other processes
//! hold: `cuMemGetInfo` counts them as used and allocations cannot have them. Freeing memory
//! that is still registered with a live communicator is refused ([`State::registered_users`]).

use std::alloc::Layout;
use std::ffi::c_void;
use std::sync::OnceLock;

use crate::cuda_api::{current_device, require_init};
use crate::state::*;

/// Which allocator made a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocKind {
    /// `cuMemAlloc` / `ncclMemAlloc`: device memory of one device; has a trace id.
    Device,
    /// `cuMemHostAlloc`: pinned host memory, addressable from every device.
    Host,
}

/// One live allocation.
#[derive(Debug)]
pub struct Alloc {
    /// Allocation number in allocation order (device allocations only count).
    pub id: u64,
    pub kind: AllocKind,
    pub device: usize,
    pub base: u64,
    pub len: usize,
}

const ALIGN: usize = 256;

impl State {
    /// The allocation containing byte `addr`.
    pub fn alloc_at(&self, addr: u64) -> Option<&Alloc> {
        let (_, a) = self.allocs.range(..=addr).next_back()?;
        (addr < a.base + a.len as u64).then_some(a)
    }

    /// The allocation holding all of `[addr, addr + len)` (`len` may be 0).
    pub fn alloc_holding(&self, addr: u64, len: usize) -> Option<&Alloc> {
        let a = self.alloc_at(addr)?;
        (addr.checked_add(len as u64)? <= a.base + a.len as u64).then_some(a)
    }

    /// Bytes of device memory in use on `device`: this process's allocations and what other
    /// processes hold (`FAKE_CUDA_MEM_BUSY_MIB`).
    pub fn allocated_on(&self, device: usize) -> usize {
        let on = |a: &&Alloc| a.kind == AllocKind::Device && a.device == device;
        let mine: usize = self.allocs.values().filter(on).map(|a| a.len).sum();
        mine + busy(device)
    }

    /// Live registrations (`ncclCommRegister` handles and windows) of the allocation at `base`.
    pub fn registered_users(&self, base: u64) -> usize {
        let live = |(h, b): (&u64, &u64)| *b == base && self.registrations.contains_key(h);
        self.registered_allocs.iter().filter(|&e| live(e)).count()
    }

    /// Allocates `bytes` on `device` (or pinned host memory), returning the base address.
    pub fn allocate(
        &mut self,
        kind: AllocKind,
        device: usize,
        bytes: usize,
    ) -> Result<u64, CuResult> {
        if bytes == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if kind == AllocKind::Device
            && self.allocated_on(device).saturating_add(bytes) > crate::config::device_memory()
        {
            return Err(CUDA_ERROR_OUT_OF_MEMORY);
        }
        let layout = Layout::from_size_align(bytes, ALIGN).map_err(|_| CUDA_ERROR_OUT_OF_MEMORY)?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        if p.is_null() {
            return Err(CUDA_ERROR_OUT_OF_MEMORY);
        }
        let id = match kind {
            AllocKind::Device => {
                self.next_alloc_id += 1;
                self.next_alloc_id - 1
            }
            AllocKind::Host => u64::MAX,
        };
        let base = p as usize as u64;
        let alloc = Alloc {
            id,
            kind,
            device,
            base,
            len: bytes,
        };
        self.allocs.insert(base, alloc);
        Ok(base)
    }

    /// Frees the allocation starting exactly at `base` if it is of `kind`.
    pub fn free(&mut self, kind: AllocKind, base: u64) -> Result<(), CuResult> {
        match self.allocs.get(&base) {
            Some(a) if a.kind == kind => {}
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        }
        let a = self.allocs.remove(&base).expect("checked above");
        let layout = Layout::from_size_align(a.len, ALIGN).expect("made by allocate");
        // SAFETY: allocated by `allocate` with this layout, removed from the registry once.
        unsafe { std::alloc::dealloc(base as usize as *mut u8, layout) };
        Ok(())
    }

    /// Frees every device allocation of `device` (its primary context was destroyed).
    pub fn free_device_memory(&mut self, device: usize) {
        let bases: Vec<u64> = (self.allocs.values())
            .filter(|a| a.kind == AllocKind::Device && a.device == device)
            .map(|a| a.base)
            .collect();
        for base in bases {
            let _ = self.free(AllocKind::Device, base);
        }
    }

    /// How a pointer is written in trace lines: `a<id>+<offset>`, `host` or `null`.
    pub fn describe_ptr(&self, p: u64) -> String {
        match self.alloc_at(p) {
            _ if p == 0 => "null".to_owned(),
            Some(a) if a.kind == AllocKind::Device => format!("a{}+{}", a.id, p - a.base),
            _ => "host".to_owned(),
        }
    }
}

/// MiB of `device` held by other processes (`FAKE_CUDA_MEM_BUSY_MIB`, comma-separated).
fn busy(device: usize) -> usize {
    static V: OnceLock<Vec<usize>> = OnceLock::new();
    let mib = V.get_or_init(|| {
        let text = std::env::var("FAKE_CUDA_MEM_BUSY_MIB").unwrap_or_default();
        (text.split(','))
            .map(|v| v.trim().parse().unwrap_or(0))
            .collect()
    });
    mib.get(device).copied().unwrap_or(0) << 20
}

/// `cuMemAlloc_v2(CUdeviceptr*, size_t)`.
#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut u64, bytes: usize) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let dev = current_device(&st)?;
        if dptr.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let base = st.allocate(AllocKind::Device, dev, bytes)?;
        put(dptr, base, CUDA_ERROR_INVALID_VALUE)
    })
}

/// `cuMemFree_v2(CUdeviceptr)`: refused (CUDA_ERROR_INVALID_VALUE) while the memory is still
/// registered with a communicator, which would later deregister freed memory.
#[no_mangle]
pub unsafe extern "C" fn cuMemFree_v2(dptr: u64) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        current_device(&st)?;
        if st.registered_users(dptr) > 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        st.free(AllocKind::Device, dptr)
    })
}

/// `cuMemHostAlloc(void**, size_t, unsigned)`.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostAlloc(
    pp: *mut *mut c_void,
    bytes: usize,
    _flags: u32,
) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let dev = current_device(&st)?;
        if pp.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let base = st.allocate(AllocKind::Host, dev, bytes)?;
        put(pp, base as usize as *mut c_void, CUDA_ERROR_INVALID_VALUE)
    })
}

/// `cuMemHostGetDevicePointer_v2(CUdeviceptr*, void*, unsigned)`: the same address.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostGetDevicePointer_v2(
    pdptr: *mut u64,
    p: *mut c_void,
    flags: u32,
) -> CuResult {
    cu_guard(|| {
        let st = require_init()?;
        current_device(&st)?;
        let addr = p as usize as u64;
        match st.alloc_at(addr) {
            Some(a) if a.kind == AllocKind::Host && flags == 0 => {
                put(pdptr, addr, CUDA_ERROR_INVALID_VALUE)
            }
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    })
}

/// `cuMemFreeHost(void*)`.
#[no_mangle]
pub unsafe extern "C" fn cuMemFreeHost(p: *mut c_void) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        current_device(&st)?;
        st.free(AllocKind::Host, p as usize as u64)
    })
}

/// `cuMemGetInfo_v2(size_t* free, size_t* total)` of the current device.
#[no_mangle]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CuResult {
    cu_guard(|| {
        let st = require_init()?;
        let dev = current_device(&st)?;
        let all = crate::config::device_memory();
        if free.is_null() || total.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(
            free,
            all.saturating_sub(st.allocated_on(dev)),
            CUDA_ERROR_INVALID_VALUE,
        )?;
        put(total, all, CUDA_ERROR_INVALID_VALUE)
    })
}
