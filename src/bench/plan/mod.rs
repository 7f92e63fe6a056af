//! The plan: which sweeps a run performs, in nccl-tests' order (cycle -> type -> op -> root ->
//! size -> placement), and the checks that need the rank count (root range, hypercube's power of
//! two, alltoallv's traffic matrix, memory) before anything is allocated. In a job of several processes the plan is built
//! from the job's machine facts ([`facts`]) and checked to be every process's ([`guard`])
//! before any collective.

pub mod env;
pub mod facts;
pub mod guard;

use crate::bench::backend::BackendInfo;
use crate::bench::job::bootstrap::Bootstrap;
use crate::config::{RootChoice, RunConfig};
use crate::core::collective::{Collective, Traffic};
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;
use std::sync::Arc;

/// One sweep over the sizes with a fixed type, op and root (nccl-tests' `TimeTest`).
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// Element type.
    pub dtype: DataType,
    /// Operator (as printed; irrelevant to data-movement collectives).
    pub op: RedOp,
    /// Root, for rooted collectives.
    pub root: Option<usize>,
}

/// Everything a run will do.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The collective.
    pub collective: Collective,
    /// alltoallv's traffic, handed to every spec function the run calls.
    pub traffic: Arc<Traffic>,
    /// Ranks in the communicator.
    pub nranks: usize,
    /// Sweeps of one cycle, in order.
    pub sweeps: Vec<Sweep>,
    /// Requested sizes of each sweep.
    pub sizes: Vec<u64>,
    /// Warm-up sizes of each sweep.
    pub warmup_sizes: Vec<u64>,
    /// Bytes each rank's send and receive allocations need (`-e` plus `-u` padding).
    pub alloc_bytes: usize,
    /// The `-e` actually used when device memory forced it down (nccl-tests' reserve rule).
    pub reduced_max_bytes: Option<u64>,
}

/// The plan of this process in the job `boot` spans (collective: every process calls it once,
/// before any collective): built as [`build`] builds it, from the smallest memory of every
/// process and only the (type, op) pairs every process supports, then compared across the
/// job. In a single process it is exactly [`build`].
pub fn build_for_job(
    cfg: &RunConfig,
    info: &BackendInfo,
    supports: impl Fn(DataType, RedOp) -> bool,
    boot: &mut dyn Bootstrap,
) -> Result<(Plan, Vec<(DataType, RedOp)>), Error> {
    let job = facts::agree(info, supports, boot)?;
    let built = build(cfg, &job.info, |d, o| job.supports(d, o));
    guard::check(boot, cfg, job.info.name, built.as_ref().map(|(p, _)| p))?;
    built
}

/// Builds the plan for `cfg` on a communicator described by `info`, or explains why it cannot
/// run. `supports` says which (type, op) pairs the backend can run; others are skipped and
/// returned for a notice.
pub fn build(
    cfg: &RunConfig,
    info: &BackendInfo,
    supports: impl Fn(DataType, RedOp) -> bool,
) -> Result<(Plan, Vec<(DataType, RedOp)>), Error> {
    let coll = cfg.collective;
    let n = info.nranks;
    if coll.needs_power_of_two_ranks() && !n.is_power_of_two() {
        return Err(Error::usage(format!(
            "hypercube needs a power-of-two number of ranks, but this run has {n} \
             (nccl-tests prints a skip line and a nan average; ncclbench refuses)"
        )));
    }
    let roots: Vec<Option<usize>> = if !coll.rooted() {
        vec![None]
    } else {
        match cfg.root {
            RootChoice::All => (0..n).map(Some).collect(),
            RootChoice::One(r) if r < n => vec![Some(r)],
            RootChoice::One(r) => {
                return Err(Error::usage(format!(
                    "root {r} is out of range: this run has {n} ranks (valid roots 0..{}, or -1 for all)",
                    n - 1
                )))
            }
        }
    };
    let ops: Vec<RedOp> = if coll.iterates_ops() {
        cfg.ops.clone()
    } else {
        cfg.ops[..1].to_vec()
    };
    let mut sweeps = Vec::new();
    let mut skipped = Vec::new();
    for &dtype in &cfg.dtypes {
        for &op in &ops {
            if !supports(dtype, op) {
                skipped.push((dtype, op));
                continue;
            }
            sweeps.extend(roots.iter().map(|&root| Sweep { dtype, op, root }));
        }
    }
    if sweeps.is_empty() {
        return Err(Error::usage(format!(
            "nothing to run: the backend supports none of the requested type/op pairs ({})",
            skipped
                .iter()
                .map(|(d, o)| format!("{d}/{o}"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let reduced = info
        .device_memory
        .and_then(|mem| clamp_max_bytes(cfg.max_bytes, mem, cfg.check > 0));
    let sized;
    let cfg = match reduced {
        Some(max) => {
            let mut c = cfg.clone();
            c.max_bytes = max;
            c.min_bytes = c.min_bytes.min(max);
            sized = c;
            &sized
        }
        None => cfg,
    };
    if cfg.max_bytes == 0 && reduced.is_some() {
        return Err(Error::usage(
            "the devices have too little memory for any buffer (nccl-tests' reserve rule leaves none)",
        ));
    }
    if coll == Collective::AllToAllv {
        cfg.alltoallv
            .traffic
            .check_fits(n, cfg.min_bytes, cfg.max_bytes)
            .map_err(Error::usage)?;
    }
    let pad = cfg
        .unalign
        .checked_mul(8)
        .ok_or_else(|| Error::usage("-u is too large"))?;
    let alloc = usize::try_from(cfg.max_bytes)
        .ok()
        .and_then(|m| m.checked_add(pad))
        .ok_or_else(|| {
            Error::usage(format!(
                "-e {} does not fit in this machine's address space",
                cfg.max_bytes
            ))
        })?;
    if let Some(avail) = info.memory_per_rank {
        let need = 2 * alloc as u128;
        if need > avail as u128 {
            return Err(Error::usage(format!(
                "-e {} needs {} per rank ({} ranks, send and receive buffers of {} each) but only {} is available per rank",
                cfg.max_bytes,
                crate::core::units::iec_bytes(need as u64),
                n,
                crate::core::units::iec_bytes(alloc as u64),
                crate::core::units::iec_bytes(avail)
            )));
        }
    }
    let plan = Plan {
        collective: coll,
        traffic: cfg.alltoallv.traffic.clone(),
        nranks: n,
        sweeps,
        sizes: cfg.sizes(),
        warmup_sizes: cfg.warmup_sizes(),
        alloc_bytes: alloc,
        reduced_max_bytes: reduced,
    };
    Ok((plan, skipped))
}

/// nccl-tests' clamp of `-e` to device memory: with `mem` the smallest device's total memory,
/// reserve = min(ceil(mem / 16 GiB) GiB, 4 GiB) and usable = (mem - reserve - 1 GiB) / 3 when
/// checking (send, receive and nccl-tests' expected buffer) or / 2. Returns the reduced `-e`
/// when `max_bytes` is larger, else `None`.
pub fn clamp_max_bytes(max_bytes: u64, mem: u64, checking: bool) -> Option<u64> {
    const GIB: u64 = 1 << 30;
    let reserve = mem.div_ceil(16 * GIB).saturating_mul(GIB).min(4 * GIB);
    let buffers = if checking { 3 } else { 2 };
    let usable = mem.saturating_sub(reserve).saturating_sub(GIB) / buffers;
    (max_bytes > usable).then_some(usable)
}

#[cfg(test)]
mod tests;
