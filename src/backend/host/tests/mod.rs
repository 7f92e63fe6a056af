//! Tests of the host backend: collective semantics against a naive model, reduction kernels
//! against a scalar reference, the plans' freedom from races, and queue behaviour.

mod kernels;
mod model;
mod queue;
mod races;
mod semantics;
mod timing;

use std::sync::{Arc, Condvar, Mutex};

/// A latch the tests put on every rank queue to keep later work queued until they open it.
#[derive(Default)]
pub(super) struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    /// Blocks the calling worker until the gate is open.
    pub(super) fn pass(&self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        while !*open {
            open = self.opened.wait(open).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Lets every worker through.
    pub(super) fn open(&self) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.opened.notify_all();
    }
}

/// Holds the rank queues at a [`Gate`]; opens it when dropped, so a failing test cannot leave
/// workers blocked (and the backend's drop waiting for them).
pub(super) struct Held(pub(super) Arc<Gate>);

impl Held {
    /// Lets the queues run on.
    pub(super) fn open(&self) {
        self.0.open();
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.open();
    }
}
