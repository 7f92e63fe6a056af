//! A rendezvous of the rank workers that can be broken.
//!
//! `std::sync::Barrier` would do, except that a worker that fails in the middle of a call would
//! leave the others waiting forever. Breaking this barrier releases every waiter with an error,
//! and every later wait fails at once, so a failed backend stops instead of hanging.

use std::sync::{Condvar, Mutex, MutexGuard};

/// Returned by [`Barrier::wait`] once the barrier has been broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Broken;

struct State {
    arrived: usize,
    generation: u64,
    broken: bool,
}

/// A reusable barrier for a fixed number of threads.
pub(super) struct Barrier {
    parties: usize,
    state: Mutex<State>,
    released: Condvar,
}

impl Barrier {
    /// A barrier that opens each time `parties` threads have arrived.
    pub(super) fn new(parties: usize) -> Barrier {
        Barrier {
            parties,
            state: Mutex::new(State {
                arrived: 0,
                generation: 0,
                broken: false,
            }),
            released: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The critical sections below cannot panic, so a poisoned lock still holds a
        // consistent state.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Blocks until every party has arrived, or fails if the barrier is (or gets) broken.
    pub(super) fn wait(&self) -> Result<(), Broken> {
        let mut s = self.lock();
        if s.broken {
            return Err(Broken);
        }
        s.arrived += 1;
        if s.arrived == self.parties {
            s.arrived = 0;
            s.generation = s.generation.wrapping_add(1);
            self.released.notify_all();
            return Ok(());
        }
        let generation = s.generation;
        while s.generation == generation && !s.broken {
            s = self.released.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if s.generation != generation {
            Ok(())
        } else {
            Err(Broken)
        }
    }

    /// Releases every waiter with [`Broken`]; permanent.
    pub(super) fn break_all(&self) {
        self.lock().broken = true;
        self.released.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn opens_repeatedly_for_all_parties_and_breaking_releases_a_lone_waiter() {
        let b = Arc::new(Barrier::new(3));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let b = b.clone();
                std::thread::spawn(move || (0..50).all(|_| b.wait().is_ok()))
            })
            .collect();
        for _ in 0..50 {
            assert_eq!(b.wait(), Ok(()));
        }
        for t in threads {
            assert!(t.join().unwrap());
        }
        // One party waits alone; breaking must release it with an error.
        let waiter = {
            let b = b.clone();
            std::thread::spawn(move || b.wait())
        };
        b.break_all();
        assert_eq!(waiter.join().unwrap(), Err(Broken));
        assert_eq!(b.wait(), Err(Broken));
    }
}
