//! Device buffers of the NCCL backend: allocated with `ncclMemAlloc` where the library has it
//! (as nccl-tests does, so registration and NVLS behave the same) or `cuMemAlloc`, copied to
//! and from the host for verification, and registered with the communicator for `-R 1`
//! (`ncclCommRegister`) or `-R 2` (`ncclCommWindowRegister`, symmetric windows).

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
        if let (Some(alloc), Some(free)) = (nccl.mem_alloc(), nccl.mem_free()) {
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

/// How much device memory one phase of a run took, for `-M 1`.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct MemoryUse {
    /// Used bytes before communicators were made (per device, the largest).
    pub before_init: u64,
    /// After communicator initialisation.
    pub after_init: u64,
    /// After the benchmark's buffers were allocated.
    pub after_alloc: u64,
}

/// nccl-tests' `-M 1` footer value: `Initialization 1.23 GB | User-Allocated 384 MB |
/// Collective 0 B | Total 1.61 GB`, from used bytes at each phase and at the end.
pub(super) fn memory_line(m: &MemoryUse, at_end: u64) -> String {
    let init = m.after_init.saturating_sub(m.before_init);
    let user = m.after_alloc.saturating_sub(m.after_init);
    let coll = at_end.saturating_sub(m.after_alloc);
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

    #[test]
    fn memory_line_splits_the_phases() {
        let m = MemoryUse {
            before_init: 500_000_000,
            after_init: 1_730_000_000,
            after_alloc: 2_114_000_000,
        };
        assert_eq!(
            memory_line(&m, 2_114_000_000),
            "Initialization 1.23 GB | User-Allocated 384 MB | Collective 0 B | Total 1.61 GB"
        );
        assert_eq!(decimal_bytes(999), "999 B");
        assert_eq!(decimal_bytes(4_096), "4 KB");
    }
}
