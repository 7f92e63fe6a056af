//! The interface between the runner and whatever executes collectives (host threads, NCCL on
//! GPUs, MPI). A backend owns the local ranks' buffers and an in-order queue per rank (a CUDA
//! stream, or a worker thread); the runner only enqueues calls, waits, and reads or writes
//! buffers while the queues are idle.

use crate::core::collective::{Collective, Traffic};
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::result::DeviceInfo;

pub mod forward;
pub mod graphs;
pub mod host;
pub mod nccl;

/// The backends of [`Backend::split`]: each group's colour and its backend.
pub type Split = Vec<(usize, Box<dyn Backend>)>;

/// How long a [`Backend::hold`] gate stays closed at most.
pub const HOLD_LIMIT: Duration = Duration::from_secs(5);

/// Which of a rank's two allocations a pointer refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buf {
    /// The send allocation.
    Send,
    /// The receive allocation (also the shared buffer of in-place calls).
    Recv,
}

/// A pointer into one of a rank's allocations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufPtr {
    /// Which allocation.
    pub buf: Buf,
    /// Byte offset from the allocation's start.
    pub offset: usize,
}

/// The arguments of one local rank for one collective call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankArgs {
    /// Send pointer.
    pub send: BufPtr,
    /// Receive pointer.
    pub recv: BufPtr,
}

/// One collective call on every local rank, as NCCL would receive it.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Which collective.
    pub coll: Collective,
    /// Element type.
    pub dtype: DataType,
    /// Reduction operator (ignored by data-movement collectives).
    pub op: RedOp,
    /// Root rank (ignored by unrooted collectives).
    pub root: usize,
    /// The NCCL count argument (see [`crate::core::collective::Shape::count`]).
    pub count: usize,
    /// alltoallv's traffic: what each pair sends for this count.
    pub traffic: Arc<Traffic>,
    /// Per local rank pointers, indexed by local rank.
    pub ranks: Vec<RankArgs>,
}

/// A point in a rank queue's timeline, recorded by [`Backend::record_event`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventId(pub usize);

/// A recorded sequence of calls that can be replayed (CUDA graphs; `-G`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphId(pub usize);

/// Static facts about a backend instance.
#[derive(Debug, Clone, PartialEq)]
pub struct BackendInfo {
    /// Which backend this is.
    pub name: crate::result::BackendKind,
    /// Total ranks in the communicator.
    pub nranks: usize,
    /// Global rank of local rank 0; local rank i is global rank `first_rank + i`.
    pub first_rank: usize,
    /// Number of ranks this process drives.
    pub local_ranks: usize,
    /// Extra `#` header lines (e.g. the host backend's warning that numbers are not NCCL's).
    pub header_lines: Vec<String>,
    /// NCCL header version code, when the backend talks to NCCL.
    pub nccl_headers: Option<i32>,
    /// NCCL runtime version code, when the backend talks to NCCL.
    pub nccl_library: Option<i32>,
    /// Bytes of memory a rank may allocate in total, when known (a hard limit: more is refused).
    pub memory_per_rank: Option<u64>,
    /// The smallest share of device memory a rank has (a device's total memory over the local
    /// ranks on it), for nccl-tests' clamp of `-e` ([`crate::bench::plan::clamp_max_bytes`]);
    /// `None` where buffers live in host memory.
    pub device_memory: Option<u64>,
}

/// Executes collectives for the local ranks.
///
/// Calls are enqueued in order on every local rank's queue; [`Backend::wait`] blocks until all
/// queues drain. [`Backend::fill`] and [`Backend::inspect`] may only be used while the queues are
/// idle (after `wait`).
pub trait Backend {
    /// Facts about this instance.
    fn info(&self) -> &BackendInfo;

    /// One entry per local rank.
    fn devices(&self) -> Vec<DeviceInfo>;

    /// Whether this backend can run `dtype` with `op` (library version limits).
    fn supports(&self, dtype: DataType, op: RedOp) -> bool;

    /// Allocates (or re-allocates) every local rank's send and receive buffers.
    fn allocate(&mut self, send_bytes: usize, recv_bytes: usize) -> Result<(), Error>;

    /// Lets `f` write `len` bytes at `offset` of a local rank's allocation.
    fn fill(
        &mut self,
        local: usize,
        buf: Buf,
        offset: usize,
        len: usize,
        f: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), Error>;

    /// Lets `f` read `len` bytes at `offset` of a local rank's allocation.
    fn inspect(
        &mut self,
        local: usize,
        buf: Buf,
        offset: usize,
        len: usize,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(), Error>;

    /// Opens an aggregation group (`ncclGroupStart`).
    fn group_start(&mut self) -> Result<(), Error>;

    /// Closes an aggregation group (`ncclGroupEnd`); the group's calls are then launched.
    fn group_end(&mut self) -> Result<(), Error>;

    /// Enqueues one collective on every local rank.
    fn launch(&mut self, call: &Call) -> Result<(), Error>;

    /// Blocks until every local queue is idle, or returns [`Error::Timeout`] after `deadline`.
    fn wait(&mut self, deadline: Option<Instant>) -> Result<(), Error>;

    /// Makes sure the next `n` [`Backend::record_event`] calls find their events already
    /// created, so that a timed section creates none while it is timed. Events are kept and
    /// reused after [`Backend::release_events`]; a backend whose events cost nothing to make
    /// needs nothing here.
    fn reserve_events(&mut self, _n: usize) -> Result<(), Error> {
        Ok(())
    }

    /// Enqueues a timestamp on every local queue, in the next reserved event when one is left
    /// (else in a new one).
    fn record_event(&mut self) -> Result<EventId, Error>;

    /// Time between two recorded events, the maximum over local ranks. Both must have completed.
    fn event_elapsed(&mut self, start: EventId, end: EventId) -> Result<Duration, Error>;

    /// Starts recording launches into a graph instead of executing them.
    fn begin_capture(&mut self) -> Result<(), Error>;

    /// Ends recording and returns the graph.
    fn end_capture(&mut self) -> Result<GraphId, Error>;

    /// Enqueues one replay of a graph.
    fn launch_graph(&mut self, graph: GraphId) -> Result<(), Error>;

    /// Drops every recorded graph.
    fn destroy_graphs(&mut self) -> Result<(), Error>;

    /// Queues a gate on every local queue: work enqueued after it waits until
    /// [`Backend::release`] (or a safety limit of [`HOLD_LIMIT`], so nothing can hang). With
    /// events recorded right after it, this times a loop without the host's launch cost
    /// (`--timer device`).
    fn hold(&mut self) -> Result<(), Error> {
        Err(Error::usage(format!(
            "--timer device is not supported by the {} backend",
            self.info().name
        )))
    }

    /// Opens the gate of [`Backend::hold`]; `Ok(false)` when the safety limit had already
    /// opened it (enqueueing took longer than the limit, so the device time includes part of
    /// it).
    fn release(&mut self) -> Result<bool, Error> {
        Ok(true)
    }

    /// Ends the use of the events recorded so far (the runner calls it once it has read their
    /// times): their ids become invalid, and their events may be reused.
    fn release_events(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// The `-M 1` footer value (`Initialization ... | Total ...`), where the backend has device
    /// memory to report.
    fn memory_report(&mut self) -> Result<Option<String>, Error> {
        Ok(None)
    }

    /// Releases everything on the normal path (communicators finalized and destroyed), so a
    /// failure there is reported rather than lost in a destructor.
    fn close(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// Sub-communicators (`ncclbench locate`): `colors` gives each local rank's group, `None`
    /// for a rank in no group this time. Each group's ranks keep their global order. Returns
    /// one backend per group this process has ranks in, in colour order; collective over the
    /// whole job (every process calls it with the colours of its own ranks).
    fn split(&mut self, _colors: &[Option<usize>]) -> Result<Split, Error> {
        Err(Error::usage(format!(
            "the {} backend cannot make sub-communicators",
            self.info().name
        )))
    }

    /// The verification kernels where the buffers live, when this backend runs them
    /// (`--verify device`, or `auto` where they loaded); `None` verifies on the host through
    /// [`Backend::fill`] and [`Backend::inspect`].
    fn kernels(&mut self) -> Option<&mut dyn DeviceKernels> {
        None
    }
}

/// Where a kernel runs: `elems` elements at byte `offset` of local rank `local`'s `buf`.
#[derive(Clone, Copy, Debug)]
pub struct KernelRun {
    /// Local rank.
    pub local: usize,
    /// Which allocation.
    pub buf: Buf,
    /// Byte offset of the run's first element.
    pub offset: usize,
    /// Elements.
    pub elems: usize,
}

/// The verification kernels of `kernels/verify.cuh` on a backend's own buffers. A run is
/// `elems` elements at byte `offset` of a local rank's allocation; `params` is the kernels'
/// parameter block (`vf_params`) and `table` the sum pattern's leader table (may be empty).
/// Launches are queued on the rank's stream, after everything queued there before (so a fill
/// lands before the collective that reads it), and all ranks run together.
pub trait DeviceKernels {
    /// Queues a fill of the run.
    fn fill(&mut self, at: KernelRun, params: &[u8], table: &[i64]) -> Result<(), Error>;

    /// Queues a count of the run's wrong elements into the rank's counter.
    fn count(&mut self, at: KernelRun, params: &[u8], table: &[i64]) -> Result<(), Error>;

    /// Waits for every rank's queued work and returns the sum of their counters (one integer
    /// per rank crosses to the host), which start again from zero.
    fn take_wrong(&mut self) -> Result<u64, Error>;

    /// Waits for every rank's queued fills.
    fn finish(&mut self) -> Result<(), Error>;
}

/// The pointers of `rank` for one call: out-of-place uses the two allocations at `base`;
/// in-place uses the receive allocation for both, at the table's in-place offsets. `base` is the
/// byte offset (buffer rotation plus `-u` misalignment) shared by every rank.
pub fn rank_args(
    coll: Collective,
    shape: &crate::core::collective::Shape,
    dtype: DataType,
    rank: usize,
    placement: crate::result::Placement,
    base: usize,
) -> RankArgs {
    use crate::result::Placement;
    match placement {
        Placement::OutOfPlace => RankArgs {
            send: BufPtr {
                buf: Buf::Send,
                offset: base,
            },
            recv: BufPtr {
                buf: Buf::Recv,
                offset: base,
            },
        },
        Placement::InPlace => {
            let (s, r) = coll.in_place_offsets(shape, rank);
            let elt = dtype.size();
            RankArgs {
                send: BufPtr {
                    buf: Buf::Recv,
                    offset: base + s * elt,
                },
                recv: BufPtr {
                    buf: Buf::Recv,
                    offset: base + r * elt,
                },
            }
        }
    }
}
