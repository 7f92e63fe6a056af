//! Kernel launches (`cuLaunchKernel`) of the functions of [`crate::module`], plus the
//! stream-ordered `cuMemsetD8Async` and `cuMemcpyDtoHAsync_v2` the verification path uses. A
//! launch is checked when it is made and becomes a stream item that runs the host build of the
//! kernel when the stream reaches it.

use std::ffi::{c_uint, c_void};

use crate::cuda_api::{current_device, require_init};
use crate::engine::progress;
use crate::module::{registry, TAG_FUNCTION};
use crate::state::*;
use crate::stream::{stream_of_current, Item};

/// A kernel launch waiting in a stream.
#[derive(Debug, Clone)]
pub struct Launch {
    /// `vf_fill` or `vf_count`.
    pub name: String,
    /// The parameter block, copied at launch as the driver copies kernel parameters.
    pub params: Vec<u64>,
    pub table: u64,
    pub data: u64,
    pub count: u64,
    /// `vf_count`: the counter.
    pub wrong: u64,
}

/// Why a launch is refused: one line on stderr, then the error code.
fn refuse(name: &str, why: String) -> CuResult {
    eprintln!("fake-nccl: cuLaunchKernel({name}) refused: {why}");
    CUDA_ERROR_INVALID_VALUE
}

/// `cuLaunchKernel(CUfunction, gridXYZ, blockXYZ, sharedMem, CUstream, void** params, void**
/// extra)`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLaunchKernel(
    f: *mut c_void,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    _shared: c_uint,
    h: *mut c_void,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let device = current_device(&st)?;
        let stream = stream_of_current(&st, h)?;
        let fid = unhandle(TAG_FUNCTION, f).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let (name, sizes) = {
            let r = registry();
            let (m, name) = r.functions.get(&fid).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            let module = r.modules.get(m).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            if module.device != device {
                return Err(CUDA_ERROR_INVALID_HANDLE);
            }
            (name.clone(), module.entries[name].clone())
        };
        let threads = bx as u64 * by as u64 * bz as u64;
        if gx == 0 || gy == 0 || gz == 0 || threads == 0 || threads > 1024 {
            return Err(refuse(
                &name,
                format!("grid {gx}x{gy}x{gz}, block {bx}x{by}x{bz}"),
            ));
        }
        if params.is_null() || !extra.is_null() {
            return Err(refuse(&name, "parameters must come as kernelParams".into()));
        }
        let launch = read_launch(&st, &name, &sizes, params)?;
        st.enqueue(stream, Item::Kernel(launch));
        progress(&mut st);
        Ok(())
    })
}

/// Reads and checks the parameters of a `vf_fill` or `vf_count` launch.
unsafe fn read_launch(
    st: &State,
    name: &str,
    sizes: &[usize],
    params: *mut *mut c_void,
) -> Result<Launch, CuResult> {
    let block = ncclbench_kernels::params_size();
    let want: &[usize] = match name {
        "vf_fill" => &[block, 8, 8, 8],
        "vf_count" => &[block, 8, 8, 8, 8],
        _ => return Err(refuse(name, "the fake runs no such kernel".into())),
    };
    if sizes != want {
        return Err(refuse(
            name,
            format!("the PTX declares parameters of {sizes:?} bytes, the host build {want:?}"),
        ));
    }
    let arg = |i: usize| *params.add(i);
    for i in 0..sizes.len() {
        if arg(i).is_null() {
            return Err(refuse(name, format!("parameter {i} is NULL")));
        }
    }
    let mut words = vec![0u64; block.div_ceil(8)];
    std::ptr::copy_nonoverlapping(arg(0) as *const u8, words.as_mut_ptr().cast(), block);
    let field = |i: usize| {
        let at = ncclbench_kernels::params_offsets()[i];
        let bytes: &[u8] = std::slice::from_raw_parts(words.as_ptr().cast(), block);
        u32::from_ne_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
    };
    let (abi, width, choices, per_leader) = (field(41), field(24), field(36), field(37));
    if abi != ncclbench_kernels::abi() {
        return Err(refuse(
            name,
            format!(
                "parameter block tag {abi:#x}, the kernels' {:#x}",
                ncclbench_kernels::abi()
            ),
        ));
    }
    let u64_arg = |i: usize| (arg(i) as *const u64).read_unaligned();
    let (table, data, count) = (u64_arg(1), u64_arg(2), u64_arg(3));
    let bytes = count
        .checked_mul(width as u64)
        .ok_or(CUDA_ERROR_INVALID_VALUE)? as usize;
    if !matches!(width, 1 | 2 | 4 | 8) || (count > 0 && st.alloc_holding(data, bytes).is_none()) {
        return Err(refuse(
            name,
            format!(
                "{count} elements of {width} bytes at {}",
                st.describe_ptr(data)
            ),
        ));
    }
    if per_leader != 0 && st.alloc_holding(table, 16 * choices as usize).is_none() {
        return Err(refuse(
            name,
            format!(
                "a {choices}-entry leader table at {}",
                st.describe_ptr(table)
            ),
        ));
    }
    let wrong = if name == "vf_count" {
        let w = u64_arg(4);
        if w % 8 != 0 || st.alloc_holding(w, 8).is_none() {
            return Err(refuse(
                name,
                format!("the counter at {}", st.describe_ptr(w)),
            ));
        }
        w
    } else {
        0
    };
    Ok(Launch {
        name: name.to_string(),
        params: words,
        table,
        data,
        count,
        wrong,
    })
}

/// Runs a launch that reached the head of its stream (its ranges were checked at launch and
/// are checked again, since an allocation may have been freed since).
pub fn run(st: &State, k: &Launch) {
    let live = |p: u64, len: usize| len == 0 || st.alloc_holding(p, len).is_some();
    if !live(k.wrong, if k.wrong != 0 { 8 } else { 0 }) {
        return;
    }
    let table = k.table as usize as *const i64;
    // SAFETY: the block is a full vf_params; the run, the table and the counter lie in live
    // allocations (checked at launch, and the counter again here).
    unsafe {
        if k.name == "vf_fill" {
            ncclbench_kernels::fill_raw(
                k.params.as_ptr().cast(),
                table,
                k.data as usize as *mut c_void,
                k.count,
            );
        } else {
            ncclbench_kernels::count_raw(
                k.params.as_ptr().cast(),
                table,
                k.data as usize as *const c_void,
                k.count,
                k.wrong as usize as *mut u64,
            );
        }
    }
}

/// `cuMemsetD8Async(CUdeviceptr, unsigned char, size_t, CUstream)`: a landing on the stream.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8Async(
    dst: u64,
    value: u8,
    n: usize,
    h: *mut c_void,
) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let stream = stream_of_current(&st, h)?;
        if st.alloc_holding(dst, n).is_none() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if n > 0 {
            st.enqueue(
                stream,
                Item::Write {
                    dst,
                    data: vec![value; n],
                    lazy: false,
                },
            );
        }
        progress(&mut st);
        Ok(())
    })
}

/// `cuMemcpyDtoHAsync_v2(void*, CUdeviceptr, size_t, CUstream)`: the bytes are read when the
/// stream reaches the copy, so the host sees them only after synchronizing the stream.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    dst: *mut c_void,
    src: u64,
    n: usize,
    h: *mut c_void,
) -> CuResult {
    cu_guard(|| {
        let mut st = require_init()?;
        let stream = stream_of_current(&st, h)?;
        if st.alloc_holding(src, n).is_none() || (dst.is_null() && n > 0) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if n > 0 {
            st.enqueue(
                stream,
                Item::ReadBack {
                    dst: dst as u64,
                    src,
                    len: n,
                },
            );
        }
        progress(&mut st);
        Ok(())
    })
}
