//! Modules and kernel launches ([`crate::module`]): the checked-in PTX loads and its kernels
//! run in stream order with the host build of the same source; launches whose parameters do
//! not match the PTX's declared list, the kernels' ABI tag or live device ranges are refused.

use super::*;
use crate::launch::*;
use crate::module::*;
use std::ffi::CString;

const PTX: &str = include_str!("../../../kernels/verify.ptx");

/// The module's function `name` on the current device.
fn function(name: &str) -> Ptr {
    let image = CString::new(PTX).unwrap();
    let (mut m, mut f) = (std::ptr::null_mut(), std::ptr::null_mut());
    unsafe {
        assert_eq!(cuModuleLoadData(&mut m, image.as_ptr().cast()), 0);
        let n = CString::new(name).unwrap();
        assert_eq!(cuModuleGetFunction(&mut f, m, n.as_ptr()), 0);
    }
    f
}

/// A plain-pattern parameter block for `u32` elements with the kernels' ABI tag.
fn block() -> Vec<u64> {
    let size = ncclbench_kernels::params_size();
    let mut bytes = vec![0u8; size];
    let at = ncclbench_kernels::params_offsets();
    let put32 =
        |b: &mut Vec<u8>, i: usize, v: u32| b[at[i]..at[i] + 4].copy_from_slice(&v.to_ne_bytes());
    bytes[at[0]..at[0] + 8].copy_from_slice(&7u64.to_ne_bytes()); // key
    bytes[at[3]..at[3] + 8].copy_from_slice(&0xffff_ffffu64.to_ne_bytes()); // mask
    put32(&mut bytes, 21, 1); // family: plain
    put32(&mut bytes, 24, 4); // width
    put32(&mut bytes, 41, ncclbench_kernels::abi());
    bytes
        .chunks(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

unsafe fn launch(f: Ptr, s: Ptr, args: &mut [*mut c_void]) -> i32 {
    cuLaunchKernel(
        f,
        4,
        1,
        1,
        256,
        1,
        1,
        0,
        s,
        args.as_mut_ptr(),
        std::ptr::null_mut(),
    )
}

#[test]
fn kernels_fill_and_count_in_stream_order_and_bad_launches_are_refused() {
    ctx(0);
    let (fill, count) = (function("vf_fill"), function("vf_count"));
    let mut s = std::ptr::null_mut();
    unsafe { assert_eq!(cuStreamCreate(&mut s, 1), 0) };
    let (buf, counter) = (alloc(4096), alloc(8));
    let mut p = block();
    let (mut table, mut data, mut n, mut w) = (0u64, buf, 1024u64, counter);
    let a = |p: &mut Vec<u64>,
             t: &mut u64,
             d: &mut u64,
             n: &mut u64,
             w: &mut u64|
     -> Vec<*mut c_void> {
        vec![
            p.as_mut_ptr().cast(),
            (t as *mut u64).cast(),
            (d as *mut u64).cast(),
            (n as *mut u64).cast(),
            (w as *mut u64).cast(),
        ]
    };
    unsafe {
        assert_eq!(
            launch(
                fill,
                s,
                &mut a(&mut p, &mut table, &mut data, &mut n, &mut w)[..4]
            ),
            0
        );
        // A count of the same run, queued behind the fill, finds nothing wrong.
        assert_eq!(
            launch(
                count,
                s,
                &mut a(&mut p, &mut table, &mut data, &mut n, &mut w)
            ),
            0
        );
        let mut got = [0u8; 8];
        assert_eq!(
            cuMemcpyDtoHAsync_v2(got.as_mut_ptr().cast(), counter, 8, s),
            0
        );
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(u64::from_ne_bytes(got), 0);
        let mut host = vec![0u8; 4096];
        assert_eq!(cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), buf, 4096), 0);
        let mut want = vec![0u8; 4096];
        let bytes: Vec<u8> = p.iter().flat_map(|w| w.to_ne_bytes()).collect();
        ncclbench_kernels::fill(&bytes, &[], &mut want);
        assert_eq!(host, want, "the fake ran the host build of the kernel");

        // Refused: another ABI tag; a run past its allocation; a counter outside device memory.
        let mut bad = p.clone();
        let tag_at = ncclbench_kernels::params_offsets()[41];
        bad[tag_at / 8] ^= 1 << (8 * (tag_at % 8));
        assert_eq!(
            launch(
                fill,
                s,
                &mut a(&mut bad, &mut table, &mut data, &mut n, &mut w)[..4]
            ),
            1
        );
        let mut long = 1025u64;
        assert_eq!(
            launch(
                fill,
                s,
                &mut a(&mut p, &mut table, &mut data, &mut long, &mut w)[..4]
            ),
            1
        );
        let mut stack = 0u64;
        let mut host_ptr = &mut stack as *mut u64 as u64;
        assert_eq!(
            launch(
                count,
                s,
                &mut a(&mut p, &mut table, &mut data, &mut n, &mut host_ptr)
            ),
            1
        );
        // An illegal block, and no kernelParams.
        let mut args = a(&mut p, &mut table, &mut data, &mut n, &mut w);
        assert_eq!(
            cuLaunchKernel(
                fill,
                1,
                1,
                1,
                2048,
                1,
                1,
                0,
                s,
                args.as_mut_ptr(),
                std::ptr::null_mut()
            ),
            1
        );
        assert_eq!(
            cuLaunchKernel(
                fill,
                1,
                1,
                1,
                256,
                1,
                1,
                0,
                s,
                std::ptr::null_mut(),
                std::ptr::null_mut()
            ),
            1
        );
    }
}

#[test]
fn a_module_that_is_not_ptx_or_lacks_the_kernel_is_refused() {
    ctx(1);
    let (mut m, mut f) = (std::ptr::null_mut(), std::ptr::null_mut());
    let junk = CString::new("not ptx").unwrap();
    let newer = CString::new(PTX.replace(".target sm_70", ".target sm_120")).unwrap();
    let image = CString::new(PTX).unwrap();
    let missing = CString::new("vf_nothing").unwrap();
    unsafe {
        assert_eq!(cuModuleLoadData(&mut m, junk.as_ptr().cast()), 200);
        // The default fake device is compute capability 9.0: PTX for sm_120 has no binary.
        assert_eq!(cuModuleLoadData(&mut m, newer.as_ptr().cast()), 209);
        assert_eq!(cuModuleLoadData(&mut m, image.as_ptr().cast()), 0);
        assert_eq!(cuModuleGetFunction(&mut f, m, missing.as_ptr()), 500);
        assert_eq!(cuModuleUnload(m), 0);
        let name = CString::new("vf_fill").unwrap();
        assert_eq!(
            cuModuleGetFunction(&mut f, m, name.as_ptr()),
            400,
            "unloaded"
        );
    }
}
