//! The double is as strict as NCCL about two things ncclbench got wrong: point-to-point calls
//! to self outside a group (NCCL pairs a send to self with a receive from self within one
//! group and refuses either alone with ncclInvalidUsage; a call outside a group is a group of
//! its own), and two ranks on one GPU (refused at init by 2.5-2.29, and by 2.30+ unless
//! `NCCL_MULTI_RANK_GPU_ENABLE` is set).

use std::sync::{Arc, Barrier};

use super::*;
use crate::comm::set_multi_rank_gpu_override;
use crate::config::set_version_override;
use crate::nccl_calls::{ncclAllReduce, ncclRecv, ncclSend};
use crate::state::*;

#[test]
fn a_send_or_recv_to_self_alone_is_refused_inside_or_outside_a_group() {
    let rs = ranks(1);
    let r = &rs[0];
    let (s, d) = (alloc(16), alloc(16));
    h2d(s, &i32s(&[1, 2, 3, 4]));
    assert_eq!(
        ncclSend(ptr(s), 4, 2, 0, r.comm, r.stream),
        NCCL_INVALID_USAGE
    );
    assert_eq!(
        last_error(),
        "Trying to send to self without a matching recv"
    );
    assert_eq!(
        ncclRecv(ptr(d), 4, 2, 0, r.comm, r.stream),
        NCCL_INVALID_USAGE
    );
    assert_eq!(
        last_error(),
        "Trying to recv to self without a matching send"
    );
    assert_eq!(unsafe { cuStreamQuery(r.stream) }, 0, "nothing was placed");
    assert_eq!(ncclGroupStart(), 0);
    assert_eq!(ncclSend(ptr(s), 4, 2, 0, r.comm, r.stream), 0);
    assert_eq!(ncclGroupEnd(), NCCL_INVALID_USAGE);
    // Paired in one group, the copy happens.
    assert_eq!(ncclGroupStart(), 0);
    assert_eq!(ncclSend(ptr(s), 4, 2, 0, r.comm, r.stream), 0);
    assert_eq!(ncclRecv(ptr(d), 4, 2, 0, r.comm, r.stream), 0);
    assert_eq!(ncclGroupEnd(), 0, "{}", last_error());
    sync(r.stream);
    assert_eq!(as_i32(&d2h(d, 16)), vec![1, 2, 3, 4]);
    destroy(rs);
}

#[test]
fn a_recv_queued_behind_a_send_on_its_stream_never_matches() {
    // One rank per thread, each posting send then recv outside a group: every send waits for
    // a recv that sits behind the peer's own send, as on NCCL (a deadlock).
    let mut id = UniqueId { internal: [0; 128] };
    assert_eq!(unsafe { ncclGetUniqueId(&mut id) }, 0);
    let posted = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|r| {
            let posted = posted.clone();
            std::thread::spawn(move || {
                ctx(r);
                let mut comm = std::ptr::null_mut();
                assert_eq!(ncclCommInitRank(&mut comm, 2, id, r), 0);
                let (s, d) = (alloc(8), alloc(8));
                let st = stream();
                let peer = 1 - r;
                assert_eq!(ncclSend(ptr(s), 2, 2, peer, comm, st), 0);
                assert_eq!(ncclRecv(ptr(d), 2, 2, peer, comm, st), 0);
                posted.wait();
                let busy = unsafe { cuStreamQuery(st) };
                posted.wait();
                assert_eq!(ncclCommAbort(comm), 0);
                (busy, unsafe { cuStreamQuery(st) })
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), (CUDA_ERROR_NOT_READY, 0));
    }
}

/// Two ranks of one communicator on device 0, initialised in one group by this thread; the
/// init calls' and the group end's results, the last error and the comms.
fn two_ranks_on_device_0(version: i32, enabled: Option<bool>) -> ([u32; 3], String, [Ptr; 2]) {
    set_version_override(Some(version));
    set_multi_rank_gpu_override(enabled);
    let mut id = UniqueId { internal: [0; 128] };
    assert_eq!(unsafe { ncclGetUniqueId(&mut id) }, 0);
    ctx(0);
    let mut comms = [std::ptr::null_mut(); 2];
    assert_eq!(ncclGroupStart(), 0);
    let a = ncclCommInitRank(&mut comms[0], 2, id, 0);
    let b = ncclCommInitRank(&mut comms[1], 2, id, 1);
    let end = ncclGroupEnd();
    let text = last_error();
    set_version_override(None);
    set_multi_rank_gpu_override(None);
    ([a, b, end], text, comms)
}

#[test]
fn before_2_30_two_ranks_on_one_gpu_fail_at_the_init_groups_end() {
    let (codes, text, comms) = two_ranks_on_device_0(22105, Some(true));
    assert_eq!(codes, [0, 0, NCCL_INVALID_USAGE]);
    assert_eq!(
        text,
        "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 18000"
    );
    for c in comms {
        let mut e = 0;
        assert_eq!(unsafe { ncclCommGetAsyncError(c, &mut e) }, 0);
        assert_eq!(e, NCCL_INVALID_USAGE, "every rank's init failed");
        assert_eq!(ncclCommAbort(c), 0);
    }
}

#[test]
fn from_2_30_two_ranks_on_one_gpu_need_nccl_multi_rank_gpu_enable() {
    let (codes, text, comms) = two_ranks_on_device_0(23203, Some(false));
    assert_eq!(codes, [0, 0, NCCL_INVALID_USAGE]);
    assert!(text.contains("Set NCCL_MULTI_RANK_GPU_ENABLE=1"), "{text}");
    for c in comms {
        assert_eq!(ncclCommAbort(c), 0);
    }

    let (codes, _, comms) = two_ranks_on_device_0(23000, Some(true));
    assert_eq!(codes, [0, 0, 0]);
    let bufs: Vec<u64> = (0..2)
        .map(|r| {
            let p = alloc(8);
            h2d(p, &i32s(&[r + 1, 10]));
            p
        })
        .collect();
    let streams = [stream(), stream()];
    assert_eq!(ncclGroupStart(), 0);
    for ((c, &p), &st) in comms.iter().zip(&bufs).zip(&streams) {
        assert_eq!(ncclAllReduce(ptr(p), ptr(p), 2, 2, 0, *c, st), 0);
    }
    assert_eq!(ncclGroupEnd(), 0, "{}", last_error());
    streams.iter().for_each(|&s| sync(s));
    assert_eq!(as_i32(&d2h(bufs[1], 8)), vec![3, 20]);
    for c in comms {
        assert_eq!(ncclCommDestroy(c), 0);
    }
}

#[test]
fn an_ungrouped_init_on_a_used_gpu_fails_itself() {
    set_version_override(Some(22800));
    let mut id = UniqueId { internal: [0; 128] };
    assert_eq!(unsafe { ncclGetUniqueId(&mut id) }, 0);
    ctx(1);
    let mut comms = [std::ptr::null_mut(); 2];
    assert_eq!(ncclCommInitRank(&mut comms[0], 2, id, 0), 0);
    assert_eq!(
        ncclCommInitRank(&mut comms[1], 2, id, 1),
        NCCL_INVALID_USAGE
    );
    assert!(
        last_error().contains("both on CUDA device 19000"),
        "{}",
        last_error()
    );
    set_version_override(None);
    for c in comms {
        assert_eq!(ncclCommAbort(c), 0);
    }
}
