//! `--backend mpi`: one rank per process, buffers in host memory, collectives through MPI.
//!
//! Launches are queued and run in order by [`Backend::wait`] (like a stream that starts when
//! synchronised): each call is one nonblocking MPI collective polled under the `-T` deadline
//! ([`super::exec`]). Events are timestamps taken when the queue reaches them, graphs record
//! launches and replay them, and `-m` groups need nothing more (the queue already runs a
//! group's calls together at the next wait).

use super::exec::{self, Mem};
use super::nb::Comm;
use super::track::Tracker;
use crate::bench::backend::graphs::Graphs;
use crate::bench::backend::{Backend, BackendInfo, Buf, Call, DeviceInfo, EventId, GraphId, Split};
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone)]
enum Item {
    Call(Arc<Call>),
    Event(usize),
}

/// The MPI backend; see the module doc.
pub struct MpiBackend {
    info: BackendInfo,
    device: DeviceInfo,
    comm: Comm,
    tracker: Arc<Tracker>,
    mem: Mem,
    queue: Vec<Item>,
    events: Vec<Option<Instant>>,
    graphs: Graphs<Item>,
    /// Set after a timeout: the scratch buffers were leaked to MPI, nothing more may run.
    stuck: bool,
    /// Whether `comm` was made by [`Backend::split`] and is freed with the backend.
    owned: bool,
}

impl Drop for MpiBackend {
    fn drop(&mut self) {
        // After a timeout a request may still use the communicator: it is left to MPI.
        if self.owned && !self.stuck {
            super::nb::free(self.comm);
        }
    }
}

impl MpiBackend {
    pub(super) fn new(
        comm: Comm,
        nranks: usize,
        rank: usize,
        device: DeviceInfo,
        tracker: Arc<Tracker>,
    ) -> MpiBackend {
        MpiBackend {
            info: BackendInfo {
                name: crate::result::BackendKind::Mpi,
                nranks,
                first_rank: rank,
                local_ranks: 1,
                header_lines: vec![
                    "# backend: mpi (one rank per process, host buffers, nonblocking MPI \
                     collectives; reductions gather every input and fold it with NCCL's \
                     arithmetic, so times are NOT NCCL's or MPI_Allreduce's)"
                        .to_string(),
                    "# verify: host (buffers in host memory)".to_string(),
                ],
                nccl_headers: None,
                nccl_library: None,
                memory_per_rank: None,
                device_memory: None,
            },
            device,
            comm,
            tracker,
            mem: Mem::default(),
            queue: Vec::new(),
            events: Vec::new(),
            graphs: Graphs::new("mpi"),
            stuck: false,
            owned: false,
        }
    }

    fn submit(&mut self, item: Item) {
        if let Some(item) = self.graphs.record(item) {
            self.queue.push(item);
        }
    }

    fn region(&mut self, buf: Buf, offset: usize, len: usize) -> Result<&mut [u8], Error> {
        if !self.queue.is_empty() {
            return Err(Error::Backend(
                "mpi backend: buffers accessed with calls still queued".into(),
            ));
        }
        let b = self.mem.buf_mut(buf);
        let size = b.len();
        offset
            .checked_add(len)
            .and_then(|end| b.get_mut(offset..end))
            .ok_or_else(|| {
                Error::Backend(format!(
                    "mpi backend: bytes {offset}..+{len} are outside the {buf:?} buffer \
                     ({size} bytes)"
                ))
            })
    }
}

impl Backend for MpiBackend {
    fn info(&self) -> &BackendInfo {
        &self.info
    }

    /// `MPI_Comm_split` of this backend's communicator, ranks ordered as they are here.
    fn split(&mut self, colors: &[Option<usize>]) -> Result<Split, Error> {
        let [color] = colors else {
            return Err(Error::Backend(format!(
                "mpi backend: {} colours for a process's one rank",
                colors.len()
            )));
        };
        let Some(comm) = super::nb::split(self.comm, *color, self.info.first_rank)? else {
            return Ok(Vec::new());
        };
        let (n, r) = super::nb::size_rank(comm)?;
        let mut b = MpiBackend::new(comm, n, r, self.device.clone(), self.tracker.clone());
        b.owned = true;
        Ok(vec![(color.unwrap_or(0), Box::new(b) as Box<dyn Backend>)])
    }

    fn devices(&self) -> Vec<DeviceInfo> {
        vec![self.device.clone()]
    }

    fn supports(&self, _dtype: DataType, _op: RedOp) -> bool {
        true
    }

    fn allocate(&mut self, send_bytes: usize, recv_bytes: usize) -> Result<(), Error> {
        self.mem = Mem::default();
        self.mem.send = vec![0; send_bytes];
        self.mem.recv = vec![0; recv_bytes];
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
        if local != 0 {
            return Err(Error::Backend(format!(
                "mpi backend: no local rank {local}"
            )));
        }
        f(self.region(buf, offset, len)?);
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
        if local != 0 {
            return Err(Error::Backend(format!(
                "mpi backend: no local rank {local}"
            )));
        }
        f(self.region(buf, offset, len)?);
        Ok(())
    }

    fn group_start(&mut self) -> Result<(), Error> {
        Ok(())
    }

    fn group_end(&mut self) -> Result<(), Error> {
        Ok(())
    }

    fn launch(&mut self, call: &Call) -> Result<(), Error> {
        if call.ranks.len() != 1 {
            return Err(Error::Backend(format!(
                "mpi backend: call has arguments for {} local ranks, a process has 1",
                call.ranks.len()
            )));
        }
        self.submit(Item::Call(Arc::new(call.clone())));
        Ok(())
    }

    fn wait(&mut self, deadline: Option<Instant>) -> Result<(), Error> {
        if self.stuck {
            return Err(Error::Backend(
                "mpi backend: an earlier wait timed out".into(),
            ));
        }
        let (n, r) = (self.info.nranks, self.info.first_rank);
        for item in std::mem::take(&mut self.queue) {
            match item {
                Item::Event(id) => {
                    if let Some(slot) = self.events.get_mut(id) {
                        *slot = Some(Instant::now());
                    }
                }
                Item::Call(call) => {
                    let bytes = (call.count * call.dtype.size()) as u64;
                    let seq = self
                        .tracker
                        .enter(call.coll.name(), bytes, "MPI collective");
                    if let Some(stuck) = exec::run(self.comm, n, r, &call, &mut self.mem, deadline)?
                    {
                        self.stuck = true;
                        return Err(Error::Timeout {
                            seconds: 0,
                            what: format!("{} (op {seq})", stuck.what),
                        });
                    }
                    self.tracker.done(seq);
                }
            }
        }
        Ok(())
    }

    fn record_event(&mut self) -> Result<EventId, Error> {
        self.events.push(None);
        let id = self.events.len() - 1;
        self.submit(Item::Event(id));
        Ok(EventId(id))
    }

    fn event_elapsed(&mut self, start: EventId, end: EventId) -> Result<Duration, Error> {
        let at = |e: EventId| self.events.get(e.0).copied().flatten();
        match (at(start), at(end)) {
            (Some(a), Some(b)) => Ok(b.saturating_duration_since(a)),
            _ => Err(Error::Backend(
                "mpi backend: event not recorded or not reached".into(),
            )),
        }
    }

    fn release_events(&mut self) -> Result<(), Error> {
        if self.queue.is_empty() && !self.graphs.capturing() {
            self.events.clear();
        }
        Ok(())
    }

    fn begin_capture(&mut self) -> Result<(), Error> {
        self.graphs.begin()
    }

    fn end_capture(&mut self) -> Result<GraphId, Error> {
        self.graphs.end()
    }

    fn launch_graph(&mut self, graph: GraphId) -> Result<(), Error> {
        let items = self.graphs.items(graph)?;
        self.queue.extend(items);
        Ok(())
    }

    fn destroy_graphs(&mut self) -> Result<(), Error> {
        self.graphs.destroy();
        Ok(())
    }
}
