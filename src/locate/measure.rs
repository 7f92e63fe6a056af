//! One group's measurement on its sub-communicator: buffers of the chosen size, a few warm-up
//! iterations, then timed iterations, each launched and waited for on its own so that every
//! wait is bounded by `-T` and a slow member holds up every iteration of its partners. A
//! process's time for an iteration runs from its launch to the next launch; its sample is the
//! median of those times, robust to a few iterations lost to noise.

use super::sample::Outcome;
use crate::bench::backend::{Backend, Buf, BufPtr, Call, RankArgs};
use crate::core::collective::{Collective, Traffic};
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What every group measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spec {
    /// `all_reduce` or `sendrecv`.
    pub coll: Collective,
    /// Bytes per rank buffer.
    pub bytes: usize,
    /// Untimed iterations first.
    pub warmup: usize,
    /// Timed iterations (every member of a group runs the same number: a member stopping
    /// early would leave its partners waiting for it).
    pub iters: usize,
    /// `-T`: the bound of every wait.
    pub timeout: Duration,
}

impl Spec {
    /// The NCCL count argument of one call (float elements).
    pub fn count(&self) -> usize {
        (self.bytes / DataType::Float.size()).max(1)
    }
}

/// Measures `spec` on `b` (every local rank of `b` takes part); `slow` (test switches only,
/// 1 otherwise) stretches each timed iteration of this process by `slow - 1` times its plain
/// iteration, so that its group runs about `slow` times slower.
pub fn measure(b: &mut dyn Backend, spec: &Spec, slow: f64) -> Outcome {
    match timed(b, spec, slow) {
        Ok(times) => match lower_quartile(times) {
            Some(t) => Outcome::Timed(t),
            None => Outcome::Failed("no timed iteration".into()),
        },
        Err(Error::Timeout { .. }) => Outcome::TimedOut,
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

/// The lower quartile (nearest rank, `sorted[(n-1)/4]`): a fault slows every iteration, while
/// noise (a descheduled process, a neighbour's burst) slows some, and only upwards.
pub fn lower_quartile(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len().saturating_sub(1) / 4).copied()
}

/// The timed iterations' times in microseconds.
fn timed(b: &mut dyn Backend, spec: &Spec, slow: f64) -> Result<Vec<f64>, Error> {
    let (n, local) = (b.info().nranks, b.info().local_ranks);
    let count = spec.count();
    let first = b.info().first_rank;
    let too_big = || Error::usage(format!("locate: {} bytes is too large", spec.bytes));
    // locate reads no alltoallv variables: an alltoallv probe sends nccl-tests' default traffic.
    let traffic = Arc::new(Traffic::default());
    let (mut send, mut recv) = (0, 0);
    for r in first..first + local {
        let (s, v) = spec
            .coll
            .extents(&traffic, count, DataType::Float, r, n)
            .ok_or_else(too_big)?;
        send = send.max(s);
        recv = recv.max(v);
    }
    let elt = DataType::Float.size();
    b.allocate(send * elt, recv * elt)?;
    let at = |buf| BufPtr { buf, offset: 0 };
    let call = Call {
        coll: spec.coll,
        dtype: DataType::Float,
        op: RedOp::Sum,
        root: 0,
        count,
        traffic,
        ranks: vec![
            RankArgs {
                send: at(Buf::Send),
                recv: at(Buf::Recv),
            };
            local
        ],
    };
    let mut times = Vec::with_capacity(spec.iters);
    // The stretch of a slowed process: (slow - 1) times its own plain iteration, taken from
    // the warm-up (which is never stretched). Its own later iterations cannot give it: once
    // it sleeps, its partners are always ready and its calls finish at once.
    let mut plain = Vec::new();
    let mut i = 0;
    loop {
        let t0 = Instant::now();
        b.launch(&call)?;
        b.wait(Some(t0 + spec.timeout))?;
        if i < spec.warmup {
            plain.push(t0.elapsed());
        } else if slow > 1.0 {
            if plain.is_empty() {
                plain.push(t0.elapsed());
            }
            let mut sorted = plain.clone();
            sorted.sort_unstable();
            std::thread::sleep(sorted[sorted.len() / 2].mul_f64(slow - 1.0));
        }
        if i >= spec.warmup {
            times.push(t0.elapsed().as_secs_f64() * 1e6);
        }
        i += 1;
        if times.len() >= spec.iters {
            return Ok(times);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::backend::host::HostBackend;

    fn spec(coll: Collective) -> Spec {
        Spec {
            coll,
            bytes: 64 << 10,
            warmup: 1,
            iters: 5,
            timeout: Duration::from_secs(10),
        }
    }

    #[test]
    fn a_group_is_timed_and_the_slow_switch_stretches_it() {
        for coll in [Collective::AllReduce, Collective::SendRecv] {
            let mut b = HostBackend::new(2).unwrap();
            let Outcome::Timed(t) = measure(&mut b, &spec(coll), 1.0) else {
                panic!("{coll}: not timed")
            };
            assert!(t > 0.0);
            // Stretched 20x: far beyond what noise does to a median of five.
            let Outcome::Timed(slow) = measure(&mut b, &spec(coll), 20.0) else {
                panic!("{coll}: not timed")
            };
            assert!(slow > 2.0 * t, "{coll}: {t} us plain, {slow} us stretched");
        }
    }
}
