//! The packed record against its fields: its size, and every field read back as given.

use super::{Op, Origin, Parts, Record, Size, SizeRule, Source, Timing};
use crate::analysis::inspector::Arena;
use crate::core::collective::Collective;
use std::path::PathBuf;
use std::sync::Arc;

#[test]
fn a_record_is_64_bytes_of_plain_data() {
    // A dump of a few GiB is millions of records: every 8 bytes here is tens of megabytes
    // faulted in, copied and freed.
    assert_eq!(std::mem::size_of::<Record<'_>>(), 64);
    assert!(!std::mem::needs_drop::<Record<'_>>());
}

#[test]
fn every_field_reads_back_as_given_and_a_shape_s_next_record_too() {
    let arena = Arena::new();
    let source = arena.source(Source {
        file: Arc::new(PathBuf::from("f.log")),
        origin: Origin::Json,
        comm_id: "0xa".into(),
        comm_name: None,
        rank: Some(3),
        nranks: 8,
        nnodes: None,
        host: None,
        pid: None,
        gpu: None,
        algo_proto: None,
        format_version: None,
    });
    let name = arena.name("SendRecv");
    let ops = [
        Op::Other(name),
        Op::Send {
            peer: Some(u32::MAX),
        },
        Op::Recv { peer: None },
        Op::Recv { peer: Some(0) },
    ]
    .into_iter()
    .chain(Collective::ALL.map(Op::Collective));
    let timings = [None, Some(Timing::Other(arena.name("gpu_clock")))]
        .into_iter()
        .chain([Timing::KernelGpu, Timing::KernelCpu, Timing::CollectiveCpu].map(Some));
    let mut n = 0;
    for (i, (op, timing)) in ops.zip(timings.cycle()).enumerate() {
        for (size, size_rule) in [Size::Exact(0), Size::Bucket { lo: 4, hi: 8 }]
            .into_iter()
            .zip(
                [SizeRule::AsWritten, SizeRule::TimesRanks, SizeRule::Unknown]
                    .into_iter()
                    .cycle()
                    .skip(i),
            )
        {
            let parts = Parts {
                source,
                op,
                seq: (i % 2 == 0).then_some(u64::MAX),
                size,
                size_rule,
                time_us: 1.5 + i as f64,
                timing,
                busbw_gbs: (i % 3 != 0).then_some(0.25),
                timestamp_us: (i % 3 != 1).then_some(i as u64),
            };
            let r = Record::new(parts, &arena);
            assert_eq!(r.parts(), parts);
            n += 1;
            if let Size::Exact(_) = size {
                let peer = Some(7);
                let next = r.with_numbers(peer, 9, SizeRule::Unknown, None, 2.0, None, Some(1));
                let want_peer = match op {
                    Op::Send { .. } => Op::Send { peer },
                    Op::Recv { .. } => Op::Recv { peer },
                    op => op,
                };
                let want = Parts {
                    op: want_peer,
                    seq: None,
                    size: Size::Exact(9),
                    size_rule: SizeRule::Unknown,
                    time_us: 2.0,
                    busbw_gbs: None,
                    timestamp_us: Some(1),
                    ..parts
                };
                assert_eq!(next.parts(), want);
            }
        }
    }
    assert_eq!(n, 2 * (4 + Collective::ALL.len()));
    let nan = Parts {
        busbw_gbs: Some(f64::NAN),
        source,
        op: Op::Send { peer: None },
        seq: None,
        size: Size::Exact(1),
        size_rule: SizeRule::AsWritten,
        time_us: 1.0,
        timing: None,
        timestamp_us: None,
    };
    assert_eq!(Record::new(nan, &arena).busbw_gbs(), None);
}
