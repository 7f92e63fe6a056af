//! What a benchmark's timed loop needs to be checked against: a fault that only graph replays
//! show (`FAKE_NCCL_CORRUPT_IN_GRAPH`), and the live-event count on every collective's trace
//! line.

use super::nccl::{allreduce_all, per_rank_alloc};
use super::*;
use crate::graph::*;
use crate::hooks::{set_override, Hooks};
use crate::nccl_calls::ncclAllReduce;

/// Captures one all-reduce of every rank and returns each rank's executable graph.
fn captured_allreduce(rs: &[Rank], b: &[u64]) -> Vec<Ptr> {
    for k in rs {
        k.on();
        assert_eq!(unsafe { cuStreamBeginCapture_v2(k.stream, 1) }, 0);
    }
    allreduce_all(rs, b, 1);
    rs.iter()
        .map(|k| unsafe {
            k.on();
            let (mut g, mut x) = (std::ptr::null_mut(), std::ptr::null_mut());
            assert_eq!(cuStreamEndCapture(k.stream, &mut g), 0);
            assert_eq!(cuGraphInstantiateWithFlags(&mut x, g, 0), 0);
            assert_eq!(cuGraphDestroy(g), 0);
            x
        })
        .collect()
}

#[test]
fn corrupt_in_graph_hook_corrupts_replays_only() {
    set_override(Some(Hooks {
        corrupt_in_graph: true,
        ..Hooks::default()
    }));
    let rs = ranks(2);
    set_override(None);
    let b = per_rank_alloc(&rs, 4, 1);
    allreduce_all(&rs, &b, 1);
    sync_all(&rs);
    rs[0].on();
    assert_eq!(as_i32(&d2h(b[0], 4)), vec![2], "a direct launch is exact");
    let execs = captured_allreduce(&rs, &b);
    for (k, &x) in rs.iter().zip(&execs) {
        k.on();
        assert_eq!(unsafe { cuGraphLaunch(x, k.stream) }, 0);
    }
    sync_all(&rs);
    rs[0].on();
    assert_eq!(
        as_i32(&d2h(b[0], 4)),
        vec![4 ^ 0x4000_0000],
        "the replay wrote one wrong element into rank 0's output"
    );
    rs[1].on();
    assert_eq!(as_i32(&d2h(b[1], 4)), vec![4]);
    destroy(rs);
}

#[test]
fn replays_are_exact_without_the_hook() {
    let rs = ranks(2);
    let b = per_rank_alloc(&rs, 4, 1);
    let execs = captured_allreduce(&rs, &b);
    for (k, &x) in rs.iter().zip(&execs) {
        k.on();
        assert_eq!(unsafe { cuGraphLaunch(x, k.stream) }, 0);
    }
    sync_all(&rs);
    rs[0].on();
    assert_eq!(as_i32(&d2h(b[0], 4)), vec![2]);
    destroy(rs);
}

#[test]
fn trace_lines_count_the_live_events() {
    let rs = ranks(1);
    let b = per_rank_alloc(&rs, 4, 1);
    let events_field = |lines: &[String]| -> usize {
        let l = lines
            .iter()
            .find(|l| l.starts_with("ncclAllReduce"))
            .unwrap();
        l.rsplit_once("\tevents=").unwrap().1.parse().unwrap()
    };
    let launch = || {
        crate::trace::capture(|| {
            let k = &rs[0];
            k.on();
            ncclAllReduce(ptr(b[0]), ptr(b[0]), 1, 2, 0, k.comm, k.stream);
        })
    };
    let before = events_field(&launch());
    rs[0].on();
    let mut e = std::ptr::null_mut();
    assert_eq!(unsafe { cuEventCreate(&mut e, 0) }, 0);
    // Other tests create and destroy events meanwhile: only this test's own is certain.
    let with_one = events_field(&launch());
    assert_eq!(unsafe { cuEventDestroy_v2(e) }, 0);
    assert!(with_one >= 1, "{before} then {with_one}");
    sync_all(&rs);
    destroy(rs);
}
