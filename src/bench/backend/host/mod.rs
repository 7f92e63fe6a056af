//! The host reference backend: ranks are threads of this process and buffers live in host
//! memory. It runs every collective with NCCL's semantics and arithmetic, so it is the oracle
//! of the tests and what a machine without GPUs runs; its times say nothing about NCCL.
//!
//! Layout: `queue` holds the per-rank worker threads and their in-order queues, `exec` runs
//! one call on one worker following the per-collective `plan` (the reduction kernels are
//! `crate::core::reduce`, shared with the MPI backend), `arena` the buffers and their `unsafe` accessors (called only from `exec`),
//! `barrier` the workers' rendezvous.

mod arena;
mod barrier;
mod exec;
mod gate;
mod limits;
mod plan;
mod queue;
mod switches;
#[cfg(test)]
mod tests;

use self::arena::Arena;
use self::queue::{Queues, Task};
use crate::bench::backend::graphs::Graphs;
use crate::bench::backend::{Backend, BackendInfo, Buf, Call, DeviceInfo, EventId, GraphId, Split};
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::host::{mem_available, short_hostname};
use crate::core::op::RedOp;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The header line every host-backend run prints, so nobody mistakes its numbers for NCCL's.
pub const HEADER_LINE: &str = "# backend: host (ranks are threads of this process, buffers in \
                               host memory; times are NOT NCCL's)";

/// Where `-c` checks ran, named in every backend's header (the NCCL backend says device or
/// host and why); here the buffers are host memory, so always the host.
pub const VERIFY_LINE: &str = "# verify: host (buffers in host memory)";

/// Something a rank queue runs, as launched or as recorded in a graph.
#[derive(Clone)]
enum Item {
    Call(Arc<Call>),
    Event(usize),
}

/// Collectives on host threads; see the module doc.
pub struct HostBackend {
    info: BackendInfo,
    hostname: String,
    queues: Queues,
    arena: Arc<Arena>,
    /// Open `group_start`s.
    groups: usize,
    /// Graph capture and the recorded graphs.
    graphs: Graphs<Item>,
    /// The gate of the last `hold`, until released.
    gate: Option<Arc<gate::Gate>>,
    /// Hidden test switches (a stalled launch, corrupted output).
    switches: switches::Switches,
}

impl Drop for HostBackend {
    /// A held gate is opened first, so the workers can be joined.
    fn drop(&mut self) {
        for g in [self.gate.take(), self.switches.stall.take()]
            .into_iter()
            .flatten()
        {
            let _ = g.open();
        }
    }
}

impl HostBackend {
    /// A communicator of `nranks` ranks, all local, with one worker thread each and empty
    /// buffers.
    pub fn new(nranks: usize) -> Result<HostBackend, Error> {
        if nranks == 0 {
            return Err(Error::usage("the host backend needs at least one rank"));
        }
        limits::check_rank_threads(nranks, &limits::Limits::current(), mem_available())?;
        Ok(HostBackend {
            info: BackendInfo {
                name: crate::result::BackendKind::Host,
                nranks,
                first_rank: 0,
                local_ranks: nranks,
                header_lines: vec![HEADER_LINE.to_string(), VERIFY_LINE.to_string()],
                nccl_headers: None,
                nccl_library: None,
                memory_per_rank: mem_available().map(|m| m / nranks as u64),
                device_memory: None,
            },
            hostname: short_hostname(),
            queues: Queues::start(nranks)?,
            arena: Arc::new(Arena::new(nranks, 0, 0)?),
            groups: 0,
            graphs: Graphs::new("host"),
            gate: None,
            switches: switches::Switches::from_env(),
        })
    }

    /// Records `item` into the open capture, or enqueues it on every rank.
    fn submit(&mut self, item: Item) {
        let Some(item) = self.graphs.record(item) else {
            return;
        };
        match item {
            Item::Call(call) => {
                let arena = &self.arena;
                self.queues
                    .push_all(|| Task::Run(call.clone(), arena.clone()));
            }
            Item::Event(id) => self.queues.push_all(|| Task::Mark(id)),
        }
    }

    /// Exclusive access to a rank's bytes once every queue is idle.
    fn bytes(
        &mut self,
        local: usize,
        buf: Buf,
        offset: usize,
        len: usize,
    ) -> Result<&mut [u8], Error> {
        self.queues.wait(None)?;
        let n = self.info.nranks;
        if local >= n {
            return Err(Error::Backend(format!(
                "host backend: rank {local} does not exist ({n} ranks)"
            )));
        }
        Arc::get_mut(&mut self.arena)
            .ok_or_else(|| Error::Backend("host backend: buffers are still in use".into()))?
            .bytes_mut(local, buf, offset, len)
    }

    /// Blocks every queue until the returned guard opens (tests keep work queued with it).
    #[cfg(test)]
    fn hold_queues(&mut self) -> tests::Held {
        let gate = Arc::new(gate::Gate::new(Duration::from_secs(600)));
        self.queues.push_all(|| Task::Hold(gate.clone()));
        tests::Held(gate)
    }
}

impl Backend for HostBackend {
    fn info(&self) -> &BackendInfo {
        &self.info
    }

    /// Every rank is a thread of this process: each group is a new host backend of its size.
    fn split(&mut self, colors: &[Option<usize>]) -> Result<Split, Error> {
        if colors.len() != self.info.local_ranks {
            return Err(Error::Backend(format!(
                "host backend: {} colours for {} ranks",
                colors.len(),
                self.info.local_ranks
            )));
        }
        let mut sizes = std::collections::BTreeMap::<usize, usize>::new();
        for c in colors.iter().flatten() {
            *sizes.entry(*c).or_default() += 1;
        }
        sizes
            .into_iter()
            .map(|(c, n)| Ok((c, Box::new(HostBackend::new(n)?) as Box<dyn Backend>)))
            .collect()
    }

    fn devices(&self) -> Vec<DeviceInfo> {
        (0..self.info.nranks)
            .map(|rank| DeviceInfo {
                rank,
                group: 0,
                pid: std::process::id(),
                hostname: self.hostname.clone(),
                device: rank as i32,
                pci: (0, 0, 0),
                name: "host-thread".to_string(),
            })
            .collect()
    }

    fn supports(&self, _dtype: DataType, _op: RedOp) -> bool {
        true
    }

    fn allocate(&mut self, send_bytes: usize, recv_bytes: usize) -> Result<(), Error> {
        self.queues.wait(None)?;
        let n = self.info.nranks;
        // Free the old buffers before taking new ones.
        self.arena = Arc::new(Arena::new(n, 0, 0)?);
        self.arena = Arc::new(Arena::new(n, send_bytes, recv_bytes)?);
        Ok(())
    }

    fn fill(
        &mut self,
        local: usize,
        buf: Buf,
        offset: usize,
        len: usize,
        f: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), Error> {
        f(self.bytes(local, buf, offset, len)?);
        Ok(())
    }

    fn inspect(
        &mut self,
        local: usize,
        buf: Buf,
        offset: usize,
        len: usize,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(), Error> {
        if let Some(at) = self.switches.corrupt_in(local, buf, offset, len) {
            self.bytes(local, buf, at, 1)?[0] ^= 0xff;
        }
        f(self.bytes(local, buf, offset, len)?);
        Ok(())
    }

    fn group_start(&mut self) -> Result<(), Error> {
        self.groups += 1;
        Ok(())
    }

    fn group_end(&mut self) -> Result<(), Error> {
        self.groups = self
            .groups
            .checked_sub(1)
            .ok_or_else(|| Error::Backend("host backend: group_end without group_start".into()))?;
        Ok(())
    }

    fn launch(&mut self, call: &Call) -> Result<(), Error> {
        plan::check(call, self.info.nranks, |r, b| self.arena.len(r, b))?;
        if let Some(gate) = self.switches.launched(call) {
            self.queues.push_all(|| Task::Hold(gate.clone()));
        }
        self.submit(Item::Call(Arc::new(call.clone())));
        Ok(())
    }

    fn wait(&mut self, deadline: Option<Instant>) -> Result<(), Error> {
        self.queues.wait(deadline)
    }

    fn hold(&mut self) -> Result<(), Error> {
        if self.graphs.capturing() {
            return Err(Error::Backend(
                "host backend: hold while capturing a graph".into(),
            ));
        }
        let gate = Arc::new(gate::Gate::new(crate::bench::backend::HOLD_LIMIT));
        self.queues.push_all(|| Task::Hold(gate.clone()));
        if let Some(old) = self.gate.replace(gate) {
            let _ = old.open();
        }
        Ok(())
    }

    fn release(&mut self) -> Result<bool, Error> {
        Ok(self.gate.take().is_none_or(|g| g.open()))
    }

    fn reserve_events(&mut self, n: usize) -> Result<(), Error> {
        self.queues.reserve_events(n);
        Ok(())
    }

    fn record_event(&mut self) -> Result<EventId, Error> {
        let id = self.queues.new_event();
        self.submit(Item::Event(id));
        Ok(EventId(id))
    }

    fn event_elapsed(&mut self, start: EventId, end: EventId) -> Result<Duration, Error> {
        self.queues.elapsed(start.0, end.0)
    }

    fn release_events(&mut self) -> Result<(), Error> {
        self.queues.release_events();
        Ok(())
    }

    fn begin_capture(&mut self) -> Result<(), Error> {
        self.graphs.begin()
    }

    fn end_capture(&mut self) -> Result<GraphId, Error> {
        self.graphs.end()
    }

    /// Replays a graph's calls; they are checked against the current buffers when they run,
    /// and a failure is returned by the next wait.
    fn launch_graph(&mut self, graph: GraphId) -> Result<(), Error> {
        for item in self.graphs.items(graph)? {
            self.submit(item);
        }
        Ok(())
    }

    fn destroy_graphs(&mut self) -> Result<(), Error> {
        self.graphs.destroy();
        Ok(())
    }
}
