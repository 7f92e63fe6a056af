//! How the processes of one run find each other: world rank and size, barriers, and the few
//! cross-process reductions a run needs (the machine facts of its plan, times for `-a`,
//! wrong-element counts). A single
//! process is its own world; the MPI bootstrap implements the same trait.

use crate::config::TimeReduce;
use crate::core::error::Error;

/// Cross-process coordination.
pub trait Bootstrap {
    /// This process's rank in the world.
    fn world_rank(&self) -> usize;
    /// Number of processes.
    fn world_size(&self) -> usize;
    /// Blocks until every process arrives.
    fn barrier(&mut self) -> Result<(), Error>;
    /// Combines this process's time with the others' per `-a`.
    fn reduce_time(&mut self, local_us: f64, how: TimeReduce) -> Result<f64, Error>;
    /// Sums a counter over all processes.
    fn sum_u64(&mut self, local: u64) -> Result<u64, Error>;
    /// The maximum of a value over all processes (exit statuses agree through it).
    fn max_u64(&mut self, local: u64) -> Result<u64, Error>;
    /// Element-wise maximum over all processes (`-I` per-iteration times); every process
    /// passes the same length.
    fn max_f64s(&mut self, local: &[f64]) -> Result<Vec<f64>, Error>;
    /// Element-wise minimum over all processes (the machine facts a plan is built from: the
    /// smallest device memory, a capability only where every process has it); every process
    /// passes the same length.
    fn min_u64s(&mut self, local: &[u64]) -> Result<Vec<u64>, Error>;
    /// Every process's lines, in rank order, on the root (others get an empty list).
    fn gather_lines(&mut self, local: &[String]) -> Result<Vec<String>, Error>;
    /// The job stops with `status` on a failure every process agreed on, which the root
    /// reports: from here a closed connection is no sign of a dead process, and a process
    /// other than the root ends quietly (an MPI job's never returns; a stand-in may, and its
    /// caller then returns its error).
    fn end(&mut self, _status: u8) {}
    /// True on the process that prints and writes files.
    fn is_root(&self) -> bool {
        self.world_rank() == 0
    }
}

/// The world of one process.
#[derive(Debug, Default)]
pub struct SingleProcess;

impl Bootstrap for SingleProcess {
    fn world_rank(&self) -> usize {
        0
    }
    fn world_size(&self) -> usize {
        1
    }
    fn barrier(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn reduce_time(&mut self, local_us: f64, _how: TimeReduce) -> Result<f64, Error> {
        Ok(local_us)
    }
    fn sum_u64(&mut self, local: u64) -> Result<u64, Error> {
        Ok(local)
    }
    fn max_u64(&mut self, local: u64) -> Result<u64, Error> {
        Ok(local)
    }
    fn max_f64s(&mut self, local: &[f64]) -> Result<Vec<f64>, Error> {
        Ok(local.to_vec())
    }
    fn min_u64s(&mut self, local: &[u64]) -> Result<Vec<u64>, Error> {
        Ok(local.to_vec())
    }
    fn gather_lines(&mut self, local: &[String]) -> Result<Vec<String>, Error> {
        Ok(local.to_vec())
    }
}
