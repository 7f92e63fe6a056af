//! A latch on the rank queues: work queued behind it waits until it opens, or until its time
//! limit passes (so a forgotten or stuck release can never hang the workers). `--timer device`
//! uses it to queue the timed loop before any of it runs; tests use it to keep work queued.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// See the module documentation.
pub(crate) struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
    deadline: Instant,
    /// Set when a worker found the gate still closed at the deadline and let itself through.
    expired: AtomicBool,
}

impl Gate {
    /// A closed gate that opens by itself after `limit`.
    pub(crate) fn new(limit: Duration) -> Gate {
        Gate {
            open: Mutex::new(false),
            opened: Condvar::new(),
            deadline: Instant::now() + limit,
            expired: AtomicBool::new(false),
        }
    }

    /// Blocks the calling worker until the gate is open or its deadline has passed.
    pub(crate) fn pass(&self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        while !*open {
            let now = Instant::now();
            if now >= self.deadline {
                self.expired.store(true, Ordering::Relaxed);
                *open = true;
                self.opened.notify_all();
                break;
            }
            open = self
                .opened
                .wait_timeout(open, self.deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Lets every worker through; `false` when the deadline had already opened it.
    pub(crate) fn open(&self) -> bool {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        *open = true;
        self.opened.notify_all();
        !self.expired.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreleased_gate_lets_workers_through_at_its_deadline() {
        let gate = Gate::new(Duration::from_millis(20));
        gate.pass();
        assert!(!gate.open(), "the deadline opened it, not the release");
        let gate = Gate::new(Duration::from_secs(60));
        assert!(gate.open());
        gate.pass();
    }
}
