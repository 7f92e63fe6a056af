//! The MPI bootstrap: barriers and reductions over the world communicator (also when the run
//! is split into groups, as nccl-tests), each a nonblocking call polled under the `-T`
//! deadline and counted by the [`Tracker`].

use super::nb::{self, Comm, Red, Ty};
use super::track::Tracker;
use crate::bench::job::bootstrap::Bootstrap;
use crate::config::TimeReduce;
use crate::core::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// [`Bootstrap`] over `MPI_COMM_WORLD`.
pub struct MpiBootstrap {
    pub(super) world: Comm,
    pub(super) rank: usize,
    pub(super) size: usize,
    pub(super) timeout: Option<Duration>,
    pub(super) tracker: Arc<Tracker>,
    /// The hang-diagnosis channel's end-of-run mark (with `-T`).
    pub(super) finish: Option<super::oob::Finish>,
}

impl MpiBootstrap {
    /// Runs one step: `post` posts the request on the given buffers, which come back.
    fn step(
        &mut self,
        what: &str,
        bufs: Vec<Vec<u8>>,
        post: impl FnOnce(Comm, &mut [Vec<u8>]) -> Result<nb::Posted, Error>,
    ) -> Result<Vec<Vec<u8>>, Error> {
        let mut bufs = bufs;
        let bytes = bufs.first().map_or(0, |b| b.len() as u64);
        let seq = self.tracker.enter(what, bytes, what);
        let deadline = self.timeout.map(|t| Instant::now() + t);
        let p = post(self.world, &mut bufs)?;
        match nb::complete(vec![p], bufs, deadline)? {
            Ok(bufs) => {
                self.tracker.done(seq);
                Ok(bufs)
            }
            Err(stuck) => Err(Error::Timeout {
                seconds: self.timeout.map_or(0, |t| t.as_secs()),
                what: format!("{} (bootstrap {what}, op {seq})", stuck.what),
            }),
        }
    }

    fn reduce(&mut self, what: &str, v: Vec<u8>, ty: Ty, red: Red) -> Result<Vec<u8>, Error> {
        let out = vec![0u8; v.len()];
        let mut b = self.step(what, vec![v, out], |c, b| {
            let (s, r) = b.split_at_mut(1);
            nb::allreduce(c, &s[0], &mut r[0], ty, red)
        })?;
        Ok(b.pop().unwrap_or_default())
    }

    fn reduce_f64(&mut self, what: &str, v: &[f64], red: Red) -> Result<Vec<f64>, Error> {
        let bytes = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
        let out = self.reduce(what, bytes, Ty::F64, red)?;
        Ok(out
            .chunks_exact(8)
            .map(|c| f64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
            .collect())
    }

    fn reduce_u64(&mut self, what: &str, v: u64, red: Red) -> Result<u64, Error> {
        let out = self.reduce(what, v.to_ne_bytes().to_vec(), Ty::U64, red)?;
        Ok(u64::from_ne_bytes(out.try_into().unwrap_or([0; 8])))
    }
}

impl Bootstrap for MpiBootstrap {
    fn world_rank(&self) -> usize {
        self.rank
    }
    fn world_size(&self) -> usize {
        self.size
    }
    fn barrier(&mut self) -> Result<(), Error> {
        self.step("barrier", vec![], |c, _| nb::barrier(c))
            .map(|_| ())
    }
    /// nccl-tests' `-a`: 0 rank 0's time, 1 the mean (each process measures its local ranks
    /// together, so the mean over processes is the mean over every thread), 2 min, 3 max.
    fn reduce_time(&mut self, local_us: f64, how: TimeReduce) -> Result<f64, Error> {
        let (v, red) = match how {
            TimeReduce::Rank0 => (if self.rank == 0 { local_us } else { 0.0 }, Red::Sum),
            TimeReduce::Mean => (local_us, Red::Sum),
            TimeReduce::Min => (local_us, Red::Min),
            TimeReduce::Max => (local_us, Red::Max),
        };
        let t = self.reduce_f64("time reduction", &[v], red)?[0];
        Ok(match how {
            TimeReduce::Mean => t / self.size as f64,
            _ => t,
        })
    }
    fn sum_u64(&mut self, local: u64) -> Result<u64, Error> {
        self.reduce_u64("count reduction", local, Red::Sum)
    }
    fn max_u64(&mut self, local: u64) -> Result<u64, Error> {
        self.reduce_u64("status reduction", local, Red::Max)
    }
    fn max_f64s(&mut self, local: &[f64]) -> Result<Vec<f64>, Error> {
        self.reduce_f64("per-iteration times", local, Red::Max)
    }
    fn min_u64s(&mut self, local: &[u64]) -> Result<Vec<u64>, Error> {
        let bytes = local.iter().flat_map(|x| x.to_ne_bytes()).collect();
        let out = self.reduce("plan facts", bytes, Ty::U64, Red::Min)?;
        Ok(out
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
            .collect())
    }
    /// Rank 0 says why; every other process finalizes MPI (which returns once every process
    /// has stopped using it, rank 0 included) and then gives rank 0's line time to come out
    /// before exiting, as a launcher that sees a process fail kills the rest.
    fn end(&mut self, status: u8) {
        if let Some(f) = &self.finish {
            f.mark();
        }
        if self.rank == 0 {
            return;
        }
        let _ = std::io::Write::flush(&mut std::io::stdout());
        nb::finalize();
        std::thread::sleep(crate::bench::job::launcher::OTHER_RANKS_WAIT);
        std::process::exit(i32::from(status));
    }
    fn gather_lines(&mut self, local: &[String]) -> Result<Vec<String>, Error> {
        let mine = local.join("\n").into_bytes();
        let width = self.max_u64(mine.len() as u64)? as usize;
        let mut padded = mine.clone();
        padded.resize(width, 0);
        let all = vec![0u8; width * self.size];
        let mut b = self.step("gathered lines", vec![padded, all], |c, b| {
            let (s, r) = b.split_at_mut(1);
            nb::allgather(c, &s[0], &mut r[0])
        })?;
        let all = b.pop().unwrap_or_default();
        if self.rank != 0 || width == 0 {
            return Ok(if self.rank == 0 {
                local.to_vec()
            } else {
                vec![]
            });
        }
        Ok(all
            .chunks(width)
            .flat_map(|c| {
                let end = c.iter().position(|&x| x == 0).unwrap_or(c.len());
                String::from_utf8_lossy(&c[..end])
                    .lines()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect())
    }
}
