//! Tests of the plan: the `-e` clamp, and the plan of a job (its machine facts reduced over
//! the processes, its guard) over a scripted bootstrap that stands in for the other processes.

mod clamp;
mod job;

use crate::bench::backend::BackendInfo;
use crate::bench::job::bootstrap::Bootstrap;
use crate::config::{BackendChoice, RootChoice, RunConfig, TimeReduce, Timer, TuningOptions};
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;
use crate::result::Step;

/// `all_reduce -b 1M -e 64M -f 2 -d float,f8e4m3 -c 1 -n 20 -w 5` as the CLI would build it.
pub(super) fn config() -> RunConfig {
    RunConfig {
        collective: Collective::AllReduce,
        nthreads: 1,
        ngpus: 1,
        min_bytes: 1 << 20,
        max_bytes: 64 << 20,
        step: Step::Factor(2),
        iters: 20,
        agg_iters: 1,
        warmup_iters: 5,
        cycles: Some(1),
        parallel_init: false,
        check: 1,
        dtypes: vec![DataType::Float, DataType::F8e4m3],
        ops: vec![RedOp::Sum],
        root: RootChoice::One(0),
        blocking: 0,
        stream_null: false,
        timeout: None,
        graph: 0,
        report_cputime: false,
        report_timestamps: false,
        average: TimeReduce::Mean,
        local_register: 0,
        cta_policy: None,
        device_cta_count: 16,
        memory_report: false,
        unalign: 0,
        per_iter: false,
        per_iter_skip: 0,
        backend: BackendChoice::Use(crate::result::BackendKind::Nccl),
        csv: None,
        json: None,
        prom: None,
        nccl_lib: None,
        devices: None,
        timer: Timer::Host,
        verify: crate::config::Verify::Auto,
        redact: false,
        per_group: false,
        tuning: TuningOptions::default(),
        alltoallv: Default::default(),
        argv: vec![],
    }
}

/// A one-rank NCCL backend's facts with `mem` bytes of device memory.
pub(super) fn info(mem: Option<u64>) -> BackendInfo {
    BackendInfo {
        name: crate::result::BackendKind::Nccl,
        nranks: 1,
        first_rank: 0,
        local_ranks: 1,
        header_lines: vec![],
        nccl_headers: None,
        nccl_library: None,
        memory_per_rank: None,
        device_memory: mem,
    }
}

/// This process's view of a job: the other processes' contributions are scripted, and what
/// this process contributed is recorded.
#[derive(Default)]
pub(super) struct World {
    pub rank: usize,
    pub size: usize,
    /// The other processes' `min_u64s` vectors.
    pub others_min: Vec<Vec<u64>>,
    /// The other processes' `gather_lines` lines (rank 0 receives them).
    pub others_lines: Vec<String>,
    /// The largest `max_u64` value of the other processes.
    pub others_max: u64,
    /// What this process passed to `min_u64s` and `gather_lines`.
    pub sent_min: Vec<u64>,
    pub sent_lines: Vec<String>,
}

impl Bootstrap for World {
    fn world_rank(&self) -> usize {
        self.rank
    }
    fn world_size(&self) -> usize {
        self.size
    }
    fn barrier(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn reduce_time(&mut self, local_us: f64, _how: TimeReduce) -> Result<f64, Error> {
        Ok(local_us)
    }
    fn sum_u64(&mut self, local: u64) -> Result<u64, Error> {
        Ok(local)
    }
    fn max_u64(&mut self, local: u64) -> Result<u64, Error> {
        Ok(local.max(self.others_max))
    }
    fn max_f64s(&mut self, local: &[f64]) -> Result<Vec<f64>, Error> {
        Ok(local.to_vec())
    }
    fn min_u64s(&mut self, local: &[u64]) -> Result<Vec<u64>, Error> {
        self.sent_min = local.to_vec();
        Ok(self.others_min.iter().fold(local.to_vec(), |acc, o| {
            acc.iter().zip(o).map(|(a, b)| *a.min(b)).collect()
        }))
    }
    fn gather_lines(&mut self, local: &[String]) -> Result<Vec<String>, Error> {
        self.sent_lines = local.to_vec();
        if self.rank != 0 {
            return Ok(vec![]);
        }
        Ok(local.iter().chain(&self.others_lines).cloned().collect())
    }
}
