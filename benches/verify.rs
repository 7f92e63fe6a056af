//! Throughput of data verification against memory bandwidth: checking a 256 MiB `float`
//! all_reduce-sum result (4 ranks) and filling a rank's inputs, next to a plain `memcpy` of the
//! same buffer. Verification must not dominate a run with checking on (`-c 1`); the target is at
//! least half of memcpy's throughput.
//!
//! Run with `cargo bench --bench verify`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use ncclbench::bench::verify::{count_wrong, write_content, Pattern};
use ncclbench::core::collective::Content;
use ncclbench::core::dtype::DataType;
use ncclbench::core::op::RedOp;
use std::time::Duration;

const BYTES: usize = 256 << 20;

fn verify_256mib(c: &mut Criterion) {
    let mut g = c.benchmark_group("verify_256MiB");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .throughput(Throughput::Bytes(BYTES as u64));

    let p = Pattern::new(DataType::Float, RedOp::Sum, 4, 99);
    let reduced = Content::Reduced { first: 0 };
    let mut result = vec![0u8; BYTES];
    write_content(&p, 0, reduced, 0, &mut result);
    let mut dst = vec![0u8; BYTES];

    g.bench_function("memcpy", |b| {
        b.iter(|| dst.copy_from_slice(black_box(&result)))
    });
    g.bench_function("check_float_all_reduce_sum_n4", |b| {
        b.iter(|| {
            let wrong = count_wrong(&p, 0, reduced, 0, black_box(&result));
            assert_eq!(wrong, 0);
        })
    });
    g.bench_function("fill_float_sum_input_n4", |b| {
        b.iter(|| {
            write_content(
                &p,
                1,
                Content::ReduceInput { first: 0 },
                0,
                black_box(&mut dst),
            )
        })
    });
    let plain = Content::Plain { first: 0 };
    write_content(&p, 0, plain, 0, &mut result);
    g.bench_function("check_float_plain", |b| {
        b.iter(|| assert_eq!(count_wrong(&p, 0, plain, 0, black_box(&result)), 0))
    });
    g.finish();
}

criterion_group!(benches, verify_256mib);
criterion_main!(benches);
