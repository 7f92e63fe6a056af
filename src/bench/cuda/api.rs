//! The CUDA driver API as ncclbench declares it: C types, constants and the table of entry
//! points resolved from libcuda at run time.
//!
//! Nothing here comes from a CUDA header: each signature is the documented C one, written by
//! hand, so the crate builds on machines without a toolkit. Where the driver exports a `_v2`
//! symbol, that is the one resolved (the unsuffixed names are the old ABI that `cuda.h` maps
//! away from with `#define`s).

use std::ffi::{c_char, c_float, c_int, c_uint, c_ulonglong, c_void};

use libloading::Library;

use super::CudaError;

/// `CUresult`: 0 is success, anything else an error code.
pub type CUresult = c_int;
/// `CUdevice`: an ordinal-like handle.
pub type CUdevice = c_int;
/// `CUdeviceptr`: a device address.
pub type CUdeviceptr = u64;
/// `CUcontext`: an opaque context handle.
pub type CUcontext = *mut c_void;
/// `CUstream`: an opaque stream handle; NULL is the legacy default stream.
pub type CUstream = *mut c_void;
/// `CUevent`: an opaque event handle.
pub type CUevent = *mut c_void;
/// `CUgraph`: an opaque graph handle.
pub type CUgraph = *mut c_void;
/// `CUgraphExec`: an opaque executable-graph handle.
pub type CUgraphExec = *mut c_void;

/// `CUDA_SUCCESS`.
pub const CUDA_SUCCESS: CUresult = 0;
/// `CUDA_ERROR_NOT_READY`: what the query calls return while work is pending.
pub const CUDA_ERROR_NOT_READY: CUresult = 600;
/// `CUDA_ERROR_NO_DEVICE`: the driver works and sees no GPU (`cuInit` on a machine without one).
pub const CUDA_ERROR_NO_DEVICE: CUresult = 100;
/// `CU_DEVICE_ATTRIBUTE_PCI_BUS_ID`.
pub const CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: c_int = 33;
/// `CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID`.
pub const CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: c_int = 34;
/// `CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID`.
pub const CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: c_int = 50;
/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR`.
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR`.
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;
/// `CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1` (named without `_V1` before CUDA 11.7):
/// whether the v1 `cuStreamWaitValue32` works on the device.
pub const CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1: c_int = 92;
/// The first driver (CUDA 11.7) with `cuStreamWaitValue32_v2`, which needs no attribute.
pub const STREAM_MEM_OPS_V2_DRIVER: i32 = 11070;
/// `CU_STREAM_NON_BLOCKING`: no implicit synchronisation with the legacy default stream.
pub const CU_STREAM_NON_BLOCKING: c_uint = 1;
/// `CU_EVENT_DEFAULT`: a timing event.
pub const CU_EVENT_DEFAULT: c_uint = 0;
/// `CU_EVENT_DISABLE_TIMING`: an event for ordering only, cheaper to record.
pub const CU_EVENT_DISABLE_TIMING: c_uint = 2;
/// `CU_STREAM_CAPTURE_MODE_THREAD_LOCAL`: capture is disturbed only by this thread's calls.
pub const CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: c_int = 1;
/// `CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP`: pinned host memory every context
/// can address from the device.
pub const CU_MEMHOSTALLOC_PORTABLE_DEVICEMAP: c_uint = 0x01 | 0x02;
/// `CU_STREAM_WAIT_VALUE_GEQ`: wait until `(int32)(*addr - value) >= 0`.
pub const CU_STREAM_WAIT_VALUE_GEQ: c_uint = 0;
/// `CU_STREAM_WAIT_VALUE_EQ`: wait until `*addr == value`.
pub const CU_STREAM_WAIT_VALUE_EQ: c_uint = 1;

/// `cuGraphInstantiateWithFlags(CUgraphExec*, CUgraph, unsigned long long flags)` (CUDA 11.4+).
pub type GraphInstantiateWithFlagsFn =
    unsafe extern "C" fn(*mut CUgraphExec, CUgraph, c_ulonglong) -> CUresult;
/// `cuGraphInstantiate[_v2](CUgraphExec*, CUgraph, CUgraphNode* errNode, char* log, size_t)`.
pub type GraphInstantiateLegacyFn = unsafe extern "C" fn(
    *mut CUgraphExec,
    CUgraph,
    *mut *mut c_void,
    *mut c_char,
    usize,
) -> CUresult;
/// `cuStreamWaitValue32[_v2](CUstream, CUdeviceptr addr, cuuint32_t value, unsigned flags)`.
pub type StreamWaitValue32Fn = unsafe extern "C" fn(CUstream, CUdeviceptr, u32, c_uint) -> CUresult;

/// `CUmodule`.
pub type CUmodule = *mut c_void;
/// `CUfunction`.
pub type CUfunction = *mut c_void;
/// `CU_JIT_ERROR_LOG_BUFFER`.
pub const CU_JIT_ERROR_LOG_BUFFER: c_int = 5;
/// `CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES`.
pub const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;

/// `cuModuleLoadData`.
pub type ModuleLoadDataFn = unsafe extern "C" fn(*mut CUmodule, *const c_void) -> CUresult;
/// `cuModuleLoadDataEx`.
pub type ModuleLoadDataExFn = unsafe extern "C" fn(
    *mut CUmodule,
    *const c_void,
    c_uint,
    *mut c_int,
    *mut *mut c_void,
) -> CUresult;
/// `cuModuleGetFunction`.
pub type ModuleGetFunctionFn =
    unsafe extern "C" fn(*mut CUfunction, CUmodule, *const c_char) -> CUresult;
/// `cuModuleUnload`.
pub type ModuleUnloadFn = unsafe extern "C" fn(CUmodule) -> CUresult;
/// `cuLaunchKernel`.
pub type LaunchKernelFn = unsafe extern "C" fn(
    CUfunction,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    CUstream,
    *mut *mut c_void,
    *mut *mut c_void,
) -> CUresult;
/// `cuMemsetD8Async`.
pub type MemsetD8AsyncFn = unsafe extern "C" fn(CUdeviceptr, u8, usize, CUstream) -> CUresult;
/// `cuMemcpyDtoHAsync_v2`.
pub type MemcpyDtoHAsyncFn =
    unsafe extern "C" fn(*mut c_void, CUdeviceptr, usize, CUstream) -> CUresult;

/// The entry points that load and launch the verification kernels. Every driver since CUDA 4
/// has them; they are resolved together and optional only so that a library lacking one
/// falls back to host verification (with the reason) instead of refusing to run at all.
#[derive(Clone, Copy, Debug)]
pub struct ModuleApi {
    /// `cuModuleLoadData`
    pub load_data: ModuleLoadDataFn,
    /// `cuModuleLoadDataEx`
    pub load_data_ex: ModuleLoadDataExFn,
    /// `cuModuleGetFunction`
    pub get_function: ModuleGetFunctionFn,
    /// `cuModuleUnload`
    pub unload: ModuleUnloadFn,
    /// `cuLaunchKernel`
    pub launch_kernel: LaunchKernelFn,
    /// `cuMemsetD8Async`
    pub memset_d8_async: MemsetD8AsyncFn,
    /// `cuMemcpyDtoHAsync_v2`
    pub memcpy_dtoh_async: MemcpyDtoHAsyncFn,
}

impl ModuleApi {
    /// All of them, or the name of the first one `lib` lacks.
    fn resolve(lib: &Library) -> Result<ModuleApi, &'static str> {
        macro_rules! get {
            ($ty:ty, $name:literal) => {{
                let a = lookup(lib, $name).ok_or($name)?;
                // SAFETY: a non-NULL address of the driver's function of this name, whose
                // documented C signature is `$ty`.
                unsafe { std::mem::transmute::<*mut c_void, $ty>(a) }
            }};
        }
        Ok(ModuleApi {
            load_data: get!(ModuleLoadDataFn, "cuModuleLoadData"),
            load_data_ex: get!(ModuleLoadDataExFn, "cuModuleLoadDataEx"),
            get_function: get!(ModuleGetFunctionFn, "cuModuleGetFunction"),
            unload: get!(ModuleUnloadFn, "cuModuleUnload"),
            launch_kernel: get!(LaunchKernelFn, "cuLaunchKernel"),
            memset_d8_async: get!(MemsetD8AsyncFn, "cuMemsetD8Async"),
            memcpy_dtoh_async: get!(MemcpyDtoHAsyncFn, "cuMemcpyDtoHAsync_v2"),
        })
    }
}

/// How this driver instantiates graphs, chosen when it is loaded.
#[derive(Clone, Copy, Debug)]
pub enum GraphInstantiate {
    /// `cuGraphInstantiateWithFlags`, the entry point `cuda.h` maps `cuGraphInstantiate` to
    /// since CUDA 12.
    WithFlags(GraphInstantiateWithFlagsFn),
    /// `cuGraphInstantiate_v2` (CUDA 11) or `cuGraphInstantiate` (older), named by the string.
    Legacy(GraphInstantiateLegacyFn, &'static str),
}

/// The address of `name` in `lib`, or `None` when it is absent or NULL.
fn lookup(lib: &Library, name: &str) -> Option<*mut c_void> {
    // SAFETY: the symbol is read as a plain address; no type is assumed until transmuted.
    let symbol = unsafe { lib.get::<*mut c_void>(name.as_bytes()) }.ok()?;
    Some(*symbol).filter(|address| !address.is_null())
}

macro_rules! driver_api {
    ($($field:ident = $symbol:literal: fn($($arg:ty),*);)*) => {
        /// The required driver entry points, as raw C functions. Calls follow the driver API's
        /// rules (valid handles, a current context where one is needed); the safe wrappers in
        /// this module are the intended callers.
        #[derive(Clone, Copy, Debug)]
        pub struct Api {
            $(
                #[doc = concat!("`", $symbol, "`")]
                pub $field: unsafe extern "C" fn($($arg),*) -> CUresult,
            )*
            /// The graph instantiation entry point this driver has.
            pub graph_instantiate: GraphInstantiate,
            /// `cuStreamWaitValue32_v2`, where exported.
            pub stream_wait_value32: Option<StreamWaitValue32Fn>,
            /// `cuStreamWaitValue32` (the v1 ABI), where exported.
            pub stream_wait_value32_v1: Option<StreamWaitValue32Fn>,
            /// The module and kernel-launch entry points, or the first one missing.
            pub module: Result<ModuleApi, &'static str>,
        }

        impl Api {
            /// Resolves every entry point in declaration order (`cuInit` first), failing on the
            /// first one `lib` lacks.
            pub(crate) fn resolve(lib: &Library, library: &str) -> Result<Self, CudaError> {
                let missing = |symbol: &'static str| CudaError::MissingSymbol {
                    library: library.to_owned(),
                    symbol,
                };
                Ok(Self {
                    $(
                        $field: {
                            let address = lookup(lib, $symbol).ok_or_else(|| missing($symbol))?;
                            // SAFETY: a non-NULL address of the driver's exported function of
                            // this name, whose documented C signature is the one declared.
                            unsafe {
                                std::mem::transmute::<
                                    *mut c_void,
                                    unsafe extern "C" fn($($arg),*) -> CUresult,
                                >(address)
                            }
                        },
                    )*
                    graph_instantiate: resolve_instantiate(lib)
                        .ok_or_else(|| missing("cuGraphInstantiateWithFlags"))?,
                    stream_wait_value32: lookup(lib, "cuStreamWaitValue32_v2")
                        // SAFETY: the documented C signature of the v2 entry point.
                        .map(|a| unsafe { std::mem::transmute::<*mut c_void, StreamWaitValue32Fn>(a) }),
                    stream_wait_value32_v1: lookup(lib, "cuStreamWaitValue32")
                        // SAFETY: v1 has the same C signature as v2.
                        .map(|a| unsafe { std::mem::transmute::<*mut c_void, StreamWaitValue32Fn>(a) }),
                    module: ModuleApi::resolve(lib),
                })
            }
        }
    };
}

driver_api! {
    init = "cuInit": fn(c_uint);
    driver_get_version = "cuDriverGetVersion": fn(*mut c_int);
    get_error_name = "cuGetErrorName": fn(CUresult, *mut *const c_char);
    get_error_string = "cuGetErrorString": fn(CUresult, *mut *const c_char);
    device_get_count = "cuDeviceGetCount": fn(*mut c_int);
    device_get = "cuDeviceGet": fn(*mut CUdevice, c_int);
    device_get_name = "cuDeviceGetName": fn(*mut c_char, c_int, CUdevice);
    device_get_attribute = "cuDeviceGetAttribute": fn(*mut c_int, c_int, CUdevice);
    device_total_mem = "cuDeviceTotalMem_v2": fn(*mut usize, CUdevice);
    primary_ctx_retain = "cuDevicePrimaryCtxRetain": fn(*mut CUcontext, CUdevice);
    primary_ctx_release = "cuDevicePrimaryCtxRelease_v2": fn(CUdevice);
    ctx_set_current = "cuCtxSetCurrent": fn(CUcontext);
    stream_create = "cuStreamCreate": fn(*mut CUstream, c_uint);
    stream_query = "cuStreamQuery": fn(CUstream);
    stream_synchronize = "cuStreamSynchronize": fn(CUstream);
    stream_destroy = "cuStreamDestroy_v2": fn(CUstream);
    mem_alloc = "cuMemAlloc_v2": fn(*mut CUdeviceptr, usize);
    mem_free = "cuMemFree_v2": fn(CUdeviceptr);
    memcpy_htod = "cuMemcpyHtoD_v2": fn(CUdeviceptr, *const c_void, usize);
    memcpy_htod_async = "cuMemcpyHtoDAsync_v2": fn(CUdeviceptr, *const c_void, usize, CUstream);
    memcpy_dtoh = "cuMemcpyDtoH_v2": fn(*mut c_void, CUdeviceptr, usize);
    memset_d8 = "cuMemsetD8_v2": fn(CUdeviceptr, u8, usize);
    memcpy_dtod_async = "cuMemcpyDtoDAsync_v2": fn(CUdeviceptr, CUdeviceptr, usize, CUstream);
    mem_host_alloc = "cuMemHostAlloc": fn(*mut *mut c_void, usize, c_uint);
    mem_host_get_device_pointer = "cuMemHostGetDevicePointer_v2": fn(*mut CUdeviceptr, *mut c_void, c_uint);
    mem_free_host = "cuMemFreeHost": fn(*mut c_void);
    mem_get_info = "cuMemGetInfo_v2": fn(*mut usize, *mut usize);
    event_create = "cuEventCreate": fn(*mut CUevent, c_uint);
    event_record = "cuEventRecord": fn(CUevent, CUstream);
    event_query = "cuEventQuery": fn(CUevent);
    event_elapsed_time = "cuEventElapsedTime": fn(*mut c_float, CUevent, CUevent);
    event_destroy = "cuEventDestroy_v2": fn(CUevent);
    stream_begin_capture = "cuStreamBeginCapture_v2": fn(CUstream, c_int);
    stream_end_capture = "cuStreamEndCapture": fn(CUstream, *mut CUgraph);
    graph_launch = "cuGraphLaunch": fn(CUgraphExec, CUstream);
    graph_exec_destroy = "cuGraphExecDestroy": fn(CUgraphExec);
    graph_destroy = "cuGraphDestroy": fn(CUgraph);
}

/// The newest graph instantiation entry point `lib` exports.
fn resolve_instantiate(lib: &Library) -> Option<GraphInstantiate> {
    if let Some(address) = lookup(lib, "cuGraphInstantiateWithFlags") {
        // SAFETY: the documented signature of `cuGraphInstantiateWithFlags`.
        let f = unsafe { std::mem::transmute::<*mut c_void, GraphInstantiateWithFlagsFn>(address) };
        return Some(GraphInstantiate::WithFlags(f));
    }
    ["cuGraphInstantiate_v2", "cuGraphInstantiate"]
        .into_iter()
        .find_map(|name| {
            lookup(lib, name).map(|address| {
                // SAFETY: both names have the documented five-argument signature.
                let f = unsafe {
                    std::mem::transmute::<*mut c_void, GraphInstantiateLegacyFn>(address)
                };
                GraphInstantiate::Legacy(f, name)
            })
        })
}
