//! The driver half: memory bounds, contexts, streams with events and wait-values, graphs.

use super::*;
use crate::graph::*;
use crate::state::*;

#[test]
fn copies_are_bounds_checked_against_the_allocation() {
    ctx(0);
    let p = alloc(1000);
    assert_eq!(p % 256, 0);
    let data: Vec<u8> = (0..1000).map(|i| i as u8).collect();
    h2d(p, &data);
    assert_eq!(d2h(p, 1000), data);
    unsafe {
        assert_eq!(
            cuMemcpyHtoD_v2(p + 1, data.as_ptr().cast(), 1000),
            CUDA_ERROR_INVALID_VALUE
        );
        let mut back = vec![0u8; 8];
        assert_eq!(
            cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), p + 996, 8),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMemsetD8_v2(p + 10, 7, 990), 0);
        assert_eq!(cuMemsetD8_v2(p + 10, 7, 991), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(d2h(p + 999, 1), vec![7]);
        assert_eq!(cuMemFree_v2(p + 1), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(cuMemFree_v2(p), 0);
        assert_eq!(cuMemFree_v2(p), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(
            cuMemcpyHtoD_v2(p, data.as_ptr().cast(), 1),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuMemAlloc_v2(std::ptr::null_mut(), 8),
            CUDA_ERROR_INVALID_VALUE
        );
        let mut q = 0;
        assert_eq!(cuMemAlloc_v2(&mut q, 64 << 30), CUDA_ERROR_OUT_OF_MEMORY);
    }
}

#[test]
fn memory_info_counts_allocations_of_the_current_device() {
    ctx(3);
    let (mut free, mut total) = (0, 0);
    unsafe {
        assert_eq!(cuMemGetInfo_v2(&mut free, &mut total), 0);
        assert_eq!(total, 16 << 30);
        let p = alloc(1 << 20);
        let mut free2 = 0;
        assert_eq!(cuMemGetInfo_v2(&mut free2, &mut total), 0);
        assert!(free2 <= free - (1 << 20));
        cuMemFree_v2(p);
    }
}

#[test]
fn a_thread_without_a_context_gets_invalid_context() {
    ctx(0);
    let code = std::thread::spawn(|| {
        let mut p = 0;
        unsafe { cuMemAlloc_v2(&mut p, 8) }
    })
    .join()
    .unwrap();
    assert_eq!(code, CUDA_ERROR_INVALID_CONTEXT);
}

#[test]
fn device_queries_describe_fake_gpus() {
    ctx(0);
    unsafe {
        let mut n = 0;
        assert_eq!(cuDeviceGetCount(&mut n), 0);
        assert_eq!(n, 4);
        let mut name = [0i8; 32];
        assert_eq!(cuDeviceGetName(name.as_mut_ptr(), 32, 2), 0);
        assert_eq!(
            CStr::from_ptr(name.as_ptr()).to_str().unwrap(),
            "Fake GPU 2"
        );
        let mut v = 0;
        assert_eq!(cuDeviceGetAttribute(&mut v, 33, 2), 0);
        assert_eq!(v, 0x1a);
        assert_eq!(cuDeviceGetAttribute(&mut v, 75, 0), 0);
        assert_eq!(v, 9);
        assert_eq!(cuDeviceGet(&mut v, 4), CUDA_ERROR_INVALID_DEVICE);
        let mut s = std::ptr::null();
        assert_eq!(cuGetErrorName(201, &mut s), 0);
        assert_eq!(
            CStr::from_ptr(s).to_str().unwrap(),
            "CUDA_ERROR_INVALID_CONTEXT"
        );
        assert_eq!(cuDriverGetVersion(&mut v), 0);
        assert_eq!(v, 12040);
        assert_eq!(
            cuDriverGetVersion(std::ptr::null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
    }
}

#[test]
fn events_and_wait_values_complete_in_stream_order() {
    ctx(1);
    let s = stream();
    unsafe {
        let mut word: Ptr = std::ptr::null_mut();
        assert_eq!(cuMemHostAlloc(&mut word, 4, 0), 0);
        let mut dword = 0;
        assert_eq!(cuMemHostGetDevicePointer_v2(&mut dword, word, 0), 0);
        assert_eq!(dword, word as usize as u64);
        let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
        assert_eq!(cuEventCreate(&mut a, 0), 0);
        assert_eq!(cuEventCreate(&mut b, 0), 0);
        let mut ms = 0.0f32;
        assert_eq!(cuEventElapsedTime(&mut ms, a, b), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuEventRecord(a, s), 0);
        assert_eq!(cuStreamWaitValue32_v2(s, dword, 1, 0), 0);
        assert_eq!(cuEventRecord(b, s), 0);
        assert_eq!(cuEventQuery(a), 0);
        assert_eq!(cuEventQuery(b), CUDA_ERROR_NOT_READY);
        assert_eq!(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
        assert_eq!(cuEventElapsedTime(&mut ms, a, b), CUDA_ERROR_NOT_READY);
        std::thread::sleep(std::time::Duration::from_millis(2));
        std::ptr::write_volatile(word as *mut u32, 1);
        assert_eq!(cuEventQuery(b), 0);
        assert_eq!(cuStreamQuery(s), 0);
        assert_eq!(cuEventElapsedTime(&mut ms, a, b), 0);
        assert!(ms >= 1.0, "{ms}");
        assert_eq!(cuMemFreeHost(word), 0);
        assert_eq!(cuEventDestroy_v2(a), 0);
        assert_eq!(cuEventQuery(a), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuStreamDestroy_v2(s), 0);
        assert_eq!(cuStreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
    }
}

#[test]
fn capture_records_into_a_graph_that_replays() {
    ctx(2);
    let s = stream();
    unsafe {
        let mut e = std::ptr::null_mut();
        assert_eq!(cuEventCreate(&mut e, 0), 0);
        assert_eq!(
            cuStreamBeginCapture_v2(std::ptr::null_mut(), 1),
            CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
        );
        assert_eq!(cuStreamBeginCapture_v2(s, 1), 0);
        assert_eq!(cuStreamBeginCapture_v2(s, 1), CUDA_ERROR_ILLEGAL_STATE);
        assert_eq!(cuEventRecord(e, s), 0);
        assert_eq!(cuStreamQuery(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        let mut g = std::ptr::null_mut();
        assert_eq!(cuStreamEndCapture(s, &mut g), 0);
        let mut x = std::ptr::null_mut();
        assert_eq!(cuGraphInstantiateWithFlags(&mut x, g, 0), 0);
        assert_eq!(cuGraphLaunch(x, s), 0);
        sync(s);
        assert_eq!(cuEventQuery(e), 0);
        assert_eq!(cuGraphExecDestroy(x), 0);
        assert_eq!(cuGraphLaunch(x, s), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuGraphDestroy(g), 0);
    }
}

#[test]
fn handles_of_other_kinds_are_refused() {
    ctx(0);
    let s = stream();
    unsafe {
        assert_eq!(cuEventQuery(s), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuCtxSetCurrent(s), CUDA_ERROR_INVALID_CONTEXT);
        assert_eq!(cuStreamQuery(0x1234 as Ptr), CUDA_ERROR_INVALID_HANDLE);
    }
}
