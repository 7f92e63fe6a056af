//! A backend adapter that numbers every completion wait in the hang-diagnosis [`Tracker`], so
//! a backend that queues work asynchronously (NCCL on GPUs) shows up in the diagnosis table
//! the same way the MPI backend's own ops do: each rank's last completed wait, and the
//! collective and size of the one it is stuck in. All ranks make the same sequence of waits and
//! bootstrap steps, so the numbers agree across ranks.

use std::fmt::Write;
use std::sync::Arc;
use std::time::Instant;

use super::track::Tracker;
use crate::bench::backend::forward::Forward;
use crate::bench::backend::{Backend, Call};
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::error::Error;

/// See the module documentation.
pub struct Tracked {
    inner: Box<dyn Backend>,
    tracker: Arc<Tracker>,
    /// The last call launched: what a wait is waiting for. Kept as plain values, since a
    /// launch sits in the timed loop; named only when a wait enters the tracker.
    last: Option<(Collective, DataType, u64)>,
    /// The name of `last`, rewritten in place when a wait finds the call changed.
    name: String,
    /// What `name` names.
    named: Option<(Collective, DataType)>,
}

impl Tracked {
    /// Wraps `inner`.
    pub fn new(inner: Box<dyn Backend>, tracker: Arc<Tracker>) -> Self {
        Tracked {
            inner,
            tracker,
            last: None,
            name: String::new(),
            named: None,
        }
    }
}

impl Forward for Tracked {
    fn inner(&self) -> &dyn Backend {
        &*self.inner
    }
    fn inner_mut(&mut self) -> &mut dyn Backend {
        &mut *self.inner
    }
    fn launch(&mut self, call: &Call) -> Result<(), Error> {
        let bytes = (call.count * call.dtype.size()) as u64;
        self.last = Some((call.coll, call.dtype, bytes));
        self.inner.launch(call)
    }
    fn wait(&mut self, deadline: Option<Instant>) -> Result<(), Error> {
        let (call, bytes) = match self.last {
            Some((coll, dtype, bytes)) => (Some((coll, dtype)), bytes),
            None => (None, 0),
        };
        if self.named != call || self.name.is_empty() {
            self.name.clear();
            let _ = match call {
                Some((coll, dtype)) => write!(self.name, "{coll} {dtype}"),
                None => write!(self.name, "nothing"),
            };
            self.named = call;
        }
        let seq = self.tracker.enter(&self.name, bytes, "stream wait");
        let r = self.inner.wait(deadline);
        if r.is_ok() {
            self.tracker.done(seq);
        }
        r
    }
}
