//! Modules and kernel launches: `cuModuleLoadData(Ex)`, `cuModuleGetFunction`,
//! `cuModuleUnload`, `cuLaunchKernel`, plus the stream-ordered `cuMemsetD8Async` and
//! `cuMemcpyDtoHAsync_v2` the verification path uses.
//!
//! The fake has no JIT: a module is PTX text whose `.entry` declarations are parsed (name and
//! parameter sizes), refused as the driver's JIT would refuse it (not PTX, or a `.target`
//! newer than the device). A launched kernel becomes a stream item that runs, in stream
//! order, the host build of the same source (`ncclbench-kernels`: `kernels/verify.cuh`
//! compiled for the host) by kernel name. Launches are checked as strictly as the
//! double can: the grid and block must be legal, the parameter list is read with the sizes
//! the PTX declares, the parameter block must carry the host build's ABI tag and size, and
//! every pointer must cover what the kernel will touch in one live device allocation; any
//! mismatch prints one line naming the kernel and fails the launch.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::{Mutex, OnceLock};

use crate::cuda_api::{current_device, require_init};
use crate::engine::progress;
use crate::state::*;
use crate::stream::{stream_of_current, Item};

/// `CUDA_ERROR_INVALID_IMAGE`.
const CUDA_ERROR_INVALID_IMAGE: CuResult = 200;
/// `CUDA_ERROR_NO_BINARY_FOR_GPU`.
const CUDA_ERROR_NO_BINARY_FOR_GPU: CuResult = 209;
/// `CUDA_ERROR_INVALID_PTX`.
const CUDA_ERROR_INVALID_PTX: CuResult = 218;
/// `CUDA_ERROR_NOT_FOUND`.
const CUDA_ERROR_NOT_FOUND: CuResult = 500;
const TAG_MODULE: u64 = 0x3D;
const TAG_FUNCTION: u64 = 0x3F;

/// A loaded module: its device and kernels (name -> parameter sizes in bytes).
struct Module {
    device: usize,
    entries: HashMap<String, Vec<usize>>,
}

/// Modules and functions by id (kept apart from the stream state: only launches touch both).
#[derive(Default)]
struct Registry {
    next: u64,
    modules: HashMap<u64, Module>,
    /// function id -> (module id, kernel name)
    functions: HashMap<u64, (u64, String)>,
}

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    static R: OnceLock<Mutex<Registry>> = OnceLock::new();
    R.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The kernels of PTX `text`, or the JIT's error for it on a device of compute capability
/// `cc`.
fn parse_ptx(text: &str, cc: (i32, i32)) -> Result<HashMap<String, Vec<usize>>, CuResult> {
    if !text
        .lines()
        .any(|l| l.trim_start().starts_with(".version "))
    {
        return Err(CUDA_ERROR_INVALID_IMAGE);
    }
    let target = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(".target sm_"))
        .and_then(|t| {
            t.trim_end_matches(|c: char| !c.is_ascii_digit())
                .parse::<i32>()
                .ok()
        })
        .ok_or(CUDA_ERROR_INVALID_PTX)?;
    if target > cc.0 * 10 + cc.1 {
        return Err(CUDA_ERROR_NO_BINARY_FOR_GPU);
    }
    let mut entries = HashMap::new();
    let mut rest = text;
    while let Some(i) = rest.find(".entry ") {
        rest = &rest[i + ".entry ".len()..];
        let name_end = rest.find('(').ok_or(CUDA_ERROR_INVALID_PTX)?;
        let name = rest[..name_end].trim().to_string();
        let close = rest.find(')').ok_or(CUDA_ERROR_INVALID_PTX)?;
        let params = rest[name_end + 1..close]
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(param_size)
            .collect::<Option<Vec<usize>>>()
            .ok_or(CUDA_ERROR_INVALID_PTX)?;
        entries.insert(name, params);
    }
    Ok(entries)
}

/// The size of one `.param` declaration (`.param .u64 x`, `.param .align 8 .b8 x[248]`).
fn param_size(decl: &str) -> Option<usize> {
    let d = decl.trim();
    if let (Some(open), Some(close)) = (d.rfind('['), d.rfind(']')) {
        return d[open + 1..close].trim().parse().ok();
    }
    let ty = d.split_whitespace().nth(1)?;
    match &ty[ty.len().checked_sub(2)?..] {
        "64" => Some(8),
        "32" => Some(4),
        "16" => Some(2),
        _ if ty.ends_with('8') => Some(1),
        _ => None,
    }
}

fn load(out: *mut *mut c_void, image: *const c_void) -> CuResult {
    cu_guard(|| {
        let st = require_init()?;
        let device = current_device(&st)?;
        drop(st);
        if out.is_null() || image.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the driver API takes PTX images as NUL-terminated text.
        let text = unsafe { CStr::from_ptr(image as *const c_char) };
        let text = text.to_str().map_err(|_| CUDA_ERROR_INVALID_IMAGE)?;
        let entries = parse_ptx(text, crate::config::compute_capability())?;
        let mut r = registry();
        r.next += 1;
        let id = r.next;
        r.modules.insert(id, Module { device, entries });
        // SAFETY: checked non-null above.
        unsafe { put(out, handle(TAG_MODULE, id), CUDA_ERROR_INVALID_VALUE) }
    })
}

/// `cuModuleLoadData(CUmodule*, const void* image)`.
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadData(out: *mut *mut c_void, image: *const c_void) -> CuResult {
    load(out, image)
}

/// `cuModuleLoadDataEx(CUmodule*, const void*, unsigned, CUjit_option*, void**)`: options are
/// accepted and ignored (the fake's "JIT" writes no log).
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    out: *mut *mut c_void,
    image: *const c_void,
    _n: c_uint,
    _options: *mut c_int,
    _values: *mut *mut c_void,
) -> CuResult {
    load(out, image)
}

/// `cuModuleGetFunction(CUfunction*, CUmodule, const char*)`.
#[no_mangle]
pub unsafe extern "C" fn cuModuleGetFunction(
    out: *mut *mut c_void,
    module: *mut c_void,
    name: *const c_char,
) -> CuResult {
    cu_guard(|| {
        let id = unhandle(TAG_MODULE, module).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        if name.is_null() || out.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let name = CStr::from_ptr(name).to_string_lossy().into_owned();
        let mut r = registry();
        let m = r.modules.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        if !m.entries.contains_key(&name) {
            return Err(CUDA_ERROR_NOT_FOUND);
        }
        r.next += 1;
        let f = r.next;
        r.functions.insert(f, (id, name));
        put(out, handle(TAG_FUNCTION, f), CUDA_ERROR_INVALID_VALUE)
    })
}

/// `cuModuleUnload(CUmodule)`: its functions become invalid.
#[no_mangle]
pub unsafe extern "C" fn cuModuleUnload(module: *mut c_void) -> CuResult {
    cu_guard(|| {
        let id = unhandle(TAG_MODULE, module).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let mut r = registry();
        r.modules.remove(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        r.functions.retain(|_, (m, _)| *m != id);
        Ok(())
    })
}

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
