//! A backend adapter that numbers every completion wait in the hang-diagnosis [`Tracker`], so
//! a backend that queues work asynchronously (NCCL on GPUs) shows up in the diagnosis table
//! the same way the MPI backend's own ops do: each rank's last completed wait, and the
//! collective and size of the one it is stuck in. All ranks make the same sequence of waits and
//! bootstrap steps, so the numbers agree across ranks.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::track::Tracker;
use crate::bench::backend::{Backend, BackendInfo, Buf, Call, DeviceInfo, EventId, GraphId};
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;

/// See the module documentation.
pub struct Tracked {
    inner: Box<dyn Backend>,
    tracker: Arc<Tracker>,
    /// The last call launched: what a wait is waiting for.
    last: (String, u64),
}

impl Tracked {
    /// Wraps `inner`.
    pub fn new(inner: Box<dyn Backend>, tracker: Arc<Tracker>) -> Self {
        Tracked {
            inner,
            tracker,
            last: ("nothing".into(), 0),
        }
    }
}

impl Backend for Tracked {
    fn info(&self) -> &BackendInfo {
        self.inner.info()
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        self.inner.devices()
    }
    fn supports(&self, dtype: DataType, op: RedOp) -> bool {
        self.inner.supports(dtype, op)
    }
    fn allocate(&mut self, send_bytes: usize, recv_bytes: usize) -> Result<(), Error> {
        self.inner.allocate(send_bytes, recv_bytes)
    }
    fn fill(
        &mut self,
        local: usize,
        buf: Buf,
        offset: usize,
        len: usize,
        f: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), Error> {
        self.inner.fill(local, buf, offset, len, f)
    }
    fn inspect(
        &mut self,
        local: usize,
        buf: Buf,
        offset: usize,
        len: usize,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(), Error> {
        self.inner.inspect(local, buf, offset, len, f)
    }
    fn group_start(&mut self) -> Result<(), Error> {
        self.inner.group_start()
    }
    fn group_end(&mut self) -> Result<(), Error> {
        self.inner.group_end()
    }
    fn launch(&mut self, call: &Call) -> Result<(), Error> {
        let bytes = (call.count * call.dtype.size()) as u64;
        self.last = (format!("{} {}", call.coll, call.dtype), bytes);
        self.inner.launch(call)
    }
    fn wait(&mut self, deadline: Option<Instant>) -> Result<(), Error> {
        let (what, bytes) = &self.last;
        let seq = self.tracker.enter(what, *bytes, "stream wait");
        let r = self.inner.wait(deadline);
        if r.is_ok() {
            self.tracker.done(seq);
        }
        r
    }
    fn record_event(&mut self) -> Result<EventId, Error> {
        self.inner.record_event()
    }
    fn event_elapsed(&mut self, start: EventId, end: EventId) -> Result<Duration, Error> {
        self.inner.event_elapsed(start, end)
    }
    fn begin_capture(&mut self) -> Result<(), Error> {
        self.inner.begin_capture()
    }
    fn end_capture(&mut self) -> Result<GraphId, Error> {
        self.inner.end_capture()
    }
    fn launch_graph(&mut self, graph: GraphId) -> Result<(), Error> {
        self.inner.launch_graph(graph)
    }
    fn destroy_graphs(&mut self) -> Result<(), Error> {
        self.inner.destroy_graphs()
    }
    fn hold(&mut self) -> Result<(), Error> {
        self.inner.hold()
    }
    fn release(&mut self) -> Result<bool, Error> {
        self.inner.release()
    }
    fn release_events(&mut self) -> Result<(), Error> {
        self.inner.release_events()
    }
    fn memory_report(&mut self) -> Result<Option<String>, Error> {
        self.inner.memory_report()
    }
    fn close(&mut self) -> Result<(), Error> {
        self.inner.close()
    }
}
