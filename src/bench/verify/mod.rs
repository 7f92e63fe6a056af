//! Exact data verification: every element a collective reads or writes is a pure function of
//! (seed, global element index, rank, rank count, dtype, op), and every expected output element is
//! exact whatever order or association the reduction uses (float `avg` alone may be 2 units of
//! the element's bit pattern away, see [`tolerance`]).
//!
//! Each element costs one mix of (seed, index) to 64 bits (done in 32-bit lanes, see `hash`) plus
//! a few integer operations per rank, so any sub-range can be generated on its own, and checking
//! compares on the fly without an expected buffer. The value rules per type and operator live in
//! the submodules: `plain` (data movement and decoys), `int`, `float_sum` (sum, mulsum),
//! `float_prod`, `float_minmax` and `float_avg`. Rank arithmetic is 32-bit.
//!
//! [`prepare`] and [`check`] apply the collective table ([`crate::core::collective`]) to a backend's
//! buffers, run by run ([`fill_runs`], [`check_runs`]): on the host through `fill`/`inspect`,
//! or, where the backend has them ([`Backend::kernels`]), with the device kernels of
//! `kernels/verify.cuh`, which compute the same elements from [`DevRun`] parameter blocks; [`write_content`] and [`count_wrong`] are the pure pieces underneath, and `kernel`
//! and `job` run them over large buffers (threads, vectorized loops).
//!
//! docs/verification.md describes the whole design: seeds and global indices, the meaning of
//! `Content` and [`Segment`], the pattern of each type and operator, and how wrong elements
//! are counted.

mod device;
mod dispatch;
mod float_avg;
mod float_minmax;
mod float_prod;
mod float_sum;
mod hash;
mod int;
mod job;
mod kernel;
mod layout;
mod pattern;
mod plain;
mod runs;
#[cfg(test)]
mod tests;

pub use device::{DevParams, DevRun, DEV_ABI};
pub use pattern::{count_wrong, tolerance, write_content, Pattern};
pub use runs::{check_runs, fill_runs, Run};

use crate::bench::backend::{rank_args, Backend, RankArgs};
use crate::core::collective::{Collective, Segment, Shape, Traffic};
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;
use crate::result::Placement;
use std::sync::Arc;

/// Everything that determines one verified call.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckCase {
    /// The collective.
    pub coll: Collective,
    /// Element type.
    pub dtype: DataType,
    /// Reduction operator (ignored by data-movement collectives).
    pub op: RedOp,
    /// Root rank (ignored by unrooted collectives).
    pub root: usize,
    /// Element counts of the call.
    pub shape: Shape,
    /// alltoallv's traffic (what each pair sends).
    pub traffic: Arc<Traffic>,
    /// Ranks in the communicator.
    pub nranks: usize,
    /// Global rank of local rank 0.
    pub first_rank: usize,
    /// Ranks this process drives.
    pub local_ranks: usize,
    /// Byte offset applied to both allocations (buffer rotation, `-u` misalignment).
    pub base: usize,
    /// Out-of-place or in-place.
    pub placement: Placement,
    /// Pattern seed.
    pub seed: u64,
}

impl CheckCase {
    /// The data pattern of this case.
    pub fn pattern(&self) -> Pattern {
        Pattern::new(self.dtype, self.op, self.nranks, self.seed)
    }

    /// Global rank and buffer pointers of every local rank.
    pub(crate) fn ranks(&self) -> Result<Vec<(usize, RankArgs)>, Error> {
        let fits =
            matches!(self.first_rank.checked_add(self.local_ranks), Some(l) if l <= self.nranks);
        if self.nranks == 0 || !fits {
            return Err(Error::usage(format!(
                "verify: local ranks {}..+{} do not fit in {} ranks",
                self.first_rank, self.local_ranks, self.nranks
            )));
        }
        if self.coll.rooted() && self.root >= self.nranks {
            return Err(Error::usage(format!(
                "verify: root {} is not a rank of {}",
                self.root, self.nranks
            )));
        }
        Ok((0..self.local_ranks)
            .map(|l| {
                let rank = self.first_rank + l;
                let args = rank_args(
                    self.coll,
                    &self.shape,
                    self.dtype,
                    rank,
                    self.placement,
                    self.base,
                );
                (rank, args)
            })
            .collect())
    }

    /// What `rank`'s send buffer holds before the call.
    pub(crate) fn send_segments(&self, rank: usize) -> Vec<Segment> {
        self.coll
            .send_contents(&self.traffic, &self.shape, rank, self.nranks, self.root)
    }
}

/// The most bytes the host path fills or inspects in one backend call: a backend that copies
/// through a host buffer (NCCL's `--verify host`) then needs at most this much of it, whatever
/// the buffer size (8 GiB at the top of a default sweep).
pub const HOST_CHUNK_BYTES: usize = 64 << 20;

/// Writes every local rank's inputs for the case (the runs of [`fill_runs`]): zeroes the receive
/// region, then writes the send segments of [`Collective::send_contents`] at the send pointer
/// (for in-place calls that pointer lies inside the receive allocation, so the send data
/// overwrites part of the zeros).
pub fn prepare(backend: &mut dyn Backend, case: &CheckCase) -> Result<(), Error> {
    prepare_in_chunks(backend, case, HOST_CHUNK_BYTES)
}

/// [`prepare`] with the host path's runs cut into pieces of at most `chunk` bytes.
pub(crate) fn prepare_in_chunks(
    backend: &mut dyn Backend,
    case: &CheckCase,
    chunk: usize,
) -> Result<(), Error> {
    let p = case.pattern();
    if let Some(k) = backend.kernels() {
        // Queued on each rank's stream, ahead of the collective that reads them.
        for run in fill_runs(case)? {
            let d = DevRun::of(&p, run.rank, run.content, run.at);
            let params = d.params.as_bytes();
            k.fill(run.kernel_run(), params, &d.table)?;
        }
        return Ok(());
    }
    let elt = case.dtype.size();
    for run in fill_runs(case)?
        .into_iter()
        .flat_map(|r| r.chunks(chunk / elt, elt))
    {
        let write = &mut |b: &mut [u8]| write_content(&p, run.rank, run.content, run.at, b);
        backend.fill(run.local, run.buf, run.offset, run.len * elt, write)?;
    }
    Ok(())
}

/// Counts wrong elements over every local rank's receive region (`recv_elems` elements at the
/// receive pointer) against [`Collective::expected_contents`], run by run ([`check_runs`]).
pub fn check(backend: &mut dyn Backend, case: &CheckCase) -> Result<u64, Error> {
    check_in_chunks(backend, case, HOST_CHUNK_BYTES)
}

/// [`check`] with the host path's runs cut into pieces of at most `chunk` bytes.
pub(crate) fn check_in_chunks(
    backend: &mut dyn Backend,
    case: &CheckCase,
    chunk: usize,
) -> Result<u64, Error> {
    let p = case.pattern();
    if let Some(k) = backend.kernels() {
        for run in check_runs(case)? {
            let d = DevRun::of(&p, run.rank, run.content, run.at);
            let params = d.params.as_bytes();
            k.count(run.kernel_run(), params, &d.table)?;
        }
        return k.take_wrong();
    }
    let elt = case.dtype.size();
    let mut wrong = 0u64;
    for run in check_runs(case)?
        .into_iter()
        .flat_map(|r| r.chunks(chunk / elt, elt))
    {
        let count = &mut |d: &[u8]| wrong += count_wrong(&p, run.rank, run.content, run.at, d);
        backend.inspect(run.local, run.buf, run.offset, run.len * elt, count)?;
    }
    Ok(wrong)
}
