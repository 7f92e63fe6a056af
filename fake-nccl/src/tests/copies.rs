//! When host-to-device copies and memsets land ([`crate::copy`]): a pageable synchronous copy
//! and a memset are items of the legacy stream that a non-blocking stream does not wait for;
//! synchronizing or querying their stream, a later item of it, a later synchronous copy, or a
//! blocking stream's work lands them. Each test runs alone in a child process: the legacy
//! streams are per device and shared by every test thread, whose copies would land this test's
//! bytes early.

use super::*;
use crate::state::CUDA_ERROR_INVALID_VALUE;

/// True in the child; in the parent, runs test `name` alone in a child and checks it passed.
fn alone(name: &str) -> bool {
    if std::env::var_os("FAKE_NCCL_TEST_ALONE").is_some() {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let out = std::process::Command::new(exe)
        .args([name, "--exact", "--test-threads=1"])
        .env("FAKE_NCCL_TEST_ALONE", "1")
        .output()
        .expect("run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name} alone:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

/// `cuMemcpyHtoD_v2` without waiting for the bytes to land.
fn h2d_nowait(p: u64, data: &[u8]) {
    assert_eq!(
        unsafe { cuMemcpyHtoD_v2(p, data.as_ptr().cast(), data.len()) },
        0
    );
}

/// `cuMemcpyDtoDAsync_v2(dst <- src)` on `s`.
fn d2d(dst: u64, src: u64, len: usize, s: Ptr) {
    assert_eq!(unsafe { cuMemcpyDtoDAsync_v2(dst, src, len, s) }, 0);
}

fn blocking_stream() -> Ptr {
    let mut s = std::ptr::null_mut();
    assert_eq!(unsafe { cuStreamCreate(&mut s, 0) }, 0);
    s
}

#[test]
fn a_non_blocking_stream_reads_the_old_bytes_until_the_legacy_stream_completes() {
    if !alone("tests::copies::a_non_blocking_stream_reads_the_old_bytes_until_the_legacy_stream_completes") {
        return;
    }
    ctx(0);
    let (a, b, s) = (alloc(64), alloc(64), stream());
    h2d_nowait(a, &[7; 64]);
    d2d(b, a, 64, s);
    sync(s);
    assert_eq!(
        d2h(b, 64),
        vec![0; 64],
        "the copy on s ran before the bytes landed"
    );
    assert_eq!(
        d2h(a, 64),
        vec![7; 64],
        "cuMemcpyDtoH waits for the legacy stream"
    );
    // After the legacy stream is synchronized the bytes are there for every stream.
    h2d_nowait(a, &[8; 64]);
    sync(std::ptr::null_mut());
    d2d(b, a, 64, s);
    sync(s);
    assert_eq!(d2h(b, 64), vec![8; 64]);
}

#[test]
fn the_legacy_stream_blocking_streams_and_later_copies_are_ordered_after_a_copy() {
    if !alone("tests::copies::the_legacy_stream_blocking_streams_and_later_copies_are_ordered_after_a_copy") {
        return;
    }
    ctx(1);
    let (a, b, c, s) = (alloc(64), alloc(64), alloc(64), stream());
    h2d_nowait(a, &[1; 64]);
    d2d(b, a, 64, std::ptr::null_mut());
    let blocking = blocking_stream();
    h2d_nowait(a, &[2; 64]);
    d2d(c, a, 64, blocking);
    sync(blocking);
    assert_eq!(d2h(b, 64), vec![1; 64], "the legacy stream runs in order");
    assert_eq!(
        d2h(c, 64),
        vec![2; 64],
        "a blocking stream waits for the legacy stream"
    );
    // A synchronous copy completes the legacy stream's earlier work before it starts.
    h2d_nowait(a, &[3; 64]);
    h2d_nowait(c, &[4; 64]);
    d2d(b, a, 64, s);
    sync(s);
    assert_eq!(d2h(b, 64), vec![3; 64]);
    // Querying the legacy stream observes (so lands) its copies.
    h2d_nowait(a, &[5; 64]);
    assert_eq!(unsafe { cuStreamQuery(std::ptr::null_mut()) }, 0);
    d2d(b, a, 64, s);
    sync(s);
    assert_eq!(d2h(b, 64), vec![5; 64]);
}

#[test]
fn a_memset_lands_on_the_legacy_stream_too() {
    if !alone("tests::copies::a_memset_lands_on_the_legacy_stream_too") {
        return;
    }
    ctx(2);
    let (a, b, s) = (alloc(64), alloc(64), stream());
    assert_eq!(unsafe { cuMemsetD8_v2(a, 9, 64) }, 0);
    d2d(b, a, 64, s);
    sync(s);
    assert_eq!(d2h(b, 64), vec![0; 64]);
    assert_eq!(d2h(a, 64), vec![9; 64]);
}

#[test]
fn an_async_copy_is_ordered_on_its_own_stream_only() {
    if !alone("tests::copies::an_async_copy_is_ordered_on_its_own_stream_only") {
        return;
    }
    ctx(3);
    let (a, b, s) = (alloc(64), alloc(64), stream());
    let data: Vec<u8> = (0..64).collect();
    let mut staged = data.clone();
    assert_eq!(
        unsafe { cuMemcpyHtoDAsync_v2(a, staged.as_ptr().cast(), 64, s) },
        0
    );
    staged.fill(0xEE); // pageable bytes are staged by the call
    d2d(b, a, 64, s);
    sync(s);
    assert_eq!(
        d2h(b, 64),
        data,
        "ordered before the next item of its stream"
    );
    assert_eq!(
        unsafe { cuMemcpyHtoDAsync_v2(a, [6u8; 64].as_ptr().cast(), 64, s) },
        0
    );
    assert_eq!(
        d2h(a, 64),
        data,
        "cuMemcpyDtoH does not wait for a non-blocking stream"
    );
    sync(s);
    assert_eq!(d2h(a, 64), vec![6; 64]);
    let bad = unsafe { cuMemcpyHtoDAsync_v2(a + 1, data.as_ptr().cast(), 64, s) };
    assert_eq!(bad, CUDA_ERROR_INVALID_VALUE);
}

#[test]
fn a_copy_from_pinned_memory_is_synchronous() {
    if !alone("tests::copies::a_copy_from_pinned_memory_is_synchronous") {
        return;
    }
    ctx(0);
    let (a, b, s) = (alloc(64), alloc(64), stream());
    let mut host: Ptr = std::ptr::null_mut();
    assert_eq!(unsafe { cuMemHostAlloc(&mut host, 64, 0) }, 0);
    unsafe { std::ptr::write_bytes(host as *mut u8, 4, 64) };
    assert_eq!(unsafe { cuMemcpyHtoD_v2(a, host, 64) }, 0);
    d2d(b, a, 64, s);
    sync(s);
    assert_eq!(d2h(b, 64), vec![4; 64]);
    assert_eq!(unsafe { cuMemFreeHost(host) }, 0);
}
