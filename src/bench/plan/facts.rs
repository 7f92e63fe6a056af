//! The machine facts a plan depends on, made the job's. Each process sees only its own devices
//! and library: next to each other, an 80 GB and a 141 GB node clamp `-e` differently, and an
//! A100 node drops the fp8 types an H100 node keeps (as does an older libnccl on one node for
//! bfloat16, avg or mulsum), so their plans differ and the job deadlocks in the first
//! collective one of them skips. Like nccl-tests (a minimum over `MPI_COMM_WORLD` of device
//! memory and compute capability before its plan), the job takes the smallest device memory,
//! the smallest per-rank memory, and a (type, op) pair only where every process can run it,
//! all in one element-wise minimum. The reduction always carries every pair, not only the
//! requested ones, so its length is the same on every process even when their arguments differ
//! (the plan guard then names the difference instead of MPI mismatching counts).

use crate::bench::backend::BackendInfo;
use crate::bench::job::bootstrap::Bootstrap;
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;

/// An unknown memory size in the reduction (larger than any known one, so the minimum keeps
/// any process's known size).
const UNKNOWN: u64 = u64::MAX;

/// What every process of the job has.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFacts {
    /// This process's backend facts with the memory sizes of the job's smallest process.
    pub info: BackendInfo,
    /// Every (type, op) pair and whether every process can run it.
    pairs: Vec<(DataType, RedOp, bool)>,
}

impl JobFacts {
    /// Whether every process can run `dtype` with `op`.
    pub fn supports(&self, dtype: DataType, op: RedOp) -> bool {
        self.pairs
            .iter()
            .any(|&(d, o, ok)| d == dtype && o == op && ok)
    }
}

/// Combines this process's `info` and `supports` with every other process's through `boot`
/// (collective: every process of the job calls it once).
pub fn agree(
    info: &BackendInfo,
    supports: impl Fn(DataType, RedOp) -> bool,
    boot: &mut dyn Bootstrap,
) -> Result<JobFacts, Error> {
    let requested: Vec<(DataType, RedOp)> = DataType::ALL
        .into_iter()
        .flat_map(|d| RedOp::ALL.into_iter().map(move |o| (d, o)))
        .collect();
    let mut local = vec![
        info.device_memory.unwrap_or(UNKNOWN),
        info.memory_per_rank.unwrap_or(UNKNOWN),
    ];
    local.extend(requested.iter().map(|&(d, o)| u64::from(supports(d, o))));
    let job = boot.min_u64s(&local)?;
    if job.len() != local.len() {
        return Err(Error::Backend(format!(
            "the job's reduction of plan facts returned {} values for {}",
            job.len(),
            local.len()
        )));
    }
    let known = |v: u64| (v != UNKNOWN).then_some(v);
    let mut info = info.clone();
    info.device_memory = known(job[0]);
    info.memory_per_rank = known(job[1]);
    let pairs = requested
        .iter()
        .zip(&job[2..])
        .map(|(&(d, o), &ok)| (d, o, ok == 1))
        .collect();
    Ok(JobFacts { info, pairs })
}
