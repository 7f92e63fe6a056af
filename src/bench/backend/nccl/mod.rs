//! The NCCL backend: libnccl and the CUDA driver opened at run time ([`nccl_sys::Nccl`],
//! [`crate::bench::cuda`]), one context, stream, communicator and pair of device buffers per local
//! rank, and the runner's calls issued the way nccl-tests issues them (`launch`).
//!
//! Completion waits poll every stream and `ncclCommGetAsyncError` against the `-T` deadline,
//! aborting the communicators on expiry or error, as nccl-tests' `testStreamSynchronize` does.

mod caps;
mod devices;
mod error;
mod gate;
mod kernels;
mod launch;
mod memory;
mod register;
mod setup;
mod split;
mod staging;
mod sync;
mod teardown;

use std::time::{Duration, Instant};

use crate::bench::backend::{
    Backend, BackendInfo, Buf, Call, DeviceInfo, DeviceKernels, EventId, GraphId, Split,
};
use crate::bench::cuda::{Context, Event, GraphExec, Stream};
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;
use nccl_sys::bindings::ncclComm_t;
use nccl_sys::Nccl;

pub use devices::{DeviceChoice, FIRST_DEVICE_ENV};
pub use kernels::PTX;
pub use setup::{probe, single_process_id, NcclOptions, Probe};

use caps::Caps;
use error::{cuda_err, nccl_err};
use memory::{DevMem, MemoryUse, Registration};

/// One local rank: its device, stream, communicator and buffers.
struct Rank {
    global: usize,
    device: usize,
    context: Context,
    stream: Stream,
    comm: ncclComm_t,
    send: Option<DevMem>,
    recv: Option<DevMem>,
    registrations: Vec<Registration>,
    /// The verification kernels, when device verification runs.
    kernels: Option<kernels::RankKernels>,
}

/// Local ranks on GPUs through NCCL.
pub struct NcclBackend {
    nccl: Nccl,
    info: BackendInfo,
    devices: Vec<DeviceInfo>,
    ranks: Vec<Rank>,
    caps: Caps,
    register: u8,
    memory: MemoryUse,
    /// Events per [`EventId`], one per rank, created by `reserve_events` (or a `record_event`
    /// that found none left) and kept for reuse.
    events: Vec<Vec<Event>>,
    /// Events of `events` recorded since the last `release_events`.
    events_used: usize,
    graphs: Vec<Vec<GraphExec>>,
    /// Host bytes for fills and inspections.
    staging: staging::Staging,
    /// `--timer device` gate words.
    gates: gate::Gates,
    /// The last launch's per-rank arguments, rebuilt in place by the next one.
    launch_args: Vec<launch::Args>,
    /// Which local streams a wait found idle, rebuilt in place by the next wait.
    wait_done: Vec<bool>,
    /// Ranks sharing a GPU without `-T`: the limit every wait gets (NCCL's shared-GPU mode can
    /// lock up, and a hang must end in a message, not a stuck job).
    shared_gpu_wait: Option<Duration>,
    /// Set once the communicators were aborted (after a timeout or an async error).
    aborted: bool,
    closed: bool,
}

impl NcclBackend {
    fn new(
        nccl: Nccl,
        info: BackendInfo,
        devices: Vec<DeviceInfo>,
        ranks: Vec<Rank>,
        caps: Caps,
        register: u8,
        memory: MemoryUse,
    ) -> Self {
        Self {
            nccl,
            info,
            devices,
            ranks,
            caps,
            register,
            memory,
            events: Vec::new(),
            events_used: 0,
            graphs: Vec::new(),
            staging: staging::Staging::default(),
            gates: gate::Gates::default(),
            launch_args: Vec::new(),
            wait_done: Vec::new(),
            shared_gpu_wait: None,
            aborted: false,
            closed: false,
        }
    }

    fn rank(&self, local: usize) -> Result<&Rank, Error> {
        self.ranks
            .get(local)
            .ok_or_else(|| Error::Backend(format!("no local rank {local}")))
    }

    fn buffer(&self, local: usize, buf: Buf) -> Result<&DevMem, Error> {
        let r = self.rank(local)?;
        match buf {
            Buf::Send => r.send.as_ref(),
            Buf::Recv => r.recv.as_ref(),
        }
        .ok_or_else(|| Error::Backend("buffer used before allocate".into()))
    }

    /// `ncclCommAbort` on every communicator (after a timeout or an async error).
    fn abort(&mut self) {
        if self.aborted {
            return;
        }
        self.aborted = true;
        self.gates.release();
        for r in &self.ranks {
            if !r.comm.is_null() {
                let _ = r.context.set_current();
                // SAFETY: a live communicator, aborted once.
                let _ = unsafe { (self.nccl.api().ncclCommAbort)(r.comm) };
            }
        }
    }

    /// Free device memory per device of the local ranks, now.
    fn free_memory(&self) -> Result<std::collections::BTreeMap<usize, u64>, Error> {
        memory::free_by_device(self.ranks.iter().map(|r| (&r.device, &r.context)))
    }

    /// The `-M 1` footer value: device memory used by initialisation, buffers and the run.
    pub fn memory_report(&self) -> Result<String, Error> {
        Ok(memory::memory_line(&self.memory, &self.free_memory()?))
    }
}

impl Drop for NcclBackend {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

impl Backend for NcclBackend {
    fn kernels(&mut self) -> Option<&mut dyn DeviceKernels> {
        if self.ranks.iter().all(|r| r.kernels.is_some()) && !self.ranks.is_empty() {
            Some(self)
        } else {
            None
        }
    }

    fn info(&self) -> &BackendInfo {
        &self.info
    }

    fn devices(&self) -> Vec<DeviceInfo> {
        self.devices.clone()
    }

    fn supports(&self, dtype: DataType, op: RedOp) -> bool {
        self.caps.supports(dtype, op)
    }

    fn allocate(&mut self, send_bytes: usize, recv_bytes: usize) -> Result<(), Error> {
        self.deregister()?;
        for r in &mut self.ranks {
            r.send = None;
            r.recv = None;
            r.send = Some(DevMem::alloc(&self.nccl, &r.context, send_bytes)?);
            r.recv = Some(DevMem::alloc(&self.nccl, &r.context, recv_bytes)?);
        }
        self.register_buffers()?;
        self.memory.after_alloc = self.free_memory()?;
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
        let mut staging = std::mem::take(&mut self.staging);
        let bytes = staging.take(len);
        f(bytes);
        let stream = &self.rank(local)?.stream;
        let result = self.buffer(local, buf)?.write(stream, offset, bytes);
        self.staging = staging;
        result
    }

    fn inspect(
        &mut self,
        local: usize,
        buf: Buf,
        offset: usize,
        len: usize,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(), Error> {
        let mut staging = std::mem::take(&mut self.staging);
        let bytes = staging.take(len);
        let stream = &self.rank(local)?.stream;
        let result = self.buffer(local, buf)?.read(stream, offset, bytes);
        if result.is_ok() {
            f(bytes);
        }
        self.staging = staging;
        result
    }

    fn group_start(&mut self) -> Result<(), Error> {
        // SAFETY: no arguments.
        let code = unsafe { (self.nccl.api().ncclGroupStart)() };
        self.nccl.check("ncclGroupStart", code).map_err(nccl_err)
    }

    fn group_end(&mut self) -> Result<(), Error> {
        // SAFETY: closes a group the runner opened.
        let code = unsafe { (self.nccl.api().ncclGroupEnd)() };
        self.nccl.check("ncclGroupEnd", code).map_err(nccl_err)
    }

    fn launch(&mut self, call: &Call) -> Result<(), Error> {
        self.launch_call(call)
    }

    fn wait(&mut self, deadline: Option<Instant>) -> Result<(), Error> {
        self.wait_all(deadline)
    }

    fn hold(&mut self) -> Result<(), Error> {
        let streams: Vec<_> = self.ranks.iter().map(|r| (&r.context, &r.stream)).collect();
        self.gates.hold(&streams)
    }

    fn release(&mut self) -> Result<bool, Error> {
        Ok(self.gates.release())
    }

    fn reserve_events(&mut self, n: usize) -> Result<(), Error> {
        while self.events.len() < self.events_used + n {
            let mut events = Vec::with_capacity(self.ranks.len());
            for r in &self.ranks {
                events.push(Event::new(&r.context, true).map_err(cuda_err)?);
            }
            self.events.push(events);
        }
        Ok(())
    }

    fn record_event(&mut self) -> Result<EventId, Error> {
        // Only when the runner reserved too few: then the event is made here.
        self.reserve_events(1)?;
        let id = self.events_used;
        for (e, r) in self.events[id].iter().zip(&self.ranks) {
            e.record(&r.stream).map_err(cuda_err)?;
        }
        self.events_used += 1;
        Ok(EventId(id))
    }

    fn event_elapsed(&mut self, start: EventId, end: EventId) -> Result<Duration, Error> {
        let used = &self.events[..self.events_used];
        let (s, e) = match (used.get(start.0), used.get(end.0)) {
            (Some(s), Some(e)) => (s, e),
            _ => return Err(Error::Backend("unknown event".into())),
        };
        let mut most = 0f32;
        for (a, b) in s.iter().zip(e) {
            most = most.max(Event::elapsed_ms(a, b).map_err(cuda_err)?);
        }
        Ok(Duration::from_secs_f64(f64::from(most.max(0.0)) / 1e3))
    }

    fn release_events(&mut self) -> Result<(), Error> {
        // Kept for the next section's records: re-recording an event replaces its timestamp.
        self.events_used = 0;
        Ok(())
    }

    fn begin_capture(&mut self) -> Result<(), Error> {
        for r in &self.ranks {
            r.stream.begin_capture().map_err(cuda_err)?;
        }
        Ok(())
    }

    fn end_capture(&mut self) -> Result<GraphId, Error> {
        let mut execs = Vec::with_capacity(self.ranks.len());
        for r in &self.ranks {
            let graph = r.stream.end_capture().map_err(cuda_err)?;
            execs.push(graph.instantiate().map_err(cuda_err)?);
        }
        self.graphs.push(execs);
        Ok(GraphId(self.graphs.len() - 1))
    }

    fn launch_graph(&mut self, graph: GraphId) -> Result<(), Error> {
        let execs = self
            .graphs
            .get(graph.0)
            .ok_or_else(|| Error::Backend("unknown graph".into()))?;
        for (exec, r) in execs.iter().zip(&self.ranks) {
            exec.launch(&r.stream).map_err(cuda_err)?;
        }
        Ok(())
    }

    fn destroy_graphs(&mut self) -> Result<(), Error> {
        self.graphs.clear();
        Ok(())
    }

    fn memory_report(&mut self) -> Result<Option<String>, Error> {
        NcclBackend::memory_report(self).map(Some)
    }

    fn close(&mut self) -> Result<(), Error> {
        self.shutdown()
    }

    fn split(&mut self, colors: &[Option<usize>]) -> Result<Split, Error> {
        self.split_ranks(colors)
    }
}
