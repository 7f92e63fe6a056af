//! A backend adapter that numbers every completion wait in the hang-diagnosis [`Tracker`], so
//! a backend that queues work asynchronously (NCCL on GPUs) shows up in the diagnosis table
//! the same way the MPI backend's own ops do: each rank's last completed wait, and the
//! collective and size of the one it is stuck in. All ranks make the same sequence of waits and
//! bootstrap steps, so the numbers agree across ranks.

use std::sync::Arc;
use std::time::Instant;

use super::track::Tracker;
use crate::bench::backend::forward::Forward;
use crate::bench::backend::{Backend, Call};
use crate::core::error::Error;

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

impl Forward for Tracked {
    fn inner(&self) -> &dyn Backend {
        &*self.inner
    }
    fn inner_mut(&mut self) -> &mut dyn Backend {
        &mut *self.inner
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
}
