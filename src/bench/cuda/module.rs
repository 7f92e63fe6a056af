//! Kernels from PTX: a [`Module`] is PTX text JIT-compiled by the driver into one context
//! (`cuModuleLoadData`; on failure `cuModuleLoadDataEx` once more to read the JIT's error log),
//! a [`Function`] one of its kernels, launched with `cuLaunchKernel` on a [`Stream`].

use std::ffi::{c_int, c_void, CString};

use super::api::{
    CUfunction, CUmodule, ModuleApi, CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
};
use super::{Context, CudaError, Stream};

/// A loaded module, unloaded on drop (its context current first).
#[derive(Debug)]
pub struct Module {
    context: Context,
    api: ModuleApi,
    raw: CUmodule,
}

// SAFETY: a CUmodule is a driver handle usable from any thread with its context current,
// which every method makes it.
unsafe impl Send for Module {}

/// A kernel of a [`Module`] (valid while the module is loaded).
#[derive(Debug, Clone, Copy)]
pub struct Function {
    raw: CUfunction,
}

// SAFETY: as for `Module`.
unsafe impl Send for Function {}

/// The module entry points of `context`'s driver, or why there are none.
pub fn module_api(context: &Context) -> Result<ModuleApi, String> {
    context
        .driver()
        .api()
        .module
        .map_err(|missing| format!("the CUDA driver has no {missing}"))
}

impl Module {
    /// JIT-compiles `ptx` into `context`. The error names the driver's code and, where the JIT
    /// wrote one, the first lines of its log.
    pub fn load(context: &Context, ptx: &str) -> Result<Module, String> {
        let api = module_api(context)?;
        let image = CString::new(ptx).map_err(|_| "the PTX holds a NUL byte".to_string())?;
        context.set_current().map_err(|e| e.to_string())?;
        let mut raw: CUmodule = std::ptr::null_mut();
        // SAFETY: a NUL-terminated PTX image and a valid out-pointer, context current.
        let code = unsafe { (api.load_data)(&mut raw, image.as_ptr().cast()) };
        if let Err(e) = context.driver().check("cuModuleLoadData", code) {
            return Err(match jit_log(&api, &image) {
                Some(log) => format!("{e}; JIT log: {log}"),
                None => e.to_string(),
            });
        }
        Ok(Module {
            context: context.clone(),
            api,
            raw,
        })
    }

    /// The kernel called `name`.
    pub fn function(&self, name: &str) -> Result<Function, CudaError> {
        let c = CString::new(name).expect("kernel names hold no NUL");
        self.context.set_current()?;
        let mut raw: CUfunction = std::ptr::null_mut();
        // SAFETY: a loaded module, a NUL-terminated name and a valid out-pointer.
        let code = unsafe { (self.api.get_function)(&mut raw, self.raw, c.as_ptr()) };
        self.context.driver().check("cuModuleGetFunction", code)?;
        Ok(Function { raw })
    }

    /// Launches `f` on `stream` with `blocks` x `threads` (one-dimensional) and the kernel's
    /// parameters: `params[i]` points to the value of parameter `i`, laid out as the kernel
    /// declares it.
    ///
    /// # Safety
    /// `params` must match the kernel's parameter list, and every device pointer among the
    /// values must cover what the kernel accesses.
    pub unsafe fn launch(
        &self,
        f: Function,
        stream: &Stream,
        blocks: u32,
        threads: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), CudaError> {
        self.context.set_current()?;
        let code = (self.api.launch_kernel)(
            f.raw,
            blocks,
            1,
            1,
            threads,
            1,
            1,
            0,
            stream.raw(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        );
        self.context.driver().check("cuLaunchKernel", code)
    }

    /// `cuMemsetD8Async` of `len` bytes at `ptr` on `stream`.
    pub fn memset_async(&self, ptr: u64, len: usize, stream: &Stream) -> Result<(), CudaError> {
        self.context.set_current()?;
        // SAFETY: the caller's device range; ordered on its stream.
        let code = unsafe { (self.api.memset_d8_async)(ptr, 0, len, stream.raw()) };
        self.context.driver().check("cuMemsetD8Async", code)
    }

    /// Copies `out.len()` bytes at device `ptr` into `out` after everything queued on `stream`
    /// (the stream is synchronized before returning).
    pub fn read(&self, ptr: u64, out: &mut [u8], stream: &Stream) -> Result<(), CudaError> {
        self.context.set_current()?;
        // SAFETY: `out` is writable for its length and outlives the copy, which the synchronize
        // below completes.
        let code = unsafe {
            (self.api.memcpy_dtoh_async)(out.as_mut_ptr().cast(), ptr, out.len(), stream.raw())
        };
        self.context.driver().check("cuMemcpyDtoHAsync_v2", code)?;
        stream.synchronize()
    }
}

/// The JIT's error log for `image`, from a second load with a log buffer.
fn jit_log(api: &ModuleApi, image: &CString) -> Option<String> {
    let mut log = vec![0u8; 8192];
    let mut options: [c_int; 2] = [CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), log.len() as *mut c_void];
    let mut raw: CUmodule = std::ptr::null_mut();
    // SAFETY: two options with their values (a buffer and its size, passed by value as the
    // driver API specifies), and a valid out-pointer.
    let code = unsafe {
        (api.load_data_ex)(
            &mut raw,
            image.as_ptr().cast(),
            2,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if code == 0 {
        // SAFETY: it loaded this time after all; do not leak it.
        unsafe { (api.unload)(raw) };
        return None;
    }
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    let text = String::from_utf8_lossy(&log[..end]);
    let text: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(4)
        .collect();
    (!text.is_empty()).then(|| text.join(" | "))
}

impl Drop for Module {
    fn drop(&mut self) {
        if self.context.set_current().is_ok() {
            // SAFETY: a module this wrapper loaded and nothing else unloads.
            unsafe { (self.api.unload)(self.raw) };
        }
    }
}
