//! Device memory ([`DeviceBuffer`]): allocation, host<->device copies and zeroing.
//!
//! The copies and the memset return after the data has moved: they run on the legacy default
//! stream and wait for it (a pageable `cuMemcpyHtoD` or a `cuMemsetD8` may return before the
//! device has the bytes). A non-blocking [`super::Stream`] does not wait for the legacy stream
//! and it for it: synchronise a stream that writes a buffer before copying it back.

use std::ffi::c_void;

use super::api::CUdeviceptr;
use super::{Context, CudaError, Stream};

/// A device allocation of a fixed length, freed on drop. A zero-length buffer allocates
/// nothing and has address 0.
#[derive(Debug)]
pub struct DeviceBuffer {
    context: Context,
    ptr: CUdeviceptr,
    len: usize,
}

impl DeviceBuffer {
    /// Allocates `len` bytes in `context` (contents undefined).
    pub fn alloc(context: &Context, len: usize) -> Result<Self, CudaError> {
        let mut ptr: CUdeviceptr = 0;
        if len > 0 {
            context.set_current()?;
            // SAFETY: a valid out-pointer, with the context current.
            let code = unsafe { (context.driver().api().mem_alloc)(&mut ptr, len) };
            context.driver().check("cuMemAlloc_v2", code)?;
        }
        Ok(Self {
            context: context.clone(),
            ptr,
            len,
        })
    }

    /// The device address, for NCCL calls and offsets (`as_ptr() + offset`).
    pub fn as_ptr(&self) -> CUdeviceptr {
        self.ptr
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is zero bytes long.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The context it lives in.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Copies `data` to the bytes starting at `offset`.
    pub fn copy_from_host(&self, offset: usize, data: &[u8]) -> Result<(), CudaError> {
        self.bounds("cuMemcpyHtoD_v2", offset, data.len())?;
        if data.is_empty() {
            return Ok(());
        }
        self.context.set_current()?;
        let api = self.context.driver().api();
        // SAFETY: the destination range lies inside this allocation (checked above) and the
        // source is a live slice of `data.len()` bytes.
        let code = unsafe {
            (api.memcpy_htod)(
                self.ptr + offset as u64,
                data.as_ptr().cast::<c_void>(),
                data.len(),
            )
        };
        self.context.driver().check("cuMemcpyHtoD_v2", code)?;
        // From pageable memory the copy may return before the bytes reach the device.
        Stream::legacy(&self.context).synchronize()
    }

    /// Copies the bytes starting at `offset` into all of `out`.
    pub fn copy_to_host(&self, offset: usize, out: &mut [u8]) -> Result<(), CudaError> {
        self.bounds("cuMemcpyDtoH_v2", offset, out.len())?;
        if out.is_empty() {
            return Ok(());
        }
        self.context.set_current()?;
        let api = self.context.driver().api();
        // SAFETY: the source range lies inside this allocation (checked above) and the
        // destination is a live, exclusively borrowed slice of `out.len()` bytes.
        let code = unsafe {
            (api.memcpy_dtoh)(
                out.as_mut_ptr().cast::<c_void>(),
                self.ptr + offset as u64,
                out.len(),
            )
        };
        self.context.driver().check("cuMemcpyDtoH_v2", code)
    }

    /// Sets every byte to zero and waits for it to finish.
    pub fn memset_zero(&self) -> Result<(), CudaError> {
        if self.len == 0 {
            return Ok(());
        }
        self.context.set_current()?;
        // SAFETY: the whole allocation, with its context current.
        let code = unsafe { (self.context.driver().api().memset_d8)(self.ptr, 0, self.len) };
        self.context.driver().check("cuMemsetD8_v2", code)?;
        // cuMemsetD8 may return before the device has written; make it complete here.
        Stream::legacy(&self.context).synchronize()
    }

    /// Refuses a range `[offset, offset + len)` that does not fit in the buffer.
    fn bounds(&self, call: &'static str, offset: usize, len: usize) -> Result<(), CudaError> {
        check_range(call, offset, len, self.len)
    }
}

/// Refuses a range `[offset, offset + len)` that does not fit in `size` bytes (overflow
/// included), before any driver call can write outside an allocation.
pub(crate) fn check_range(
    call: &'static str,
    offset: usize,
    len: usize,
    size: usize,
) -> Result<(), CudaError> {
    match offset.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(CudaError::InvalidArgument {
            call,
            detail: format!(
                "{len} bytes at offset {offset} do not fit in a {size}-byte device buffer"
            ),
        }),
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.ptr != 0 && self.context.set_current().is_ok() {
            // SAFETY: an allocation this value made and nobody else frees. A failure cannot
            // be reported from drop.
            let _ = unsafe { (self.context.driver().api().mem_free)(self.ptr) };
        }
    }
}

// SAFETY: a device address is usable from any thread once its context is current, which
// every method ensures.
unsafe impl Send for DeviceBuffer {}
// SAFETY: as above; `&self` methods only read the handle.
unsafe impl Sync for DeviceBuffer {}
