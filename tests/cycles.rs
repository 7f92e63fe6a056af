//! `-N` as nccl-tests 2.19.6's `TimeTest` runs it: one barrier and one warm-up per (type, op,
//! root), then the cycles inside it, each a pass over every size; `-N 0` repeats the first
//! (type, op, root) until interrupted. So with `-d all -o all` a sweep's cycles are adjacent
//! rows, not whole passes over every type and op.

use crate::support::run::config;
use ncclbench::bench::backend::host::HostBackend;
use ncclbench::bench::backend::Backend;
use ncclbench::bench::job::bootstrap::SingleProcess;
use ncclbench::bench::observe::{Observer, OpKey, Phase};
use ncclbench::bench::output::Sink;
use ncclbench::bench::plan;
use ncclbench::bench::runner::Runner;
use ncclbench::core::error::Error;
use ncclbench::result::{Row, RowKey};
use std::io;

/// Keeps every row's key; fails the run (as a full disk would) once `stop_after` rows came.
struct Keys {
    keys: Vec<RowKey>,
    stop_after: Option<usize>,
}

impl Sink for Keys {
    fn row_done(&mut self, row: &Row) -> io::Result<()> {
        self.keys.push(row.key.clone());
        if self.stop_after.is_some_and(|n| self.keys.len() >= n) {
            return Err(io::Error::other("enough rows"));
        }
        Ok(())
    }
}

/// Counts the warm-up launches.
#[derive(Default)]
struct Warmups(u64);

impl Observer for Warmups {
    fn call(&mut self, op: &OpKey) {
        if op.phase == Phase::Warmup {
            self.0 += 1;
        }
    }
}

/// Runs `args` on the host backend; the row keys, the warm-up launches and the outcome.
fn run(args: &str, stop_after: Option<usize>) -> (Vec<RowKey>, u64, Result<(), Error>) {
    let cfg = config(args);
    let mut backend = HostBackend::new(cfg.local_ranks()).expect("host backend");
    let info = backend.info().clone();
    let (plan, _) = plan::build(&cfg, &info, |_, _| true).expect("valid plan");
    let mut sink = Keys {
        keys: Vec::new(),
        stop_after,
    };
    let mut warmups = Warmups::default();
    let result = Runner::new(&cfg, &plan, &mut backend, &mut SingleProcess, &mut sink)
        .with_observer(&mut warmups)
        .run(None, None)
        .map(drop);
    (sink.keys, warmups.0, result)
}

#[test]
fn cycles_run_inside_each_type_and_op_as_nccl_tests_orders_its_rows() {
    let (keys, _, result) = run(
        "all_reduce -g 2 -b 1K -e 2K -f 2 -n 1 -w 1 -c 0 -N 2 -d all -o all",
        None,
    );
    result.expect("the run succeeds");
    // Per (type, op): cycle 0's sizes, then cycle 1's; each (type, op) once.
    let block = 2 * 2;
    assert_eq!(keys.len() % block, 0);
    let mut sweeps = Vec::new();
    for rows in keys.chunks(block) {
        let got: Vec<(u32, u64)> = rows.iter().map(|k| (k.cycle, k.bytes)).collect();
        assert_eq!(
            got,
            [(0, 1024), (0, 2048), (1, 1024), (1, 2048)],
            "{rows:?}"
        );
        assert!(
            rows.iter()
                .all(|k| (k.dtype, k.op) == (rows[0].dtype, rows[0].op)),
            "{rows:?}"
        );
        sweeps.push((rows[0].dtype, rows[0].op));
    }
    let mut distinct = sweeps.clone();
    distinct.sort_by_key(|(d, o)| (d.name(), o.name()));
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        sweeps.len(),
        "each type and op in one block"
    );
    assert!(sweeps.len() > 6, "-d all -o all: {sweeps:?}");
}

#[test]
fn the_warm_up_runs_once_per_type_and_op_not_once_per_cycle() {
    // Warm-up sizes 1K, 2K, 4K; two launches each; every type with one op; three cycles.
    let (keys, warmups, result) = run(
        "all_reduce -g 2 -b 1K -e 4K -f 2 -n 1 -w 2 -c 0 -N 3 -d all",
        None,
    );
    result.expect("the run succeeds");
    let types: std::collections::BTreeSet<&str> = keys.iter().map(|k| k.dtype.name()).collect();
    assert_eq!(
        keys.len(),
        types.len() * 3 * 3,
        "types x 3 cycles x 3 sizes"
    );
    assert_eq!(
        warmups,
        types.len() as u64 * 3 * 2,
        "types x 3 warm-up sizes x -w 2"
    );
}

#[test]
fn n_zero_loops_the_first_type_and_op_until_stopped() {
    let (keys, warmups, result) = run(
        "all_reduce -g 2 -b 1K -e 2K -f 2 -n 1 -w 1 -c 0 -N 0 -d all -o all",
        Some(2 * 5),
    );
    let err = result.expect_err("stopped by its sink");
    assert!(err.to_string().contains("enough rows"), "{err}");
    assert_eq!(keys.len(), 10);
    let first = keys[0].clone();
    assert!(
        keys.iter()
            .all(|k| (k.dtype, k.op) == (first.dtype, first.op)),
        "every row of the first type and op: {keys:?}"
    );
    let cycles: Vec<u32> = keys.iter().map(|k| k.cycle).collect();
    assert_eq!(cycles, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]);
    assert_eq!(warmups, 2, "one warm-up, at 1K and 2K");
}
