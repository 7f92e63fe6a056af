//! NCCL rules: group strictness, argument checks, version gating, config, init, errors.

use super::*;
use crate::config::set_version_override;
use crate::nccl_calls::*;
use crate::register::*;
use crate::state::*;

pub(super) fn allreduce_all(rs: &[Rank], bufs: &[u64], count: usize) {
    grouped(rs, |r, k| {
        ncclAllReduce(ptr(bufs[r]), ptr(bufs[r]), count, 2, 0, k.comm, k.stream)
    });
}

pub(super) fn per_rank_alloc(rs: &[Rank], bytes: usize, fill: i32) -> Vec<u64> {
    rs.iter()
        .map(|k| {
            k.on();
            let p = alloc(bytes);
            h2d(p, &i32s(&vec![fill; bytes / 4]));
            p
        })
        .collect()
}

#[test]
fn ungrouped_calls_from_a_thread_owning_two_ranks_are_refused() {
    let rs = ranks(2);
    let b = per_rank_alloc(&rs, 16, 1);
    rs[0].on();
    assert_eq!(
        ncclAllReduce(ptr(b[0]), ptr(b[0]), 4, 2, 0, rs[0].comm, rs[0].stream),
        NCCL_INVALID_USAGE
    );
    assert!(
        last_error().contains("would deadlock real NCCL"),
        "{}",
        last_error()
    );
    assert_eq!(ncclGroupEnd(), NCCL_INVALID_USAGE);
    // Nested groups place the ops only at the outermost end.
    assert_eq!(ncclGroupStart(), 0);
    allreduce_all(&rs, &b, 4);
    assert_eq!(
        unsafe { cuStreamQuery(rs[0].stream) },
        0,
        "nothing placed yet"
    );
    assert_eq!(ncclGroupEnd(), 0);
    sync_all(&rs);
    assert_eq!(as_i32(&d2h(b[1], 16)), vec![2; 4]);
    destroy(rs);
}

#[test]
fn one_rank_per_thread_needs_no_group() {
    let mut id = UniqueId { internal: [0; 128] };
    assert_eq!(unsafe { ncclGetUniqueId(&mut id) }, 0);
    let threads: Vec<_> = (0..2)
        .map(|r| {
            std::thread::spawn(move || {
                ctx(r);
                let mut comm = std::ptr::null_mut();
                assert_eq!(ncclCommInitRank(&mut comm, 2, id, r), 0);
                let p = alloc(8);
                h2d(p, &i32s(&[r + 1, 5]));
                assert_eq!(
                    ncclAllReduce(ptr(p), ptr(p), 2, 2, 0, comm, std::ptr::null_mut()),
                    0,
                    "{}",
                    last_error()
                );
                sync(std::ptr::null_mut());
                let out = as_i32(&d2h(p, 8));
                assert_eq!(ncclCommDestroy(comm), 0);
                out
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), vec![3, 10]);
    }
}

#[test]
fn buffers_are_checked_against_allocations_of_the_comm_device() {
    let rs = ranks(2);
    rs[0].on();
    let small = alloc(12);
    rs[1].on();
    let other_dev = alloc(16);
    let big = alloc(16);
    assert_eq!(ncclGroupStart(), 0);
    rs[0].on();
    assert_eq!(
        ncclAllReduce(ptr(small), ptr(small), 4, 2, 0, rs[0].comm, rs[0].stream),
        NCCL_INVALID_ARGUMENT
    );
    let e = last_error();
    assert!(
        e.contains("ncclAllReduce: rank 0: sendbuff") && e.contains("by 4 bytes"),
        "{e}"
    );
    assert_eq!(
        ncclAllReduce(
            ptr(other_dev),
            ptr(small),
            1,
            2,
            0,
            rs[0].comm,
            rs[0].stream
        ),
        NCCL_INVALID_ARGUMENT
    );
    assert!(last_error().contains("is on device 1"), "{}", last_error());
    assert_eq!(
        ncclAllGather(ptr(small), ptr(small), 2, 2, rs[0].comm, rs[0].stream),
        NCCL_INVALID_ARGUMENT
    );
    assert!(last_error().contains("recvbuff"), "{}", last_error());
    assert_eq!(
        ncclAllReduce(ptr(small), ptr(small), 1, 12, 0, rs[0].comm, rs[0].stream),
        NCCL_INVALID_ARGUMENT
    );
    assert_eq!(
        ncclAllReduce(ptr(small), ptr(small), 1, 2, 9, rs[0].comm, rs[0].stream),
        NCCL_INVALID_ARGUMENT
    );
    assert_eq!(
        ncclBroadcast(ptr(small), ptr(small), 1, 2, 2, rs[0].comm, rs[0].stream),
        NCCL_INVALID_ARGUMENT
    );
    assert_eq!(
        ncclAllReduce(ptr(small), ptr(small), 1, 2, 0, rs[0].comm, rs[1].stream),
        NCCL_INVALID_ARGUMENT
    );
    assert!(
        last_error().contains("stream is on device 1"),
        "{}",
        last_error()
    );
    assert_eq!(
        ncclAllReduce(
            ptr(big),
            ptr(big),
            1,
            2,
            0,
            std::ptr::null_mut(),
            rs[1].stream
        ),
        NCCL_INVALID_ARGUMENT
    );
    // Reduce's recvbuff matters on the root only.
    rs[1].on();
    assert_eq!(
        ncclReduce(
            ptr(big),
            std::ptr::null_mut(),
            4,
            2,
            0,
            0,
            rs[1].comm,
            rs[1].stream
        ),
        0
    );
    rs[0].on();
    assert_eq!(
        ncclReduce(ptr(small), ptr(small), 3, 2, 0, 0, rs[0].comm, rs[0].stream),
        0
    );
    assert_eq!(ncclGroupEnd(), 0);
    destroy(rs);
}

#[test]
fn version_gates_dtypes_ops_and_entry_points() {
    let rs = ranks(2);
    let b = per_rank_alloc(&rs, 16, 1);
    rs[0].on();
    set_version_override(Some(22300));
    let mut v = 0;
    assert_eq!(unsafe { crate::nccl_api::ncclGetVersion(&mut v) }, 0);
    assert_eq!(v, 22300);
    assert_eq!(ncclGroupStart(), 0);
    assert_eq!(
        ncclAllReduce(ptr(b[0]), ptr(b[0]), 1, 10, 0, rs[0].comm, rs[0].stream),
        NCCL_INVALID_ARGUMENT
    );
    assert!(last_error().contains("2.24.0"), "{}", last_error());
    assert_eq!(
        ncclAlltoAll(ptr(b[0]), ptr(b[0]), 1, 2, rs[0].comm, rs[0].stream),
        NCCL_INVALID_USAGE
    );
    let mut h = std::ptr::null_mut();
    assert_eq!(
        ncclCommWindowRegister(rs[0].comm, ptr(b[0]), 16, &mut h, 0),
        NCCL_INVALID_USAGE
    );
    assert_eq!(ncclCommRegister(rs[0].comm, ptr(b[0]), 16, &mut h), 0);
    assert_eq!(ncclCommDeregister(rs[0].comm, h), 0);
    assert_eq!(ncclCommDeregister(rs[0].comm, h), NCCL_INVALID_ARGUMENT);
    set_version_override(Some(20900));
    assert_eq!(
        ncclAllReduce(ptr(b[0]), ptr(b[0]), 1, 9, 0, rs[0].comm, rs[0].stream),
        NCCL_INVALID_ARGUMENT
    );
    assert_eq!(
        ncclAllReduce(ptr(b[0]), ptr(b[0]), 1, 2, 4, rs[0].comm, rs[0].stream),
        NCCL_INVALID_ARGUMENT
    );
    let mut p = std::ptr::null_mut();
    assert_eq!(unsafe { ncclMemAlloc(&mut p, 64) }, NCCL_INVALID_USAGE);
    let mut op = 0;
    let s = 1i32;
    let code = unsafe {
        ncclRedOpCreatePreMulSum(
            &mut op,
            (&s as *const i32).cast_mut().cast(),
            2,
            1,
            rs[0].comm,
        )
    };
    assert_eq!(code, NCCL_INVALID_USAGE);
    assert_eq!(ncclGroupEnd(), 0);
    set_version_override(None);
    assert_eq!(unsafe { ncclMemAlloc(&mut p, 64) }, 0);
    assert_eq!(ncclMemFree(p), 0);
    assert_eq!(ncclMemFree(p), NCCL_INVALID_ARGUMENT);
    destroy(rs);
}

#[test]
fn config_init_validates_and_records_the_cta_policy() {
    let mut cfg = nccl_sys_like_config();
    let mut id = UniqueId { internal: [0; 128] };
    assert_eq!(unsafe { ncclGetUniqueId(&mut id) }, 0);
    ctx(0);
    let mut comm = std::ptr::null_mut();
    let lines = crate::trace::capture(|| {
        cfg[15] = 1; // CTAPolicy (int index 15 = byte offset 60)
        let code = ncclCommInitRankConfig(&mut comm, 1, id, 0, cfg.as_mut_ptr().cast());
        assert_eq!(code, 0, "{}", last_error());
    });
    assert_eq!(
        lines[0],
        "ncclCommInitRankConfig\trank=0\tnranks=1\tdev=0\tcta_policy=1\tgroup=0"
    );
    assert_eq!(
        state().comms[&unhandle(TAG_COMM, comm).unwrap()].cta_policy,
        Some(1)
    );
    cfg[2] = 0; // magic
    let mut other = std::ptr::null_mut();
    assert_eq!(
        ncclCommInitRankConfig(&mut other, 1, id, 0, cfg.as_mut_ptr().cast()),
        NCCL_INVALID_ARGUMENT
    );
    assert_eq!(
        ncclCommInitRank(&mut other, 1, id, 0),
        NCCL_INVALID_ARGUMENT,
        "rank 0 joined twice"
    );
    assert_eq!(
        ncclCommInitRank(&mut other, 2, id, 5),
        NCCL_INVALID_ARGUMENT
    );
    let (mut n, mut d, mut r) = (0, 0, 0);
    assert_eq!(
        ncclCommCount(comm, &mut n)
            | ncclCommCuDevice(comm, &mut d)
            | ncclCommUserRank(comm, &mut r),
        0
    );
    assert_eq!((n, d, r), (1, 0, 0));
    assert_eq!(
        ncclCommCount(comm, std::ptr::null_mut()),
        NCCL_INVALID_ARGUMENT
    );
    assert_eq!(ncclCommFinalize(comm), 0);
    assert_eq!(ncclCommDestroy(comm), 0);
}

/// `NCCL_CONFIG_INITIALIZER` of a 2.32 header as 30 ints (120 bytes).
fn nccl_sys_like_config() -> Vec<i32> {
    let mut c = vec![i32::MIN; 30];
    c[0] = 120;
    c[1] = 0;
    c[2] = 0xcafe_beef_u32 as i32;
    c[3] = 23203;
    for i in [8, 9, 12, 13] {
        c[i] = 0; // the two pointers
    }
    c
}

#[test]
fn init_all_makes_one_thread_own_every_rank() {
    let mut comms = [std::ptr::null_mut(); 3];
    assert_eq!(
        unsafe { ncclCommInitAll(comms.as_mut_ptr(), 3, std::ptr::null()) },
        0
    );
    let mut d = 0;
    assert_eq!(ncclCommCuDevice(comms[2], &mut d), 0);
    assert_eq!(d, 2);
    ctx(0);
    let p = alloc(4);
    assert_eq!(
        ncclBroadcast(ptr(p), ptr(p), 1, 2, 0, comms[0], std::ptr::null_mut()),
        NCCL_INVALID_USAGE
    );
    for c in comms {
        assert_eq!(ncclCommDestroy(c), 0);
    }
}

#[test]
fn error_strings_cover_every_result() {
    for code in 0..=8 {
        let s = unsafe { CStr::from_ptr(ncclGetErrorString(code)) };
        assert!(!s.to_bytes().is_empty());
    }
    assert_eq!(
        unsafe { CStr::from_ptr(ncclGetErrorString(6)) }
            .to_str()
            .unwrap(),
        "remote process exited or there was a network error"
    );
}
