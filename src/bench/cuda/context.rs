//! A device's primary context ([`Context`]) and the streams that run work in it ([`Stream`]).
//!
//! Every wrapper makes its context current on the calling thread before it calls the driver,
//! so objects may be used (and dropped) from any thread; `cuCtxSetCurrent` only sets a
//! thread-local pointer. Objects hold a clone of their [`Context`], so the primary context is
//! released only after the last buffer, stream, event or graph made in it is gone.

use std::sync::Arc;

use super::api::{CUcontext, CUstream, CUDA_ERROR_NOT_READY, CU_STREAM_NON_BLOCKING};
use super::{CudaError, Device, Driver};

/// A retained primary context of one device; cloning shares it, the last drop releases it.
#[derive(Clone, Debug)]
pub struct Context {
    inner: Arc<Retained>,
}

#[derive(Debug)]
struct Retained {
    device: Device,
    raw: CUcontext,
}

// SAFETY: a CUcontext may be made current on, and used from, any thread; the driver
// synchronises access to it internally.
unsafe impl Send for Retained {}
// SAFETY: as above; `Retained` has no interior mutability of its own.
unsafe impl Sync for Retained {}

impl Context {
    /// Retains `device`'s primary context (the one the runtime API and NCCL use too) and makes
    /// it current on this thread.
    pub fn primary(device: &Device) -> Result<Self, CudaError> {
        let driver = device.driver();
        let mut raw: CUcontext = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and a device handle from cuDeviceGet.
        let code = unsafe { (driver.api().primary_ctx_retain)(&mut raw, device.raw()) };
        driver.check("cuDevicePrimaryCtxRetain", code)?;
        let context = Self {
            inner: Arc::new(Retained {
                device: *device,
                raw,
            }),
        };
        context.set_current()?;
        Ok(context)
    }

    /// Makes this context current on the calling thread.
    pub fn set_current(&self) -> Result<(), CudaError> {
        // SAFETY: a context retained by `self`, so still alive.
        let code = unsafe { (self.driver().api().ctx_set_current)(self.inner.raw) };
        self.driver().check("cuCtxSetCurrent", code)
    }

    /// The device it belongs to.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// The driver it was made with.
    pub fn driver(&self) -> &Driver {
        self.inner.device.driver()
    }

    /// The `CUcontext` handle.
    pub fn raw(&self) -> CUcontext {
        self.inner.raw
    }

    /// `(free, total)` device memory in bytes, as `cuMemGetInfo` reports it for this context.
    pub fn mem_info(&self) -> Result<(usize, usize), CudaError> {
        self.set_current()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers, with this context current.
        let code = unsafe { (self.driver().api().mem_get_info)(&mut free, &mut total) };
        self.driver().check("cuMemGetInfo_v2", code)?;
        Ok((free, total))
    }
}

impl Drop for Retained {
    fn drop(&mut self) {
        let driver = self.device.driver();
        // SAFETY: releases the one retain `Context::primary` took. A failure cannot be
        // reported from drop; the context then stays alive until the process exits.
        let _ = unsafe { (driver.api().primary_ctx_release)(self.device.raw()) };
    }
}

/// A stream of one context: a created one, or the legacy default (NULL) stream (`-y 1`).
#[derive(Debug)]
pub struct Stream {
    context: Context,
    raw: CUstream,
    owned: bool,
}

// SAFETY: a CUstream may be used from any thread; the driver synchronises it.
unsafe impl Send for Stream {}
// SAFETY: as above; `Stream` has no interior mutability of its own.
unsafe impl Sync for Stream {}

impl Stream {
    /// Creates a stream in `context`; `non_blocking` (what nccl-tests uses by default) keeps
    /// it from synchronising implicitly with the legacy default stream.
    pub fn new(context: &Context, non_blocking: bool) -> Result<Self, CudaError> {
        context.set_current()?;
        let flags = if non_blocking {
            CU_STREAM_NON_BLOCKING
        } else {
            0
        };
        let mut raw: CUstream = std::ptr::null_mut();
        // SAFETY: a valid out-pointer, with the context current.
        let code = unsafe { (context.driver().api().stream_create)(&mut raw, flags) };
        context.driver().check("cuStreamCreate", code)?;
        Ok(Self {
            context: context.clone(),
            raw,
            owned: true,
        })
    }

    /// The legacy default stream of `context` (NULL; never destroyed).
    pub fn legacy(context: &Context) -> Self {
        Self {
            context: context.clone(),
            raw: std::ptr::null_mut(),
            owned: false,
        }
    }

    /// The `CUstream` handle, for NCCL calls (NULL for the legacy stream).
    pub fn raw(&self) -> CUstream {
        self.raw
    }

    /// The context it runs in.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Whether all work queued so far has finished (`cuStreamQuery`), without blocking.
    pub fn is_complete(&self) -> Result<bool, CudaError> {
        self.context.set_current()?;
        // SAFETY: a live stream of the current context.
        let code = unsafe { (self.context.driver().api().stream_query)(self.raw) };
        if code == CUDA_ERROR_NOT_READY {
            return Ok(false);
        }
        self.context.driver().check("cuStreamQuery", code)?;
        Ok(true)
    }

    /// Blocks until all work queued so far has finished.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.context.set_current()?;
        // SAFETY: a live stream of the current context.
        let code = unsafe { (self.context.driver().api().stream_synchronize)(self.raw) };
        self.context.driver().check("cuStreamSynchronize", code)
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.owned && self.context.set_current().is_ok() {
            // SAFETY: a stream this value created and nobody else destroys; pending work
            // still completes. A failure cannot be reported from drop.
            let _ = unsafe { (self.context.driver().api().stream_destroy)(self.raw) };
        }
    }
}
