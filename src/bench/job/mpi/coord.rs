//! The [`Coordinator`] of an MPI job: messages to and from rank 0 as nonblocking point-to-point
//! sends and receives on the world communicator (a length, then the bytes), each polled until
//! its deadline. A message that does not come in time is given up: its request and buffer are
//! leaked, never freed, since MPI may still write into them (as for every timed-out wait of
//! the MPI module). Rank 0's patience with a late process comes from the hang-diagnosis
//! channel: while the op counter of a missing process still moves, it is working (a slow
//! group), not stuck. `end_all` goes through that channel too, whose threads answer outside
//! MPI, so it also ends a process stuck in a call.

use super::nb::{self, Comm, Posted};
use super::oob::Oob;
use crate::bench::job::coord::{Coordinator, Wait};
use crate::core::error::Error;
use std::time::{Duration, Instant};

/// The largest message accepted (a layout of some hundred thousand ranks).
const MAX_MESSAGE: u64 = 64 << 20;

/// See the module documentation.
pub struct MpiCoordinator<'a> {
    pub(super) world: Comm,
    pub(super) rank: usize,
    pub(super) size: usize,
    pub(super) oob: Option<&'a Oob>,
}

/// The tag of part `k` (0/1: gather length and bytes, 2/3: broadcast) of exchange `step`.
fn tag(step: u32, k: u32) -> i32 {
    // MPI guarantees tags up to 32767; exchanges are numbered in the low thousands.
    i32::try_from(1000 + u64::from(step) * 4 + u64::from(k)).unwrap_or(i32::MAX)
}

/// Tests the posted requests until all completed or `deadline` passed; the slots of completed
/// ones become `None`.
fn poll(posted: &mut [Option<Posted>], deadline: Instant) -> Result<(), Error> {
    loop {
        for slot in posted.iter_mut() {
            if let Some(p) = slot {
                if nb::test(p)? {
                    *slot = None;
                }
            }
        }
        if posted.iter().all(Option::is_none) || Instant::now() >= deadline {
            return Ok(());
        }
        // Oversubscribed jobs (more processes than cores) need the core back.
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Leaks the buffers whose requests are still pending (MPI may write into them later).
fn leak_pending(posted: &[Option<Posted>], bufs: &mut [Vec<u8>]) {
    for (slot, buf) in posted.iter().zip(bufs.iter_mut()) {
        if slot.is_some() {
            std::mem::forget(std::mem::take(buf));
        }
    }
}

impl MpiCoordinator<'_> {
    /// Each process's position in its numbered calls, as the hang channel reports it.
    fn positions(&self) -> Vec<Option<u64>> {
        match self.oob {
            Some(o) => o
                .progress(Duration::from_secs(1))
                .iter()
                .map(|p| p.as_ref().map(|p| p.position()))
                .collect(),
            None => vec![None; self.size],
        }
    }

    /// [`poll`] under `wait`: past `wait.until`, on while a process of `who` whose request is
    /// still pending moved since the last look.
    fn poll_patient(
        &self,
        posted: &mut [Option<Posted>],
        who: &[usize],
        wait: Wait,
    ) -> Result<(), Error> {
        let mut seen = if wait.patience.is_zero() {
            Vec::new()
        } else {
            self.positions()
        };
        let mut until = wait.until.min(wait.at_most);
        loop {
            poll(posted, until)?;
            let missing: Vec<usize> = (0..posted.len())
                .filter(|&i| posted[i].is_some())
                .map(|i| who[i])
                .collect();
            if missing.is_empty() || wait.patience.is_zero() || Instant::now() >= wait.at_most {
                return Ok(());
            }
            let now = self.positions();
            let moved = missing
                .iter()
                .any(|&p| now.get(p).copied().flatten().is_some() && now.get(p) != seen.get(p));
            if !moved {
                return Ok(());
            }
            seen = now;
            until = (Instant::now() + wait.patience).min(wait.at_most);
        }
    }

    /// Sends `msg` to each of `to` (length, then bytes); gives up on a peer that has not taken
    /// it by `deadline`.
    fn send_all(
        &self,
        to: &[usize],
        step: u32,
        k: u32,
        msg: &[u8],
        deadline: Instant,
    ) -> Result<(), Error> {
        let len = (msg.len() as u64).to_le_bytes();
        let mut bufs: Vec<Vec<u8>> = Vec::new();
        for _ in to {
            bufs.push(len.to_vec());
            bufs.push(msg.to_vec());
        }
        let mut posted = Vec::with_capacity(bufs.len());
        for (i, &p) in to.iter().enumerate() {
            posted.push(Some(nb::send(self.world, &bufs[2 * i], p, tag(step, k))?));
            posted.push(Some(nb::send(
                self.world,
                &bufs[2 * i + 1],
                p,
                tag(step, k + 1),
            )?));
        }
        poll(&mut posted, deadline)?;
        leak_pending(&posted, &mut bufs);
        Ok(())
    }

    /// Receives one message from each of `from`; `None` for those not complete in time.
    fn recv_all(
        &self,
        from: &[usize],
        step: u32,
        k: u32,
        wait: Wait,
    ) -> Result<Vec<Option<Vec<u8>>>, Error> {
        let mut lens: Vec<Vec<u8>> = from.iter().map(|_| vec![0u8; 8]).collect();
        let mut posted = Vec::with_capacity(from.len());
        for (i, &p) in from.iter().enumerate() {
            posted.push(Some(nb::recv(self.world, &mut lens[i], p, tag(step, k))?));
        }
        self.poll_patient(&mut posted, from, wait)?;
        // A length is sent right before its bytes.
        let deadline = wait.until.max(Instant::now() + Duration::from_secs(2));
        leak_pending(&posted, &mut lens);
        let mut bodies: Vec<Vec<u8>> = Vec::with_capacity(from.len());
        let mut body_posted: Vec<Option<Posted>> = Vec::with_capacity(from.len());
        for (i, &p) in from.iter().enumerate() {
            let n = match (&posted[i], lens[i].as_slice().try_into()) {
                (None, Ok(b)) => u64::from_le_bytes(b),
                _ => {
                    bodies.push(Vec::new());
                    body_posted.push(None);
                    continue;
                }
            };
            if n > MAX_MESSAGE {
                return Err(Error::Backend(format!(
                    "locate: process {p} announced a message of {n} bytes"
                )));
            }
            bodies.push(vec![0u8; n as usize]);
            let last = bodies.len() - 1;
            body_posted.push(Some(nb::recv(
                self.world,
                &mut bodies[last],
                p,
                tag(step, k + 1),
            )?));
        }
        poll(&mut body_posted, deadline)?;
        leak_pending(&body_posted, &mut bodies);
        Ok((0..from.len())
            .map(|i| {
                (posted[i].is_none() && body_posted[i].is_none() && lens[i].len() == 8)
                    .then(|| std::mem::take(&mut bodies[i]))
            })
            .collect())
    }
}

impl Coordinator for MpiCoordinator<'_> {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn gather(
        &mut self,
        step: u32,
        mine: &str,
        from: &[bool],
        wait: Wait,
    ) -> Result<Vec<Option<String>>, Error> {
        let listed = |p: usize| from.get(p).copied().unwrap_or(false);
        if self.rank != 0 {
            if listed(self.rank) {
                self.send_all(&[0], step, 0, mine.as_bytes(), wait.at_most)?;
            }
            return Ok(Vec::new());
        }
        let peers: Vec<usize> = (1..self.size).filter(|&p| listed(p)).collect();
        let got = self.recv_all(&peers, step, 0, wait)?;
        let mut out: Vec<Option<String>> = vec![None; self.size];
        if listed(0) {
            out[0] = Some(mine.to_string());
        }
        for (p, body) in peers.into_iter().zip(got) {
            out[p] = body.map(|b| String::from_utf8_lossy(&b).into_owned());
        }
        Ok(out)
    }

    fn broadcast(
        &mut self,
        step: u32,
        msg: &str,
        to: &[bool],
        deadline: Instant,
    ) -> Result<Option<String>, Error> {
        if self.rank == 0 {
            let peers: Vec<usize> = (1..self.size)
                .filter(|&p| to.get(p).copied().unwrap_or(false))
                .collect();
            self.send_all(&peers, step, 2, msg.as_bytes(), deadline)?;
            return Ok(Some(msg.to_string()));
        }
        let got = self.recv_all(&[0], step, 2, Wait::until(deadline))?;
        Ok(got
            .into_iter()
            .next()
            .flatten()
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    }

    fn end_all(&self, status: u8) -> ! {
        let _ = std::io::Write::flush(&mut std::io::stdout());
        match self.oob {
            Some(oob) => oob.exit_all(status),
            None => nb::abort(self.world, status),
        }
    }
}
