//! Queue behaviour: ordering, waiting, timeouts, events, graphs, groups, failures, shutdown,
//! and the facts the backend reports about itself.

use crate::bench::backend::host::{HostBackend, HEADER_LINE};
use crate::bench::backend::{Backend, Buf, BufPtr, Call, EventId, GraphId, RankArgs};
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;
use std::time::Instant;

/// Elements per rank in the ring tests.
const C: usize = 4;

/// An in-place sendrecv of `C` int32s: every call moves each rank's block one rank on.
fn ring(n: usize) -> Call {
    let at = BufPtr {
        buf: Buf::Recv,
        offset: 8,
    };
    Call {
        coll: Collective::SendRecv,
        dtype: DataType::Int32,
        op: RedOp::Sum,
        root: 0,
        count: C,
        traffic: Default::default(),
        ranks: vec![RankArgs { send: at, recv: at }; n],
    }
}

/// A backend whose rank r holds `C` copies of r at offset 8 of its receive buffer.
fn ring_backend(n: usize) -> HostBackend {
    let mut be = HostBackend::new(n).unwrap();
    be.allocate(0, 8 + 4 * C).unwrap();
    for r in 0..n {
        be.fill(r, Buf::Recv, 8, 4 * C, &mut |b| {
            b.chunks_exact_mut(4)
                .for_each(|e| e.copy_from_slice(&(r as i32).to_le_bytes()))
        })
        .unwrap();
    }
    be
}

/// Which rank's block each rank holds now.
fn owners(be: &mut HostBackend) -> Vec<i32> {
    let n = be.info().nranks;
    (0..n)
        .map(|r| {
            let mut v = Vec::new();
            be.inspect(r, Buf::Recv, 8, 4 * C, &mut |b| {
                v = b
                    .chunks_exact(4)
                    .map(|e| i32::from_le_bytes(e.try_into().unwrap()))
                    .collect()
            })
            .unwrap();
            assert!(v.iter().all(|&x| x == v[0]), "rank {r} holds a mixed block");
            v[0]
        })
        .collect()
}

/// The owners after the ring has turned `k` times.
fn turned(n: usize, k: usize) -> Vec<i32> {
    (0..n).map(|r| ((r + n * k - k) % n) as i32).collect()
}

#[test]
fn launches_run_in_order_and_one_wait_drains_them() {
    let mut be = ring_backend(5);
    for _ in 0..3 {
        be.launch(&ring(5)).unwrap();
    }
    be.wait(None).unwrap();
    assert_eq!(owners(&mut be), turned(5, 3));
}

#[test]
fn graph_replay_runs_the_captured_calls_each_time_and_capture_runs_nothing() {
    let mut be = ring_backend(8);
    be.begin_capture().unwrap();
    be.launch(&ring(8)).unwrap();
    be.launch(&ring(8)).unwrap();
    let g = be.end_capture().unwrap();
    be.wait(None).unwrap();
    assert_eq!(owners(&mut be), turned(8, 0));
    for _ in 0..3 {
        be.launch_graph(g).unwrap();
    }
    be.wait(None).unwrap();
    assert_eq!(owners(&mut be), turned(8, 6));
    be.destroy_graphs().unwrap();
    assert!(be.launch_graph(g).is_err());
    assert!(be.launch_graph(GraphId(99)).is_err());
    assert!(be.end_capture().is_err());
}

#[test]
fn a_wait_past_its_deadline_times_out_and_a_later_wait_succeeds() {
    let mut be = ring_backend(3);
    let gate = be.hold_queues();
    be.launch(&ring(3)).unwrap();
    let err = be.wait(Some(Instant::now())).unwrap_err();
    assert!(matches!(err, Error::Timeout { seconds: 0, .. }), "{err:?}");
    gate.open();
    be.wait(None).unwrap();
    assert_eq!(owners(&mut be), turned(3, 1));
}

#[test]
fn events_are_ordered_and_unfinished_events_cannot_be_timed() {
    let mut be = ring_backend(4);
    let gate = be.hold_queues();
    let e0 = be.record_event().unwrap();
    be.launch(&ring(4)).unwrap();
    let e1 = be.record_event().unwrap();
    be.launch(&ring(4)).unwrap();
    let e2 = be.record_event().unwrap();
    assert!(be.event_elapsed(e0, e1).is_err(), "still held");
    gate.open();
    be.wait(None).unwrap();
    let (d1, d2) = (
        be.event_elapsed(e0, e1).unwrap(),
        be.event_elapsed(e0, e2).unwrap(),
    );
    assert!(d2 >= d1, "{d2:?} < {d1:?}");
    assert!(be.event_elapsed(e0, EventId(1000)).is_err());
}

#[test]
fn released_events_are_reused_and_their_ids_refused_until_recorded_again() {
    let mut be = ring_backend(2);
    be.reserve_events(2).unwrap();
    let (e0, e1) = (be.record_event().unwrap(), be.record_event().unwrap());
    be.wait(None).unwrap();
    assert!(be.event_elapsed(e0, e1).is_ok());
    be.release_events().unwrap();
    assert!(be.event_elapsed(e0, e1).is_err(), "released");
    // The next section gets the same events back, unreached until its records run.
    let gate = be.hold_queues();
    assert_eq!(be.record_event().unwrap(), e0);
    assert_eq!(be.record_event().unwrap(), e1);
    assert!(be.event_elapsed(e0, e1).is_err(), "old marks are gone");
    gate.open();
    be.wait(None).unwrap();
    assert!(be.event_elapsed(e0, e1).is_ok());
    // Past the reservation a record still works (it makes a new event).
    assert_eq!(be.record_event().unwrap(), EventId(2));
}

#[test]
fn a_worker_failure_is_returned_by_the_next_wait_and_work_continues() {
    let mut be = ring_backend(3);
    be.begin_capture().unwrap();
    be.launch(&ring(3)).unwrap();
    let g = be.end_capture().unwrap();
    // The recorded call no longer fits the new, smaller buffers.
    be.allocate(0, 8).unwrap();
    be.launch_graph(g).unwrap();
    assert!(matches!(be.wait(None), Err(Error::Backend(_))));
    be.wait(None).unwrap();
    be.allocate(0, 8 + 4 * C).unwrap();
    be.launch(&ring(3)).unwrap();
    be.wait(None).unwrap();
}

#[test]
fn launch_rejects_calls_it_cannot_run() {
    let mut be = ring_backend(3);
    let mut c = ring(3);
    c.count = C + 1;
    assert!(
        matches!(be.launch(&c), Err(Error::Backend(_))),
        "out of bounds"
    );
    let mut c = ring(3);
    c.ranks.pop();
    assert!(
        matches!(be.launch(&c), Err(Error::Backend(_))),
        "rank count"
    );
    let mut c = ring(3);
    c.coll = Collective::Hypercube;
    c.count = 1;
    assert!(
        matches!(be.launch(&c), Err(Error::Usage(_))),
        "3 is no power of 2"
    );
    let mut c = ring(3);
    c.coll = Collective::Broadcast;
    c.root = 3;
    assert!(matches!(be.launch(&c), Err(Error::Usage(_))), "root");
    assert!(be.fill(3, Buf::Send, 0, 0, &mut |_| ()).is_err());
    assert!(be.inspect(0, Buf::Recv, 8, 4 * C + 1, &mut |_| ()).is_err());
    assert!(matches!(HostBackend::new(0), Err(Error::Usage(_))));
}

#[test]
fn groups_nest_and_an_unmatched_end_is_an_error() {
    let mut be = ring_backend(2);
    be.group_start().unwrap();
    be.group_start().unwrap();
    be.launch(&ring(2)).unwrap();
    be.group_end().unwrap();
    be.launch(&ring(2)).unwrap();
    be.group_end().unwrap();
    be.wait(None).unwrap();
    assert_eq!(owners(&mut be), turned(2, 2));
    assert!(be.group_end().is_err());
}

#[test]
fn dropping_with_work_queued_returns() {
    let mut be = HostBackend::new(4).unwrap();
    be.allocate(1 << 20, 1 << 20).unwrap();
    let at = |buf| BufPtr { buf, offset: 0 };
    let call = Call {
        coll: Collective::AllReduce,
        dtype: DataType::Float,
        op: RedOp::Sum,
        root: 0,
        count: 1 << 18,
        traffic: Default::default(),
        ranks: vec![
            RankArgs {
                send: at(Buf::Send),
                recv: at(Buf::Recv)
            };
            4
        ],
    };
    for _ in 0..200 {
        be.launch(&call).unwrap();
    }
    drop(be);
}

#[test]
fn info_and_devices_describe_local_threads() {
    let be = HostBackend::new(3).unwrap();
    let info = be.info();
    assert_eq!(
        (info.name, info.nranks, info.first_rank, info.local_ranks),
        (crate::result::BackendKind::Host, 3, 0, 3)
    );
    assert_eq!(
        info.header_lines,
        vec![
            "# backend: host (ranks are threads of this process, buffers in host memory; times are NOT NCCL's)",
            "# verify: host (buffers in host memory)"
        ]
    );
    assert_eq!(info.header_lines[0], HEADER_LINE);
    assert_eq!((info.nccl_headers, info.nccl_library), (None, None));
    let devs = be.devices();
    assert_eq!(devs.len(), 3);
    for (i, d) in devs.iter().enumerate() {
        assert_eq!(
            (d.rank, d.group, d.device, d.pci),
            (i, 0, i as i32, (0, 0, 0))
        );
        assert_eq!(d.name, "host-thread");
        assert_eq!(d.pid, std::process::id());
        assert!(!d.hostname.is_empty() && !d.hostname.contains('.'));
    }
    assert!(be.supports(DataType::F8e5m2, RedOp::MulSum));
}
