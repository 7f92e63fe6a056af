//! A manual speed check, not a test: it prints how long a 64 MiB float all_reduce over 4 ranks
//! takes and asserts nothing. Run with `cargo test --release --lib timing -- --ignored
//! --nocapture`.

use crate::bench::backend::host::HostBackend;
use crate::bench::backend::{rank_args, Backend, Call};
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::op::RedOp;
use crate::result::Placement;
use std::time::Instant;

#[test]
#[ignore = "prints a timing, asserts nothing"]
fn print_all_reduce_64mib_float_4_ranks() {
    let (n, size, dt) = (4, 64 << 20, DataType::Float);
    let coll = Collective::AllReduce;
    let shape = coll.shape(size, dt, n);
    let mut be = HostBackend::new(n).unwrap();
    be.allocate(size, size).unwrap();
    for placement in Placement::BOTH {
        let call = Call {
            coll,
            dtype: dt,
            op: RedOp::Sum,
            root: 0,
            count: shape.count,
            ranks: (0..n)
                .map(|r| rank_args(coll, &shape, dt, r, placement, 0))
                .collect(),
        };
        be.launch(&call).unwrap(); // warm-up: touches every page
        be.wait(None).unwrap();
        let iters = 5;
        let start = Instant::now();
        for _ in 0..iters {
            be.launch(&call).unwrap();
        }
        be.wait(None).unwrap();
        let each = start.elapsed() / iters;
        println!("all_reduce 64 MiB float, 4 ranks, {placement:?}: {each:?} per call");
    }
}
