//! Hand-built run data shared by the sink tests: an example run in nccl-tests 2.19.6's layout
//! with invented numbers (8 ranks on one node, all_reduce float sum, two rows; its text output
//! is `REFERENCE` in `text/tests.rs`) and a driver that feeds it through a sink's hooks in the
//! order the runner calls them.

use crate::bench::backend::DeviceInfo;
use crate::bench::output::Sink;
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::op::RedOp;
use crate::result::{
    BackendKind, IterStats, Measurement, Placement, Row, RowKey, RunMeta, Step, Summary,
};

/// The example's run: 1 thread, 8 GPUs, 8 B to 128 MiB by factor 2.
pub fn meta() -> RunMeta {
    let devices = (0..8)
        .map(|i| DeviceInfo {
            rank: i,
            group: 0,
            pid: 12345,
            hostname: "node01".into(),
            device: i as i32,
            pci: (0, 0x18 + 0x10 * i as u32, 0),
            name: "NVIDIA H100 80GB HBM3".into(),
        })
        .collect();
    RunMeta {
        version: "0.1.0".into(),
        program: "all_reduce_perf".into(),
        backend: BackendKind::Nccl,
        backend_lines: vec![],
        nccl_headers: Some(22807),
        nccl_library: Some(22807),
        argv: vec!["./all_reduce_perf".into(), "-b".into(), "8".into()],
        env: vec!["NCCL_DEBUG=WARN".into()],
        nthreads: 1,
        ngpus: 8,
        min_bytes: 8,
        max_bytes: 134217728,
        step: Step::Factor(2),
        warmup_iters: 1,
        iters: 20,
        agg_iters: 1,
        check: 1,
        graph: 0,
        unalign: 0,
        blocking: 0,
        per_iter: false,
        per_iter_skip: 0,
        parallel_init: false,
        report_cputime: false,
        report_timestamps: false,
        show_algo: false,
        nranks: 8,
        devices,
        reduced_max_bytes: None,
        start_time: "2026-07-09 16:03:21".into(),
        environment: None,
        groups: Vec::new(),
    }
}

/// An all_reduce float sum row key of 8 ranks.
pub fn key(bytes: u64, count: u64) -> RowKey {
    RowKey {
        cycle: 0,
        collective: Collective::AllReduce,
        dtype: DataType::Float,
        op: RedOp::Sum,
        root: None,
        nranks: 8,
        bytes,
        count,
    }
}

/// A checked measurement without per-iteration data; cputime is a tenth of the time.
pub fn meas(time_us: f64, algbw_gbs: f64, busbw_gbs: f64, wrong: u64) -> Measurement {
    Measurement {
        time_us,
        cputime_us: time_us / 10.0,
        algbw_gbs,
        busbw_gbs,
        wrong: Some(wrong),
        iter: None,
        tuning: None,
        groups: Vec::new(),
    }
}

/// Per-iteration statistics with round numbers.
pub fn iter_stats(skipped: u32) -> IterStats {
    IterStats {
        skipped,
        min_us: 11.5,
        max_us: 14.25,
        mean_us: 12.5,
        p50_us: 12.25,
        p95_us: 14.0,
        p99_us: 14.25,
        stdev_us: 0.75,
        cv_pct: 6.0,
        times_us: vec![20.0, 11.5, 12.25, 14.25],
        per_process_max_times_us: Vec::new(),
    }
}

/// The example's two rows.
pub fn rows() -> Vec<Row> {
    vec![
        Row {
            key: key(8, 2),
            out_of_place: meas(12.345, 0.000648, 0.001134, 0),
            in_place: meas(11.9, 0.000672, 0.001176, 0),
            timestamp: "2026-07-09 16:03:22".into(),
        },
        Row {
            key: key(134217728, 33554432),
            out_of_place: meas(1234.56, 108.72, 190.25, 0),
            in_place: meas(1230.0, 109.12, 190.96, 0),
            timestamp: "2026-07-09 16:03:25".into(),
        },
    ]
}

/// A clean end: no wrong values, no bandwidth threshold.
pub fn summary() -> Summary {
    Summary {
        out_of_bounds: 0,
        avg_busbw: 95.300912,
        min_bw: None,
        memory: None,
        error: None,
        end_time: "2026-07-09 16:03:25".into(),
        tuning: None,
    }
}

/// Feeds `rows` through `sink` as the runner would, then finishes with `summary`.
pub fn drive(sink: &mut dyn Sink, meta: &RunMeta, rows: &[Row], summary: &Summary) {
    sink.begin(meta).unwrap();
    for row in rows {
        sink.row_started(&row.key).unwrap();
        for p in Placement::BOTH {
            sink.placement_done(&row.key, p, row.get(p)).unwrap();
        }
        sink.row_done(row).unwrap();
    }
    sink.finish(summary).unwrap();
    sink.seal().unwrap();
}
