//! A coordinator for runs that must survive a process that stops answering (`ncclbench
//! locate`): every exchange goes through rank 0 point to point, each bounded by a deadline, so
//! a silent process costs one deadline instead of a hang, and rank 0 can carry on with the
//! others. Unlike [`super::bootstrap::Bootstrap`], nothing here is collective over the world.

use crate::core::error::Error;
use std::time::Instant;

/// How long a receiver waits for a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// Until here in any case.
    pub until: Instant,
    /// Then `patience` more at a time while a process still missing shows progress (its
    /// position in its numbered calls moved since the last look); zero waits no longer.
    pub patience: std::time::Duration,
    /// Never past here.
    pub at_most: Instant,
}

impl Wait {
    /// Until `until`, no longer.
    pub fn until(until: Instant) -> Wait {
        Wait {
            until,
            patience: std::time::Duration::ZERO,
            at_most: until,
        }
    }
}

/// Rank 0 and its point-to-point exchanges with the other processes.
pub trait Coordinator {
    /// This process's rank in the world.
    fn rank(&self) -> usize;
    /// Processes in the world.
    fn size(&self) -> usize;
    /// Every process in `from` (rank 0 included when listed) sends `mine` to rank 0. Rank 0
    /// gets one entry per process: its message, or `None` when it did not come in time (see
    /// [`Wait`]; or the process was not in `from`); the others get an empty list. `step`
    /// numbers the exchange (every process passes the same).
    fn gather(
        &mut self,
        step: u32,
        mine: &str,
        from: &[bool],
        wait: Wait,
    ) -> Result<Vec<Option<String>>, Error>;
    /// Rank 0 sends `msg` to every process in `to` and gets it back itself; another process
    /// gets rank 0's message, or `None` when it did not come by `deadline`.
    fn broadcast(
        &mut self,
        step: u32,
        msg: &str,
        to: &[bool],
        deadline: Instant,
    ) -> Result<Option<String>, Error>;
    /// Ends every process of the job with `status`, those that stopped answering included,
    /// without the collective shutdown they could never join. Never returns.
    fn end_all(&self, status: u8) -> !;
}

/// The coordinator of a single process: its own messages come straight back.
#[derive(Debug, Default)]
pub struct Alone;

impl Coordinator for Alone {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn gather(
        &mut self,
        _step: u32,
        mine: &str,
        from: &[bool],
        _wait: Wait,
    ) -> Result<Vec<Option<String>>, Error> {
        Ok(vec![from
            .first()
            .copied()
            .unwrap_or(true)
            .then(|| mine.to_string())])
    }
    fn broadcast(
        &mut self,
        _step: u32,
        msg: &str,
        _to: &[bool],
        _deadline: Instant,
    ) -> Result<Option<String>, Error> {
        Ok(Some(msg.to_string()))
    }
    fn end_all(&self, status: u8) -> ! {
        let _ = std::io::Write::flush(&mut std::io::stdout());
        std::process::exit(i32::from(status))
    }
}
