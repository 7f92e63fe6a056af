//! Tests of the host backend: collective semantics against a naive model, reduction kernels
//! against a scalar reference, the plans' freedom from races, and queue behaviour.

mod forward;
mod kernels;
mod model;
mod queue;
mod races;
mod semantics;

use super::gate::Gate;
use std::sync::Arc;

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
        let _ = self.0.open();
    }
}
