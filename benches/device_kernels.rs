//! Element throughput of the verification kernels' host build (`kernels/verify.cuh` compiled
//! by the C compiler, one thread: what fake-nccl runs, and a floor for the per-element cost of
//! the device code) next to ncclbench's Rust generator on the same 16 MiB runs. The Rust side
//! is vectorized and threaded; the figures show how much per-element work the kernels carry,
//! not GPU speed.
//!
//! Run with `cargo bench --bench device_kernels`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use ncclbench::bench::verify::{count_wrong, write_content, DevRun, Pattern};
use ncclbench::core::collective::Content;
use ncclbench::core::dtype::DataType;
use ncclbench::core::op::RedOp;
use std::time::Duration;

const BYTES: usize = 16 << 20;

fn kernels_16mib(c: &mut Criterion) {
    let cases = [
        (
            "float_sum_reduced_n8",
            DataType::Float,
            RedOp::Sum,
            Content::Reduced { first: 0 },
        ),
        (
            "bf16_avg_reduced_n8",
            DataType::Bfloat16,
            RedOp::Avg,
            Content::Reduced { first: 0 },
        ),
        (
            "int64_prod_input_n8",
            DataType::Int64,
            RedOp::Prod,
            Content::ReduceInput { first: 0 },
        ),
        (
            "uint8_plain",
            DataType::Uint8,
            RedOp::Sum,
            Content::Plain { first: 0 },
        ),
    ];
    for (name, dtype, op, content) in cases {
        let mut g = c.benchmark_group(format!("kernels_16MiB/{name}"));
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .throughput(Throughput::Elements((BYTES / dtype.size()) as u64));
        let p = Pattern::new(dtype, op, 8, 7);
        let run = DevRun::of(&p, 3, content, 0);
        let params = run.params.as_bytes().to_vec();
        let mut buf = vec![0u8; BYTES];
        g.bench_function("fill_host_c", |b| {
            b.iter(|| ncclbench_kernels::fill(&params, &run.table, black_box(&mut buf)))
        });
        g.bench_function("fill_rust", |b| {
            b.iter(|| write_content(&p, 3, content, 0, black_box(&mut buf)))
        });
        g.bench_function("count_host_c", |b| {
            b.iter(|| {
                assert_eq!(
                    ncclbench_kernels::count(&params, &run.table, black_box(&buf)),
                    0
                )
            })
        });
        g.bench_function("count_rust", |b| {
            b.iter(|| assert_eq!(count_wrong(&p, 3, content, 0, black_box(&buf)), 0))
        });
        g.finish();
    }
}

criterion_group!(benches, kernels_16mib);
criterion_main!(benches);
