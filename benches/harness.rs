//! The harness's own cost per launch: the runner's timed loop over a backend that does nothing
//! (every call returns at once), beside a bare loop making the same backend calls without the
//! runner, in the same run. Each criterion iteration is one launch, so both figures read
//! directly as time per launch; the `g8` cases drive 8 local ranks per launch (divide by 8 for
//! per rank). Target: the runner adds under 1 microsecond per launch per rank, under 1% of
//! NCCL's small-message time.
//!
//! Run with `cargo bench --bench harness -- --warm-up-time 1 --measurement-time 3`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use ncclbench::bench::backend::{
    rank_args, Backend, BackendInfo, Buf, Call, DeviceInfo, EventId, GraphId,
};
use ncclbench::bench::job::bootstrap::SingleProcess;
use ncclbench::bench::output::Sink;
use ncclbench::bench::plan;
use ncclbench::bench::runner::Runner;
use ncclbench::cli::{self, Command};
use ncclbench::config::RunConfig;
use ncclbench::core::collective::{Collective, Traffic};
use ncclbench::core::dtype::DataType;
use ncclbench::core::error::Error;
use ncclbench::core::op::RedOp;
use ncclbench::result::Placement;
use std::ffi::OsString;
use std::time::{Duration, Instant};

/// A backend whose every call returns at once (a launch only lets the optimiser see its call).
struct Noop {
    info: BackendInfo,
}

impl Noop {
    fn new(ranks: usize) -> Self {
        Noop {
            info: BackendInfo {
                name: ncclbench::result::BackendKind::Host,
                nranks: ranks,
                first_rank: 0,
                local_ranks: ranks,
                header_lines: Vec::new(),
                nccl_headers: None,
                nccl_library: None,
                memory_per_rank: None,
                device_memory: None,
            },
        }
    }
}

impl Backend for Noop {
    fn info(&self) -> &BackendInfo {
        &self.info
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        Vec::new()
    }
    fn supports(&self, _dtype: DataType, _op: RedOp) -> bool {
        true
    }
    fn allocate(&mut self, _send: usize, _recv: usize) -> Result<(), Error> {
        Ok(())
    }
    fn fill(
        &mut self,
        _local: usize,
        _buf: Buf,
        _offset: usize,
        _len: usize,
        _f: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), Error> {
        Ok(())
    }
    fn inspect(
        &mut self,
        _local: usize,
        _buf: Buf,
        _offset: usize,
        _len: usize,
        _f: &mut dyn FnMut(&[u8]),
    ) -> Result<(), Error> {
        Ok(())
    }
    fn group_start(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn group_end(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn launch(&mut self, call: &Call) -> Result<(), Error> {
        black_box(call);
        Ok(())
    }
    fn wait(&mut self, _deadline: Option<Instant>) -> Result<(), Error> {
        Ok(())
    }
    fn record_event(&mut self) -> Result<EventId, Error> {
        Ok(EventId(0))
    }
    fn event_elapsed(&mut self, _start: EventId, _end: EventId) -> Result<Duration, Error> {
        Ok(Duration::from_micros(1))
    }
    fn begin_capture(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn end_capture(&mut self) -> Result<GraphId, Error> {
        Ok(GraphId(0))
    }
    fn launch_graph(&mut self, _graph: GraphId) -> Result<(), Error> {
        Ok(())
    }
    fn destroy_graphs(&mut self) -> Result<(), Error> {
        Ok(())
    }
}

/// Discards every result.
struct Discard;

impl Sink for Discard {}

fn config(args: &str) -> RunConfig {
    let argv: Vec<OsString> = std::iter::once("ncclbench")
        .chain(args.split_whitespace())
        .map(OsString::from)
        .collect();
    match cli::parse(&argv) {
        Ok(Command::Run(cfg)) => cfg,
        _ => panic!("{args}: not a valid run"),
    }
}

/// Time of about `launches` launches through the runner: one size, both placements, each an
/// untimed launch and `n` iterations of `m` timed ones (`extra` flags follow).
fn runner_time(ranks: usize, m: u64, launches: u64, extra: &str) -> Duration {
    let n = (launches / (2 * m)).max(1);
    let cfg = config(&format!(
        "all_reduce -g {ranks} -b 8 -e 8 -w 0 -c 0 -n {n} -m {m} {extra}"
    ));
    let mut backend = Noop::new(ranks);
    let info = backend.info().clone();
    let (plan, _) = plan::build(&cfg, &info, |_, _| true).expect("valid plan");
    let (mut boot, mut sink) = (SingleProcess, Discard);
    let t0 = Instant::now();
    Runner::new(&cfg, &plan, &mut backend, &mut boot, &mut sink)
        .run(None, None)
        .expect("a no-op run succeeds");
    t0.elapsed()
}

/// Time of `launches` calls of the same backend with one prepared call and a wait at the end:
/// what any harness pays.
fn bare_time(ranks: usize, launches: u64) -> Duration {
    let coll = Collective::AllReduce;
    let shape = coll.shape(&Traffic::default(), 8, DataType::Float, ranks);
    let call = Call {
        coll,
        dtype: DataType::Float,
        op: RedOp::Sum,
        root: 0,
        count: shape.count,
        traffic: Default::default(),
        ranks: (0..ranks)
            .map(|r| rank_args(coll, &shape, DataType::Float, r, Placement::OutOfPlace, 0))
            .collect(),
    };
    let mut noop = Noop::new(ranks);
    // Called through the trait object, as the runner does (not inlined away).
    let backend: &mut dyn Backend = black_box(&mut noop);
    let t0 = Instant::now();
    for _ in 0..launches {
        backend.launch(black_box(&call)).expect("no-op");
    }
    backend.wait(None).expect("no-op");
    t0.elapsed()
}

fn per_launch(c: &mut Criterion) {
    let mut g = c.benchmark_group("per_launch");
    for ranks in [1, 8] {
        g.bench_function(format!("bare_loop_g{ranks}"), |b| {
            b.iter_custom(|iters| bare_time(ranks, iters))
        });
        g.bench_function(format!("runner_g{ranks}"), |b| {
            b.iter_custom(|iters| runner_time(ranks, 1, iters, ""))
        });
    }
    g.bench_function("runner_g1_m4", |b| {
        b.iter_custom(|iters| runner_time(1, 4, iters, ""))
    });
    g.bench_function("runner_g1_I1", |b| {
        b.iter_custom(|iters| runner_time(1, 1, iters, "-I 1"))
    });
    g.finish();
}

criterion_group!(benches, per_launch);
criterion_main!(benches);
