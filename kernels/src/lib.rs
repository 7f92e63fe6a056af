//! The verification kernels of `kernels/verify.cuh`, compiled for the host by this crate's
//! build script: the very source NVRTC turns into the PTX the NCCL backend loads. Tests compare
//! them with ncclbench's Rust generator and checker, and fake-nccl runs them when ncclbench
//! launches a kernel from that PTX. Parameter blocks travel as raw bytes, so this crate does not
//! depend on ncclbench (whose `DevParams` mirrors the C struct).

use std::ffi::c_void;

extern "C" {
    fn vf_host_fill(p: *const c_void, table: *const i64, out: *mut c_void, count: u64);
    fn vf_host_count(
        p: *const c_void,
        table: *const i64,
        data: *const c_void,
        count: u64,
        wrong: *mut u64,
    );
    fn vf_host_bits(p: *const c_void, table: *const i64, g: u64) -> u64;
    fn vf_host_params_size() -> usize;
    fn vf_host_abi() -> u32;
    fn vf_host_params_fields(offsets: *mut *const usize) -> usize;
}

/// The source every build of the kernels comes from.
pub const SOURCE: &str = include_str!("../verify.cuh");

/// `sizeof(vf_params)` as the host C compiler lays it out.
pub fn params_size() -> usize {
    // SAFETY: a pure function without arguments.
    unsafe { vf_host_params_size() }
}

/// `VF_ABI`: the tag a parameter block must carry.
pub fn abi() -> u32 {
    // SAFETY: a pure function without arguments.
    unsafe { vf_host_abi() }
}

/// The byte offset of every field of `vf_params`, in declaration order.
pub fn params_offsets() -> Vec<usize> {
    let mut at: *const usize = std::ptr::null();
    // SAFETY: the C function points `at` at a static array of the returned length.
    unsafe {
        let n = vf_host_params_fields(&mut at);
        std::slice::from_raw_parts(at, n).to_vec()
    }
}

/// A parameter block copied into 8-byte-aligned storage, checked for size.
fn aligned(params: &[u8]) -> Vec<u64> {
    assert_eq!(
        params.len(),
        params_size(),
        "parameter block of {} bytes, vf_params has {}",
        params.len(),
        params_size()
    );
    let mut words = vec![0u64; params.len().div_ceil(8)];
    for (w, c) in words.iter_mut().zip(params.chunks(8)) {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        *w = u64::from_ne_bytes(b);
    }
    words
}

fn table_ptr(table: &[i64]) -> *const i64 {
    if table.is_empty() {
        std::ptr::null()
    } else {
        table.as_ptr()
    }
}

/// The element bits at global index `g` of the run `params` describes.
pub fn bits(params: &[u8], table: &[i64], g: u64) -> u64 {
    let p = aligned(params);
    // SAFETY: `p` is a full parameter block; the table is read only at leader choices, which
    // the Rust pattern sized it for.
    unsafe { vf_host_bits(p.as_ptr().cast(), table_ptr(table), g) }
}

/// Runs the `vf_fill` kernel over `out` (as many whole elements as fit).
pub fn fill(params: &[u8], table: &[i64], out: &mut [u8]) {
    let p = aligned(params);
    let width = width_of(&p);
    // SAFETY: the kernel writes `count` elements of `width` bytes, all inside `out`.
    unsafe {
        fill_raw(
            p.as_ptr().cast(),
            table_ptr(table),
            out.as_mut_ptr().cast(),
            (out.len() / width) as u64,
        )
    }
}

/// Runs the `vf_count` kernel over `data` (whole elements) and returns the wrong count.
pub fn count(params: &[u8], table: &[i64], data: &[u8]) -> u64 {
    let p = aligned(params);
    let width = width_of(&p);
    let mut wrong = 0u64;
    // SAFETY: the kernel reads `count` elements of `width` bytes, all inside `data`.
    unsafe {
        count_raw(
            p.as_ptr().cast(),
            table_ptr(table),
            data.as_ptr().cast(),
            (data.len() / width) as u64,
            &mut wrong,
        )
    };
    wrong
}

/// The `width` field of an aligned block (byte offset 24 of the 32-bit fields), at least 1.
fn width_of(p: &[u64]) -> usize {
    let at = params_offsets()[24];
    let bytes: Vec<u8> = p.iter().flat_map(|w| w.to_ne_bytes()).collect();
    (u32::from_ne_bytes(bytes[at..at + 4].try_into().unwrap()) as usize).clamp(1, 8)
}

/// `vf_fill` on raw pointers, as a launch passes them.
///
/// # Safety
/// `params` points to a `vf_params`; `table` to the leader table the block needs (or null);
/// `out` to `count` writable elements of the block's width.
pub unsafe fn fill_raw(params: *const c_void, table: *const i64, out: *mut c_void, count: u64) {
    vf_host_fill(params, table, out, count)
}

/// `vf_count` on raw pointers, as a launch passes them.
///
/// # Safety
/// As [`fill_raw`], with `data` readable and `wrong` a writable `u64`.
pub unsafe fn count_raw(
    params: *const c_void,
    table: *const i64,
    data: *const c_void,
    count: u64,
    wrong: *mut u64,
) {
    vf_host_count(params, table, data, count, wrong)
}
