//! What the runner tells an [`Observer`]: every collective call it makes on the communicator
//! with a stable [`OpKey`] (collective, bytes, type, op, root, placement, phase, sequence
//! number), the phases it enters and leaves (for NVTX ranges), and the end of each
//! measurement, where the observer may annotate it. The runner knows nothing of NCCL's logs;
//! `crate::bench::tuning` implements the observer that does.

use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::op::RedOp;
use crate::result::tuning::{Tuning, TuningReport};
use crate::result::{Placement, RowKey};
use std::fmt;

/// Why a call was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// The per-sweep warm-up launches.
    Warmup,
    /// The one untimed launch before a measurement.
    Untimed,
    /// The timed loop (with `-G`, the captured launches; replays make no calls).
    Timed,
    /// A `-c` verification launch.
    Verify,
}

impl Phase {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Warmup => "warmup",
            Phase::Untimed => "untimed",
            Phase::Timed => "timed",
            Phase::Verify => "verify",
        }
    }
}

/// One collective call as NCCL receives it on every local rank, numbered within the
/// communicator. Calls of every local rank share one key (rank 0's communicator is the one
/// NCCL's decision lines come from).
#[derive(Debug, Clone, PartialEq)]
pub struct OpKey {
    /// The collective.
    pub collective: Collective,
    /// Element type.
    pub dtype: DataType,
    /// Reduction operator as passed (ignored by data-movement collectives).
    pub op: RedOp,
    /// Root as passed (0 for unrooted collectives).
    pub root: usize,
    /// The NCCL count argument (per rank for all_gather / reduce_scatter).
    pub count: u64,
    /// `count` x type size: the bytes NCCL's decision lines print from 2.24 on.
    pub bytes: u64,
    /// Out-of-place or in-place.
    pub placement: Placement,
    /// Why the call was made.
    pub phase: Phase,
    /// 0-based call number on the communicator since it was created.
    pub seq: u64,
    /// 0-based launch-group number (calls inside one `-m` group share it; others have their
    /// own), for libraries whose opCount counts groups rather than calls.
    pub group: u64,
}

impl fmt::Display for OpKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} root {} {} B {} {} #{}",
            self.collective,
            self.dtype,
            self.op,
            self.root,
            self.bytes,
            self.placement.name(),
            self.phase.name(),
            self.seq
        )
    }
}

/// Watches a run. Every hook defaults to doing nothing.
pub trait Observer {
    /// A collective call was enqueued.
    fn call(&mut self, _op: &OpKey) {}
    /// A phase starts (`name` describes the size, placement and phase).
    fn range_push(&mut self, _name: &str) {}
    /// The innermost phase ended.
    fn range_pop(&mut self) {}
    /// A measurement of `key` and `placement` finished (its calls are done); the returned
    /// annotation is stored in the measurement before the sinks see it.
    fn measured(&mut self, _key: &RowKey, _placement: Placement) -> Option<Tuning> {
        None
    }
    /// At the end of the run: how the observation went, for the footer and JSON.
    fn report(&mut self) -> Option<TuningReport> {
        None
    }
}
