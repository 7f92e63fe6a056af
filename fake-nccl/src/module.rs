//! Modules: `cuModuleLoadData(Ex)`, `cuModuleGetFunction`, `cuModuleUnload` (launches are in
//! [`crate::launch`]).
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
use crate::state::*;

/// `CUDA_ERROR_INVALID_IMAGE`.
const CUDA_ERROR_INVALID_IMAGE: CuResult = 200;
/// `CUDA_ERROR_NO_BINARY_FOR_GPU`.
const CUDA_ERROR_NO_BINARY_FOR_GPU: CuResult = 209;
/// `CUDA_ERROR_INVALID_PTX`.
const CUDA_ERROR_INVALID_PTX: CuResult = 218;
/// `CUDA_ERROR_NOT_FOUND`.
const CUDA_ERROR_NOT_FOUND: CuResult = 500;
const TAG_MODULE: u64 = 0x3D;
pub(crate) const TAG_FUNCTION: u64 = 0x3F;

/// A loaded module: its device and kernels (name -> parameter sizes in bytes).
pub(crate) struct Module {
    pub(crate) device: usize,
    pub(crate) entries: HashMap<String, Vec<usize>>,
}

/// Modules and functions by id (kept apart from the stream state: only launches touch both).
#[derive(Default)]
pub(crate) struct Registry {
    next: u64,
    pub(crate) modules: HashMap<u64, Module>,
    /// function id -> (module id, kernel name)
    pub(crate) functions: HashMap<u64, (u64, String)>,
}

pub(crate) fn registry() -> std::sync::MutexGuard<'static, Registry> {
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
