//! MPI support (cargo feature `mpi`, rsmpi without default features): joining the job a
//! launcher started, the split into groups, the bootstrap, `--backend mpi`, and the
//! out-of-band channel of the `-T` hang diagnosis.
//!
//! Local rank ("local process"): nccl-tests' rule, the number of lower world ranks with the
//! same host hash ([`crate::bench::job::host`]), all-gathered at start.

mod backend;
mod boot;
mod coord;
mod exec;
mod nb;
mod oob;
mod track;
mod tracked;

pub use backend::MpiBackend;
pub use boot::MpiBootstrap;
pub use coord::MpiCoordinator;
pub use oob::Oob;
pub use track::Tracker;

use crate::bench::backend::DeviceInfo;
use crate::core::error::Error;
use mpi::topology::{Color, Communicator, SimpleCommunicator};
use mpi::traits::{AsRaw, CommunicatorCollectives, Root};
use std::sync::Arc;
use std::time::Duration;

/// This process's place in an MPI job.
pub struct MpiJob {
    group: SimpleCommunicator,
    world: SimpleCommunicator,
    /// World rank and size.
    pub rank: usize,
    /// Processes in the world.
    pub size: usize,
    /// Split colour (`NCCL_TESTS_SPLIT*`; 0 without a split).
    pub color: usize,
    /// Rank and size in the colour's group.
    pub group_rank: usize,
    /// Processes in the group.
    pub group_size: usize,
    /// Rank among the processes of this host.
    pub local_process: usize,
    tracker: Arc<Tracker>,
    timeout: Option<Duration>,
    /// The hang-diagnosis channel (with `-T` only).
    pub oob: Option<Oob>,
    // Last: dropping it finalizes MPI, after the communicators are freed.
    _universe: mpi::environment::Universe,
}

fn int(v: usize) -> Result<i32, Error> {
    i32::try_from(v).map_err(|_| Error::usage(format!("split colour {v} is too large for MPI")))
}

/// Initialises MPI and joins the job; collective over the world.
pub fn init(timeout: Option<Duration>) -> Result<MpiJob, Error> {
    let universe =
        mpi::initialize().ok_or_else(|| Error::Backend("MPI was already initialised".into()))?;
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let host = crate::core::host::short_hostname();
    let mine = crate::bench::job::host::this_host();
    let mut hashes = vec![0u64; size];
    world.all_gather_into(&mine, &mut hashes[..]);
    let local_process = crate::bench::job::host::local_rank(&hashes, rank);
    let var = |k: &str| std::env::var(k).ok();
    // A process whose split variables are malformed joins colour 0 instead of leaving the
    // others waiting in the split: the plan guard, the job's first exchange after this,
    // refuses the variables on every process with one line.
    let color = crate::bench::job::split::color(
        rank,
        var("NCCL_TESTS_SPLIT_MASK").as_deref(),
        var("NCCL_TESTS_SPLIT").as_deref(),
    )
    .unwrap_or(0);
    let group = world
        .split_by_color(Color::with_value(int(color)?))
        .ok_or_else(|| Error::Backend("MPI_Comm_split returned no communicator".into()))?;
    let (group_rank, group_size) = (group.rank() as usize, group.size() as usize);
    let tracker = Arc::new(Tracker::new(rank, host));
    // The channel is opened collectively, so only when every process has -T; processes that
    // disagree open none and the plan guard names the difference.
    let mut has = [u8::from(timeout.is_some()); 2];
    has[1] = 1 - has[0];
    let mut agreed = [0u8; 2];
    world.all_reduce_into(
        &has[..],
        &mut agreed[..],
        mpi::collective::SystemOperation::max(),
    );
    let every = agreed == [1, 0];
    let oob = match timeout.filter(|_| every) {
        None => None,
        Some(t) => Some(open_oob(&world, rank, size, &hashes, t, &tracker)?),
    };
    Ok(MpiJob {
        group,
        world,
        rank,
        size,
        color,
        group_rank,
        group_size,
        local_process,
        tracker,
        timeout,
        oob,
        _universe: universe,
    })
}

/// Sets up the channel: rank 0 listens and broadcasts its address, the others connect.
fn open_oob(
    world: &SimpleCommunicator,
    rank: usize,
    size: usize,
    hashes: &[u64],
    t: Duration,
    tracker: &Arc<Tracker>,
) -> Result<Oob, Error> {
    let mut addr = [0u8; 128];
    let mut listener = None;
    if rank == 0 {
        let (l, a) = oob::listen(hashes.iter().all(|&h| h == hashes[0]))?;
        let n = a.len().min(addr.len());
        addr[..n].copy_from_slice(&a.as_bytes()[..n]);
        listener = Some(l);
    }
    world.process_at_rank(0).broadcast_into(&mut addr[..]);
    let end = addr.iter().position(|&b| b == 0).unwrap_or(addr.len());
    let text = String::from_utf8_lossy(&addr[..end]).to_string();
    let oob = match listener {
        Some(l) => Oob::root(l, size, t.as_secs(), tracker.clone()),
        None => Oob::member(&text, rank, t.as_secs(), tracker.clone())?,
    };
    // Everyone connected before any work starts.
    world.barrier();
    Ok(oob)
}

impl MpiJob {
    /// The bootstrap over the world.
    pub fn bootstrap(&self) -> MpiBootstrap {
        MpiBootstrap {
            world: nb::Comm(self.world.as_raw()),
            rank: self.rank,
            size: self.size,
            timeout: self.timeout,
            tracker: self.tracker.clone(),
            finish: self.oob.as_ref().map(Oob::finish_handle),
        }
    }

    /// The point-to-point coordinator of `ncclbench locate` over the world.
    pub fn coordinator(&self) -> MpiCoordinator<'_> {
        MpiCoordinator {
            world: nb::Comm(self.world.as_raw()),
            rank: self.rank,
            size: self.size,
            oob: self.oob.as_ref(),
        }
    }

    /// `--backend mpi` over this process's group.
    pub fn backend(&self) -> MpiBackend {
        let device = DeviceInfo {
            rank: self.group_rank,
            group: self.color,
            pid: std::process::id(),
            hostname: crate::core::host::short_hostname(),
            device: self.local_process as i32,
            pci: (0, 0, 0),
            name: "mpi-process".to_string(),
        };
        MpiBackend::new(
            nb::Comm(self.group.as_raw()),
            self.group_size,
            self.group_rank,
            device,
            self.tracker.clone(),
        )
    }

    /// `backend` with its completion waits numbered for the hang diagnosis (the NCCL backend).
    pub fn tracked(
        &self,
        backend: Box<dyn crate::bench::backend::Backend>,
    ) -> Box<dyn crate::bench::backend::Backend> {
        Box::new(tracked::Tracked::new(backend, self.tracker.clone()))
    }

    /// Broadcasts `bytes` from the group's rank 0 (the NCCL unique id of the group).
    pub fn broadcast_in_group(&self, bytes: &mut [u8]) {
        self.group.process_at_rank(0).broadcast_into(bytes);
    }
}
