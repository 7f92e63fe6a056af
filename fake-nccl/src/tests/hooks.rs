//! Fault hooks, mismatch detection, graph replay of collectives, traces and debug logs.

use super::nccl::{allreduce_all, per_rank_alloc};
use super::*;
use crate::config::set_version_override;
use crate::graph::*;
use crate::hooks::{set_override, Hooks};
use crate::nccl_calls::*;
use crate::state::*;

#[test]
fn hang_hook_keeps_streams_busy_until_abort() {
    set_override(Some(Hooks {
        hang_at: Some((1, Some(1))),
        ..Hooks::default()
    }));
    let rs = ranks(2);
    set_override(None);
    let b = per_rank_alloc(&rs, 4, 1);
    allreduce_all(&rs, &b, 1);
    allreduce_all(&rs, &b, 1);
    rs[0].on();
    assert_eq!(unsafe { cuStreamQuery(rs[0].stream) }, CUDA_ERROR_NOT_READY);
    assert_eq!(as_i32(&d2h(b[0], 4)), vec![2], "op 0 ran, op 1 hangs");
    let mut err = 9;
    assert_eq!(unsafe { ncclCommGetAsyncError(rs[0].comm, &mut err) }, 0);
    assert_eq!(err, 0);
    for k in &rs {
        assert_eq!(ncclCommAbort(k.comm), 0);
    }
    for k in &rs {
        k.on();
        assert_eq!(unsafe { cuStreamQuery(k.stream) }, 0);
    }
    assert_eq!(ncclCommDestroy(rs[0].comm), NCCL_INVALID_ARGUMENT);
}

#[test]
fn async_error_hook_reports_a_remote_error() {
    set_override(Some(Hooks {
        async_error_at: Some(0),
        ..Hooks::default()
    }));
    let rs = ranks(2);
    set_override(None);
    let b = per_rank_alloc(&rs, 4, 1);
    allreduce_all(&rs, &b, 1);
    let mut err = 0;
    assert_eq!(unsafe { ncclCommGetAsyncError(rs[1].comm, &mut err) }, 0);
    assert_eq!(err, NCCL_REMOTE_ERROR);
    rs[0].on();
    assert_eq!(unsafe { cuStreamQuery(rs[0].stream) }, CUDA_ERROR_NOT_READY);
    for k in &rs {
        assert_eq!(ncclCommAbort(k.comm), 0);
    }
}

#[test]
fn corrupt_hook_changes_one_element_of_rank_0() {
    set_override(Some(Hooks {
        corrupt_at: Some((0, None)),
        ..Hooks::default()
    }));
    let rs = ranks(2);
    set_override(None);
    let b = per_rank_alloc(&rs, 8, 1);
    allreduce_all(&rs, &b, 2);
    sync_all(&rs);
    rs[0].on();
    assert_eq!(as_i32(&d2h(b[0], 8)), vec![2 ^ 0x4000_0000, 2]);
    rs[1].on();
    assert_eq!(as_i32(&d2h(b[1], 8)), vec![2, 2]);
    destroy(rs);
}

#[test]
fn mismatched_partners_get_an_async_error() {
    let rs = ranks(2);
    let b = per_rank_alloc(&rs, 16, 1);
    grouped(&rs, |r, k| {
        ncclAllReduce(ptr(b[r]), ptr(b[r]), 1 + r, 2, 0, k.comm, k.stream)
    });
    sync_all(&rs);
    let mut err = 0;
    assert_eq!(unsafe { ncclCommGetAsyncError(rs[0].comm, &mut err) }, 0);
    assert_eq!(err, NCCL_INVALID_USAGE);
    assert!(
        last_error().contains("collective mismatch"),
        "{}",
        last_error()
    );
    destroy(rs);
}

#[test]
fn captured_collectives_replay_with_fresh_sequence_numbers() {
    let rs = ranks(2);
    let b = per_rank_alloc(&rs, 4, 1);
    for k in &rs {
        k.on();
        assert_eq!(unsafe { cuStreamBeginCapture_v2(k.stream, 1) }, 0);
    }
    allreduce_all(&rs, &b, 1);
    let execs: Vec<Ptr> = rs
        .iter()
        .map(|k| unsafe {
            k.on();
            let (mut g, mut x) = (std::ptr::null_mut(), std::ptr::null_mut());
            assert_eq!(cuStreamEndCapture(k.stream, &mut g), 0);
            assert_eq!(cuGraphInstantiateWithFlags(&mut x, g, 0), 0);
            assert_eq!(cuGraphDestroy(g), 0);
            x
        })
        .collect();
    sync_all(&rs);
    assert_eq!(as_i32(&d2h(b[1], 4)), vec![1], "capture runs nothing");
    for _ in 0..3 {
        for (k, &x) in rs.iter().zip(&execs) {
            k.on();
            assert_eq!(unsafe { cuGraphLaunch(x, k.stream) }, 0);
        }
    }
    sync_all(&rs);
    assert_eq!(as_i32(&d2h(b[1], 4)), vec![8]);
    destroy(rs);
}

#[test]
fn trace_lines_name_allocations_streams_and_group_depth() {
    let rs = ranks(2);
    let b = per_rank_alloc(&rs, 256, 1);
    let ids: Vec<u64> = b.iter().map(|&p| state().alloc_at(p).unwrap().id).collect();
    let lines = crate::trace::capture(|| {
        grouped(&rs, |r, k| {
            ncclAllReduce(ptr(b[r] + 128), ptr(b[r] + 128), 8, 7, 0, k.comm, k.stream)
        });
    });
    let sid = crate::trace::describe_stream(rs[0].stream);
    assert_eq!(lines[0], "ncclGroupStart\tgroup=0");
    // The last field, the process's live events, depends on the tests running beside this one.
    assert_eq!(
        lines[1].rsplit_once("\tevents=").map(|(line, _)| line),
        Some(format!("ncclAllReduce\trank=0\tnranks=2\tdev=0\tsend=a{0}+128\trecv=a{0}+128\tcount=8\tdtype=7\top=0\troot=-1\tpeer=-1\tstream={sid}\tgroup=1", ids[0]).as_str())
    );
    assert_eq!(lines[3], "ncclGroupEnd\tgroup=1");
    sync_all(&rs);
    let lines = crate::trace::capture(|| {
        let mut op = 0;
        let s = 2.0f32;
        unsafe {
            ncclRedOpCreatePreMulSum(
                &mut op,
                (&s as *const f32).cast_mut().cast(),
                7,
                1,
                rs[1].comm,
            )
        };
        rs[1].on();
        ncclSend(std::ptr::null(), 0, 7, 0, rs[1].comm, std::ptr::null_mut());
        ncclReduce(
            ptr(b[1]),
            ptr(b[1]),
            1,
            7,
            op,
            0,
            rs[1].comm,
            std::ptr::null_mut(),
        );
    });
    assert!(lines[0].starts_with("ncclRedOpCreatePreMulSum\trank=1\tnranks=2\tdev=1\tdtype=7\tresidence=1\tscalar=2.0\top=5"), "{}", lines[0]);
    assert!(
        lines[1].contains("send=null\trecv=null\tcount=0")
            && lines[1].contains("peer=0\tstream=null\tgroup=0"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains("op=premulsum(2.0)\troot=0"),
        "{}",
        lines[2]
    );
    let lines = crate::trace::capture(|| {
        for k in rs {
            ncclCommDestroy(k.comm);
        }
    });
    assert_eq!(
        lines[1],
        "ncclCommDestroy\trank=1\tnranks=2\tdev=1\tgroup=0"
    );
}

#[test]
fn debug_log_prints_version_init_coll_and_tuning_lines() {
    let settings = crate::debuglog::Settings {
        info: true,
        subsys: Some(vec!["INIT".into(), "COLL".into(), "TUNING".into()]),
        file: None,
    };
    let mut rs = Vec::new();
    let lines = crate::debuglog::capture(settings.clone(), || rs = ranks(2));
    assert!(
        lines[0].ends_with("NCCL INFO NCCL version 2.32.3+cuda12.4"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].ends_with("NCCL INFO NCCL git version fake 0000000"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains(" [0] NCCL INFO ncclCommInitRank comm 0x")
            && lines[2].contains("busId 18000 commId 0x"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains(" [1] NCCL INFO ncclCommInitRank comm 0x")
            && lines[3].contains("rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 19000"),
        "{}",
        lines[3]
    );
    let b = per_rank_alloc(&rs, 1 << 19, 1);
    let all = crate::debuglog::capture(settings.clone(), || {
        grouped(&rs, |r, k| {
            ncclAllGather(ptr(b[r]), ptr(b[r]), 4096, 2, k.comm, k.stream)
        });
    });
    // The first call connects each rank's ring channel (NCCL 2.22+ connects lazily).
    let (connect, lines): (Vec<String>, Vec<String>) = all
        .into_iter()
        .partition(|l| l.contains("NCCL INFO Channel ") || l.contains("NCCL INFO Connected "));
    assert_eq!(connect.len(), 4, "{connect:?}");
    assert!(
        connect[0].ends_with(" [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"),
        "{}",
        connect[0]
    );
    assert!(
        connect[1].ends_with(" [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1"),
        "{}",
        connect[1]
    );
    assert!(
        connect[2].ends_with(" [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM"),
        "{}",
        connect[2]
    );
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[0].contains("NCCL INFO AllGather: opCount 0 sendbuff 0x")
            && lines[0].contains("count 4096 datatype 2 op 0 root 0 comm 0x"),
        "{}",
        lines[0]
    );
    assert!(
        lines[2].ends_with(
            "NCCL INFO AllGather: 16384 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..3}"
        ),
        "{}",
        lines[2]
    );
    set_version_override(Some(22300));
    let lines = crate::debuglog::capture(settings, || {
        grouped(&rs, |r, k| {
            ncclAllGather(ptr(b[r]), ptr(b[r]), 4096 * 8, 2, k.comm, k.stream)
        });
    });
    set_version_override(None);
    assert!(
        lines[2].ends_with("NCCL INFO AllGather: 262144 Bytes -> Algo 1 proto 1 time 141.072000"),
        "{}",
        lines[2]
    );
    sync_all(&rs);
    destroy(rs);
}
