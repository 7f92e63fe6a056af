//! The host backend's data path: one 64 MiB float all_reduce over 4 ranks (out of place and in
//! place), beside a baseline measured in the same run: a single-threaded `copy_from_slice` of
//! the same 64 MiB per rank. The host backend may spread ranks over threads, so the reduction can
//! beat the single copy; the ratio places it against this machine's memory speed.
//!
//! Run with `cargo bench --bench host_backend -- --warm-up-time 1 --measurement-time 5`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use ncclbench::bench::backend::host::HostBackend;
use ncclbench::bench::backend::{rank_args, Backend, Call};
use ncclbench::core::collective::{Collective, Traffic};
use ncclbench::core::dtype::DataType;
use ncclbench::core::op::RedOp;
use ncclbench::result::Placement;

const RANKS: usize = 4;
const BYTES: usize = 64 << 20;

fn all_reduce(c: &mut Criterion) {
    let coll = Collective::AllReduce;
    let dt = DataType::Float;
    let shape = coll.shape(&Traffic::default(), BYTES, dt, RANKS);
    let mut be = HostBackend::new(RANKS).expect("host backend");
    be.allocate(BYTES, BYTES).expect("allocate");
    let mut group = c.benchmark_group("all_reduce_64MiB_float_4_ranks");
    group.sample_size(10);
    for placement in Placement::BOTH {
        let call = Call {
            coll,
            dtype: dt,
            op: RedOp::Sum,
            root: 0,
            count: shape.count,
            traffic: Default::default(),
            ranks: (0..RANKS)
                .map(|r| rank_args(coll, &shape, dt, r, placement, 0))
                .collect(),
        };
        // Touches every page before timing.
        be.launch(&call).expect("launch");
        be.wait(None).expect("wait");
        group.bench_function(format!("{placement:?}"), |b| {
            b.iter(|| {
                be.launch(&call).expect("launch");
                be.wait(None).expect("wait");
            })
        });
    }
    let src: Vec<Vec<u8>> = (0..RANKS).map(|r| vec![r as u8; BYTES]).collect();
    let mut dst: Vec<Vec<u8>> = (0..RANKS).map(|_| vec![0u8; BYTES]).collect();
    group.bench_function("baseline_memcpy_per_rank", |b| {
        b.iter(|| {
            for (d, s) in dst.iter_mut().zip(&src) {
                d.copy_from_slice(black_box(s));
            }
            black_box(&dst);
        })
    });
    group.finish();
}

criterion_group!(benches, all_reduce);
criterion_main!(benches);
