//! Device buffers of the NCCL backend: allocated with `ncclMemAlloc` where the library has it
//! (as nccl-tests does, so registration and NVLS behave the same) or `cuMemAlloc`, copied to
//! and from the host for verification, and registered with the communicator for `-R 1`
//! (`ncclCommRegister`) or `-R 2` (`ncclCommWindowRegister`, symmetric windows).

use std::collections::BTreeMap;
use std::ffi::c_void;

use crate::bench::cuda::api::CUdeviceptr;
use crate::bench::cuda::{Context, CudaError, DeviceBuffer, Stream};
use nccl_sys::Nccl;

use super::error::{cuda_err, nccl_err};
use crate::core::error::Error;
use crate::core::units::decimal_bytes;

/// One device allocation, freed on drop by whichever allocator made it.
#[derive(Debug)]
pub(super) enum DevMem {
    /// `cuMemAlloc`.
    Cuda(DeviceBuffer),
    /// `ncclMemAlloc`.
    Nccl {
        context: Context,
        ptr: CUdeviceptr,
        len: usize,
        free: nccl_sys::bindings::PFN_ncclMemFree,
    },
}

impl DevMem {
    /// Allocates `len` bytes (at least 1, so every rank has a valid address) on `context`.
    pub(super) fn alloc(nccl: &Nccl, context: &Context, len: usize) -> Result<Self, Error> {
        let len = len.max(1);
        // ncclMemAlloc came with NCCL 2.19; a library that reports an older version while
        // exporting the name (a patched build, a test double) refuses it, so go by the version.
        let allocator = (nccl.version() >= nccl_sys::version::version_code(2, 19, 0))
            .then(|| nccl.mem_alloc().zip(nccl.mem_free()))
            .flatten();
        if let Some((alloc, free)) = allocator {
            context.set_current().map_err(cuda_err)?;
            let mut ptr: *mut c_void = std::ptr::null_mut();
            // SAFETY: a valid out-pointer with the device's context current.
            let code = unsafe { alloc(&mut ptr, len) };
            nccl.check("ncclMemAlloc", code).map_err(nccl_err)?;
            return Ok(Self::Nccl {
                context: context.clone(),
                ptr: ptr as CUdeviceptr,
                len,
                free,
            });
        }
        DeviceBuffer::alloc(context, len)
            .map(Self::Cuda)
            .map_err(cuda_err)
    }

    /// The device address.
    pub(super) fn ptr(&self) -> CUdeviceptr {
        match self {
            Self::Cuda(b) => b.as_ptr(),
            Self::Nccl { ptr, .. } => *ptr,
        }
    }

    /// The length in bytes.
    pub(super) fn len(&self) -> usize {
        match self {
            Self::Cuda(b) => b.len(),
            Self::Nccl { len, .. } => *len,
        }
    }

    fn context(&self) -> &Context {
        match self {
            Self::Cuda(b) => b.context(),
            Self::Nccl { context, .. } => context,
        }
    }

    fn bounds(&self, call: &'static str, offset: usize, len: usize) -> Result<(), Error> {
        if offset.checked_add(len).is_some_and(|end| end <= self.len()) {
            return Ok(());
        }
        Err(cuda_err(CudaError::InvalidArgument {
            call,
            detail: format!(
                "{len} bytes at offset {offset} overflow a {}-byte buffer",
                self.len()
            ),
        }))
    }

    /// Copies `data` to `offset` on `stream` (the rank's) and waits until it has landed.
    ///
    /// Not `cuMemcpyHtoD`: from pageable memory it may return before the bytes reach the
    /// device, and it runs on the legacy stream, which the rank's non-blocking stream does not
    /// wait for, so the next collective could read the old contents. Waiting here also keeps
    /// the copy out of any timed section that follows.
    pub(super) fn write(&self, stream: &Stream, offset: usize, data: &[u8]) -> Result<(), Error> {
        self.bounds("cuMemcpyHtoDAsync_v2", offset, data.len())?;
        if data.is_empty() {
            return Ok(());
        }
        let ctx = self.context();
        ctx.set_current().map_err(cuda_err)?;
        let api = ctx.driver().api();
        let dst = self.ptr() + offset as u64;
        // SAFETY: the range was checked against the allocation; the source is a live slice
        // (pageable bytes are staged by the call, and the stream is synchronized below).
        let code =
            unsafe { (api.memcpy_htod_async)(dst, data.as_ptr().cast(), data.len(), stream.raw()) };
        ctx.driver()
            .check("cuMemcpyHtoDAsync_v2", code)
            .map_err(cuda_err)?;
        stream.synchronize().map_err(cuda_err)
    }

    /// Copies `out.len()` bytes from `offset` into `out`, after the work queued on `stream`
    /// (the rank's): `cuMemcpyDtoH` orders itself after the legacy stream only.
    pub(super) fn read(&self, stream: &Stream, offset: usize, out: &mut [u8]) -> Result<(), Error> {
        self.bounds("cuMemcpyDtoH_v2", offset, out.len())?;
        if out.is_empty() {
            return Ok(());
        }
        stream.synchronize().map_err(cuda_err)?;
        let ctx = self.context();
        ctx.set_current().map_err(cuda_err)?;
        let api = ctx.driver().api();
        // SAFETY: as in `write`, into a live mutable slice.
        let code = unsafe {
            (api.memcpy_dtoh)(
                out.as_mut_ptr().cast(),
                self.ptr() + offset as u64,
                out.len(),
            )
        };
        ctx.driver()
            .check("cuMemcpyDtoH_v2", code)
            .map_err(cuda_err)
    }
}

impl Drop for DevMem {
    fn drop(&mut self) {
        if let Self::Nccl {
            context, ptr, free, ..
        } = self
        {
            if context.set_current().is_ok() {
                // SAFETY: the pointer came from ncclMemAlloc and is freed once.
                let _ = unsafe { free(*ptr as *mut c_void) };
            }
        }
    }
}

/// A buffer registration, undone before the buffer is freed.
#[derive(Debug)]
pub(super) enum Registration {
    /// `ncclCommRegister` handle.
    Local(*mut c_void),
    /// `ncclCommWindowRegister` window.
    Window(nccl_sys::bindings::ncclWindow_t),
}

/// Free device memory in bytes per device ordinal at the phases of a run, for `-M 1`.
#[derive(Debug, Default, Clone)]
pub(super) struct MemoryUse {
    /// Before communicators were made.
    pub before_init: BTreeMap<usize, u64>,
    /// After communicator initialisation.
    pub after_init: BTreeMap<usize, u64>,
    /// After the benchmark's buffers were allocated (and registered).
    pub after_alloc: BTreeMap<usize, u64>,
}

/// `cuMemGetInfo`'s free bytes of each device (each once, however many ranks share it).
pub(super) fn free_by_device<'a>(
    contexts: impl IntoIterator<Item = (&'a usize, &'a Context)>,
) -> Result<BTreeMap<usize, u64>, Error> {
    let mut free = BTreeMap::new();
    for (&device, context) in contexts {
        if let std::collections::btree_map::Entry::Vacant(slot) = free.entry(device) {
            slot.insert(context.mem_info().map_err(cuda_err)?.0 as u64);
        }
    }
    Ok(free)
}

/// The largest drop of free memory of any one device from `from` to `to`.
fn largest_drop(from: &BTreeMap<usize, u64>, to: &BTreeMap<usize, u64>) -> u64 {
    let drop = |(d, f): (&usize, &u64)| to.get(d).map_or(0, |t| f.saturating_sub(*t));
    from.iter().map(drop).max().unwrap_or(0)
}

/// nccl-tests' `-M 1` footer value: `Initialization 1.23 GB | User-Allocated 384 MB |
/// Collective 0 B | Total 1.61 GB`. Each phase is the largest change of one device's free
/// memory over that phase (the run's phase ends with `at_end`), and the total their sum, as
/// nccl-tests computes them; a device with more ranks or less free memory is not hidden by
/// another's.
pub(super) fn memory_line(m: &MemoryUse, at_end: &BTreeMap<usize, u64>) -> String {
    let init = largest_drop(&m.before_init, &m.after_init);
    let user = largest_drop(&m.after_init, &m.after_alloc);
    let coll = largest_drop(&m.after_alloc, at_end);
    format!(
        "Initialization {} | User-Allocated {} | Collective {} | Total {}",
        decimal_bytes(init),
        decimal_bytes(user),
        decimal_bytes(coll),
        decimal_bytes(init + user + coll)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free(v: &[u64]) -> BTreeMap<usize, u64> {
        v.iter().copied().enumerate().collect()
    }

    #[test]
    fn memory_line_splits_the_phases() {
        let m = MemoryUse {
            before_init: free(&[10_000_000_000]),
            after_init: free(&[8_770_000_000]),
            after_alloc: free(&[8_386_000_000]),
        };
        assert_eq!(
            memory_line(&m, &free(&[8_386_000_000])),
            "Initialization 1.23 GB | User-Allocated 384 MB | Collective 0 B | Total 1.61 GB"
        );
        assert_eq!(decimal_bytes(999), "999 B");
        assert_eq!(decimal_bytes(4_096), "4 KB");
    }

    #[test]
    fn each_phase_is_the_largest_change_of_one_device() {
        // Device 1 starts with far less free memory (another process) and takes less per
        // phase; device 0 has two ranks. Each phase is the larger device change, not the
        // change of the larger usage.
        let m = MemoryUse {
            before_init: free(&[16_000_000_000, 4_000_000_000]),
            after_init: free(&[15_000_000_000, 3_500_000_000]),
            after_alloc: free(&[13_000_000_000, 2_500_000_000]),
        };
        let end = free(&[12_700_000_000, 2_400_000_000]);
        assert_eq!(
            memory_line(&m, &end),
            "Initialization 1.00 GB | User-Allocated 2.00 GB | Collective 300 MB | Total 3.30 GB"
        );
    }
}
